// Host-cost and launch-gap microbenchmark (throwaway, for tuning the communicator's eager path).
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                      \
    }                                                \
  } while (0)
using Clock = std::chrono::steady_clock;
static double usSince(Clock::time_point t, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count() / n;
}
struct Big {
  char bytes[1400];
};
struct Small {
  void* p[24];
};
__global__ void emptyK(Small) {}
__global__ void bigK(Big) {}
__global__ void pdlK(Small) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
}
__global__ void pdlEarlyK(Small) {
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
int main() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  std::vector<void*> buf(n);
  std::vector<cudaStream_t> st(n);
  for (int d = 0; d < n; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaMalloc(&buf[d], 1 << 20));
    CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    emptyK<<<1, 32, 0, st[d]>>>(Small{});
    bigK<<<1, 32, 0, st[d]>>>(Big{});
    pdlK<<<1, 32, 0, st[d]>>>(Small{});
    pdlEarlyK<<<1, 32, 0, st[d]>>>(Small{});
    CK(cudaDeviceSynchronize());
  }
  CK(cudaSetDevice(0));
  const int N = 20000;
  cudaPointerAttributes a;
  auto t = Clock::now();
  for (int i = 0; i < N; ++i) cudaPointerGetAttributes(&a, buf[i % n]);
  printf("cudaPointerGetAttributes %.3f us\n", usSince(t, N));
  unsigned long long id;
  t = Clock::now();
  for (int i = 0; i < N; ++i) cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)buf[i % n]);
  printf("cuPointerGetAttribute(BUFFER_ID) %.3f us\n", usSince(t, N));
  cudaStreamCaptureStatus cs;
  t = Clock::now();
  for (int i = 0; i < N; ++i) cudaStreamIsCapturing(st[i % n], &cs);
  printf("cudaStreamIsCapturing %.3f us\n", usSince(t, N));
  int dev;
  t = Clock::now();
  for (int i = 0; i < N; ++i) cudaStreamGetDevice(st[i % n], &dev);
  printf("cudaStreamGetDevice %.3f us\n", usSince(t, N));
  t = Clock::now();
  for (int i = 0; i < N; ++i) cudaGetDevice(&dev);
  printf("cudaGetDevice %.3f us\n", usSince(t, N));
  t = Clock::now();
  for (int i = 0; i < N; ++i) cudaSetDevice(i % n);
  printf("cudaSetDevice alternating %.3f us\n", usSince(t, N));
  t = Clock::now();
  for (int i = 0; i < N; ++i) cudaGetLastError();
  printf("cudaGetLastError %.3f us\n", usSince(t, N));
  // launches: one per device round-robin, synchronizing every 1000
  for (int pass = 0; pass < 2; ++pass) {
    const char* names[] = {"empty<<<1,32>>> small args (192 B)", "1400 B args"};
    t = Clock::now();
    for (int i = 0; i < N; ++i) {
      int d = i % n;
      cudaSetDevice(d);
      if (pass == 0)
        emptyK<<<1, 32, 0, st[d]>>>(Small{});
      else
        bigK<<<1, 32, 0, st[d]>>>(Big{});
      if (i % 1000 == 999)
        for (int e = 0; e < n; ++e) cudaStreamSynchronize(st[e]);
    }
    printf("launch %s round-robin incl setDevice: %.3f us/launch\n", names[pass], usSince(t, N));
  }
  {  // same device only
    cudaSetDevice(0);
    t = Clock::now();
    for (int i = 0; i < N; ++i) {
      emptyK<<<1, 32, 0, st[0]>>>(Small{});
      if (i % 1000 == 999) cudaStreamSynchronize(st[0]);
    }
    printf("launch empty one device: %.3f us/launch\n", usSince(t, N));
  }
  {  // cudaLaunchKernelEx with PDL
    cudaSetDevice(0);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = 1;
    cfg.blockDim = 32;
    cfg.stream = st[0];
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    t = Clock::now();
    for (int i = 0; i < N; ++i) {
      cudaLaunchKernelEx(&cfg, pdlK, Small{});
      if (i % 1000 == 999) cudaStreamSynchronize(st[0]);
    }
    printf("launch cudaLaunchKernelEx PDL one device: %.3f us/launch\n", usSince(t, N));
  }
  // Device-side per-kernel time in a graph of 200 kernels per device (all devices in one graph, like the joined
  // capture).
  for (int mode = 0; mode < 4; ++mode) {
    const char* names[] = {"graph empty kernel", "graph PDL kernel (wait then trigger)",
                           "graph PDL kernel (trigger then wait)", "stream loop empty kernel (device time)"};
    const int K = 200;
    cudaGraph_t g;
    cudaGraphExec_t ge = nullptr;
    std::vector<cudaEvent_t> ev(n);
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaEventCreateWithFlags(&ev[d], cudaEventDisableTiming);
    }
    cudaSetDevice(0);
    if (mode < 3) {
      CK(cudaStreamBeginCapture(st[0], cudaStreamCaptureModeGlobal));
      cudaEventRecord(ev[0], st[0]);
      for (int d = 1; d < n; ++d) cudaStreamWaitEvent(st[d], ev[0], 0);
      for (int d = 0; d < n; ++d) {
        cudaSetDevice(d);
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = 1;
        cfg.blockDim = 32;
        cfg.stream = st[d];
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        for (int k = 0; k < K; ++k) {
          if (mode == 0)
            emptyK<<<1, 32, 0, st[d]>>>(Small{});
          else
            CK(cudaLaunchKernelEx(&cfg, mode == 1 ? pdlK : pdlEarlyK, Small{}));
        }
      }
      for (int d = 1; d < n; ++d) {
        cudaSetDevice(d);
        cudaEventRecord(ev[d], st[d]);
        cudaSetDevice(0);
        cudaStreamWaitEvent(st[0], ev[d], 0);
      }
      cudaSetDevice(0);
      CK(cudaStreamEndCapture(st[0], &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphLaunch(ge, st[0]));
      CK(cudaStreamSynchronize(st[0]));
    }
    cudaEvent_t a0, b0;
    cudaSetDevice(0);
    cudaEventCreate(&a0);
    cudaEventCreate(&b0);
    float best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      cudaSetDevice(0);
      cudaEventRecord(a0, st[0]);
      if (mode < 3)
        cudaGraphLaunch(ge, st[0]);
      else
        for (int k = 0; k < K; ++k) emptyK<<<1, 32, 0, st[0]>>>(Small{});
      cudaEventRecord(b0, st[0]);
      cudaEventSynchronize(b0);
      float ms;
      cudaEventElapsedTime(&ms, a0, b0);
      if (ms < best) best = ms;
    }
    printf("%s: %.3f us per kernel\n", names[mode], best * 1000 / K);
  }
  return 0;
}
