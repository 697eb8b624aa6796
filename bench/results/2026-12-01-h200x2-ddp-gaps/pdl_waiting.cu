// Does a kernel launched with programmatic stream serialization (programmatic dependent launch, PDL) behind an
// unmet wait slow the GPU's launches on another, busy stream, as a second stream with work behind a wait does
// (blocked_streams.py)? One GPU: a sleep kernel holds stream A while the host queues N small kernels behind it and
// records an event; stream B waits for the event and queues one kernel launched plainly or with PDL, directly or as a
// replayed graph captured from such a launch, a copy, a memset, an event record, or a one-node graph whose node is
// re-aimed (cudaGraphExecKernelNodeSetParams) before each launch, or a kernel of 132 blocks of 512 threads with a
// 320-byte argument struct; then a second such stream, or not. Prints A's time per kernel, the
// median of 9 rounds per case.
//   nvcc -O2 -arch=sm_90 -o pdl_waiting pdl_waiting.cu && ./pdl_waiting
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cudaError_t status = (call);                                                                     \
    if (status != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

__global__ void sleepKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void addKernel(float* x) {
  x[threadIdx.x] += 1.0f;
}

__global__ void waiterKernel(float* y) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  y[threadIdx.x] *= 1.0f;
}

struct WideArgs {
  float* y;
  unsigned long long pad[39];  // 320 bytes, as a collective kernel's argument struct
};

__global__ void __launch_bounds__(512, 1) wideKernel(const __grid_constant__ WideArgs args) {
  if (threadIdx.x == 0) args.y[blockIdx.x % 1024] *= 1.0f;
}

void launchWaiter(float* y, cudaStream_t stream, bool pdl) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(256);
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  if (pdl) {
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  CHECK(cudaLaunchKernelEx(&config, waiterKernel, y));
}

int main() {
  const int kernels = 400;
  const int rounds = 9;
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
  CHECK(cudaMalloc(&y, 1024 * sizeof(float)));
  CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
  CHECK(cudaMemset(y, 0, 1024 * sizeof(float)));
  cudaStream_t busy;
  CHECK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  std::vector<cudaStream_t> waiting(2);
  for (cudaStream_t& s : waiting) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Graphs of one waiter kernel, plain and PDL, captured on a stream whose previous work is a kernel.
  cudaGraphExec_t graphs[2];
  for (int pdl = 0; pdl < 2; ++pdl) {
    cudaStream_t capture;
    CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    addKernel<<<1, 256, 0, capture>>>(y);
    launchWaiter(y, capture, pdl == 1);
    CHECK(cudaStreamEndCapture(capture, &graph));
    CHECK(cudaGraphInstantiate(&graphs[pdl], graph, 0));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(capture));
  }
  cudaEvent_t start, end, gate;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  CHECK(cudaEventCreateWithFlags(&gate, cudaEventDisableTiming));
  const char* kinds[] = {"plain kernel",
                         "PDL kernel",
                         "graph (plain)",
                         "graph (PDL)",
                         "copy D2D",
                         "memset",
                         "event record",
                         "graph (node re-aimed before each launch)",
                         "132 blocks of 512 threads"};
  const int kindCount = 9;
  WideArgs wide = {};
  wide.y = y;
  // A one-node graph whose kernel node's arguments are set again before each launch, alternating between two
  // buffers (as a library re-aims one graph at each eager call's buffers).
  cudaGraph_t aimedGraph;
  cudaGraphExec_t aimed;
  cudaGraphNode_t aimedNode;
  float* aimedAt[2] = {y, x};
  void* aimedParams[2][1] = {{&aimedAt[0]}, {&aimedAt[1]}};
  cudaKernelNodeParams node = {};
  node.func = reinterpret_cast<void*>(waiterKernel);
  node.gridDim = dim3(1);
  node.blockDim = dim3(256);
  node.kernelParams = aimedParams[0];
  CHECK(cudaGraphCreate(&aimedGraph, 0));
  CHECK(cudaGraphAddKernelNode(&aimedNode, aimedGraph, nullptr, 0, &node));
  CHECK(cudaGraphInstantiate(&aimed, aimedGraph, 0));
  int aimedLaunches = 0;
  float* copyTo = nullptr;
  CHECK(cudaMalloc(&copyTo, 1 << 20));
  cudaEvent_t marker;
  CHECK(cudaEventCreateWithFlags(&marker, cudaEventDisableTiming));
  std::printf("{\"us_per_kernel\": {");
  bool first = true;
  for (int streams = 0; streams <= 2; ++streams) {
    for (int kind = 0; kind < kindCount; ++kind) {
      if (streams == 0 && kind > 0) continue;
      std::vector<float> times;
      for (int round = 0; round < rounds; ++round) {
        CHECK(cudaDeviceSynchronize());
        sleepKernel<<<1, 1, 0, busy>>>(100000000LL);
        CHECK(cudaEventRecord(start, busy));
        for (int k = 0; k < kernels; ++k) addKernel<<<1, 256, 0, busy>>>(x);
        CHECK(cudaEventRecord(end, busy));
        CHECK(cudaEventRecord(gate, busy));
        for (int s = 0; s < streams; ++s) {
          CHECK(cudaStreamWaitEvent(waiting[s], gate, 0));
          if (kind < 2) {
            launchWaiter(y, waiting[s], kind == 1);
          } else if (kind < 4) {
            CHECK(cudaGraphLaunch(graphs[kind - 2], waiting[s]));
          } else if (kind == 4) {
            CHECK(cudaMemcpyAsync(copyTo, y, 1024 * sizeof(float), cudaMemcpyDeviceToDevice, waiting[s]));
          } else if (kind == 5) {
            CHECK(cudaMemsetAsync(copyTo, 0, 1 << 20, waiting[s]));
          } else if (kind == 6) {
            CHECK(cudaEventRecord(marker, waiting[s]));
          } else if (kind == 8) {
            wideKernel<<<132, 512, 0, waiting[s]>>>(wide);
          } else {
            node.kernelParams = aimedParams[++aimedLaunches % 2];
            CHECK(cudaGraphExecKernelNodeSetParams(aimed, aimedNode, &node));
            CHECK(cudaGraphLaunch(aimed, waiting[s]));
          }
        }
        CHECK(cudaDeviceSynchronize());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        times.push_back(ms * 1000.0f / kernels);
      }
      std::sort(times.begin(), times.end());
      std::printf("%s\"%s, %d waiting\": %.3f", first ? "" : ", ", streams == 0 ? "none" : kinds[kind], streams,
                  times[times.size() / 2]);
      first = false;
    }
  }
  std::printf("}}\n");
  return 0;
}
