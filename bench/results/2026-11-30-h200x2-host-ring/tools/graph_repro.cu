// A diagnostic for issue 37 (bench/results/2026-11-30-h200x2-host-ring/README.md), built with nvcc -arch=sm_90.
// Does compute-sanitizer crash launching a one-GPU graph after a two-GPU graph, without peerlink?
// usage: graph_repro MODE  (MODE 0: the one-GPU graph alone; 1: after a two-GPU joined graph was launched;
// 2: the same with the two-GPU graph destroyed first; 3: the one-GPU graph captured before the two-GPU one;
// 4 and 5: as 0 and 1 with the one-GPU graph's second kernel launched as a programmatic dependent launch)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(3);                                                                  \
    }                                                                                \
  } while (0)

__global__ void fill(float* p, int n, float v) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v + i;
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? std::atoi(argv[1]) : 1;
  const int n = 1 << 20;
  float* a[2];
  float* staging;
  cudaStream_t s[2], capture;
  for (int d = 0; d < 2; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaMalloc(&a[d], n * sizeof(float)));
    CHECK(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking));
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaMalloc(&staging, n * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));

  auto oneGpu = [&]() {  // thread-local capture on a stream of its own, as peerlink's staged graphs are made
    CHECK(cudaSetDevice(0));
    cudaGraph_t g;
    cudaGraphExec_t e;
    CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    CHECK(cudaMemcpyAsync(staging, a[0], n * sizeof(float), cudaMemcpyDeviceToDevice, capture));
    fill<<<64, 256, 0, capture>>>(staging, n, 2.0f);
    if (mode >= 4) {  // a second kernel allowed to overlap the first (programmatic stream serialization)
      cudaLaunchAttribute overlap = {};
      overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      overlap.val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(64);
      config.blockDim = dim3(256);
      config.stream = capture;
      config.attrs = &overlap;
      config.numAttrs = 1;
      CHECK(cudaLaunchKernelEx(&config, fill, staging, n, 3.0f));
    }
    CHECK(cudaMemcpyAsync(a[0], staging, n * sizeof(float), cudaMemcpyDeviceToDevice, capture));
    CHECK(cudaStreamEndCapture(capture, &g));
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphDestroy(g));
    return e;
  };
  auto twoGpu = [&]() {  // a joined graph over both GPUs, as an application captures ranks on two GPUs
    cudaEvent_t fork, join;
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaSetDevice(1));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], fork, 0));
    fill<<<64, 256, 0, s[0]>>>(a[0], n, 1.0f);
    CHECK(cudaSetDevice(1));
    fill<<<64, 256, 0, s[1]>>>(a[1], n, 1.0f);
    CHECK(cudaEventRecord(join, s[1]));
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamWaitEvent(s[0], join, 0));
    cudaGraph_t g;
    cudaGraphExec_t e;
    CHECK(cudaStreamEndCapture(s[0], &g));
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphDestroy(g));
    return e;
  };
  cudaGraphExec_t first = nullptr;
  if (mode == 3) first = oneGpu();
  cudaGraphExec_t two = mode == 0 || mode == 4 ? nullptr : twoGpu();
  if (two != nullptr) {
    for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(two, s[0]));
    CHECK(cudaStreamSynchronize(s[0]));
    if (mode == 2) CHECK(cudaGraphExecDestroy(two));
  }
  cudaGraphExec_t one = first != nullptr ? first : oneGpu();
  for (int i = 0; i < 3; ++i) {
    std::printf("mode %d: launching the one-GPU graph (%d)\n", mode, i);
    std::fflush(stdout);
    CHECK(cudaGraphLaunch(one, s[0]));
    CHECK(cudaStreamSynchronize(s[0]));
    if (two != nullptr && mode != 2) CHECK(cudaGraphLaunch(two, s[0]));
  }
  CHECK(cudaDeviceSynchronize());
  std::printf("mode %d: done\n", mode);
  return 0;
}
