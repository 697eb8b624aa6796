// Launch host-cost variants (throwaway).
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
using Clock = std::chrono::steady_clock;
static double usSince(Clock::time_point t, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count() / n;
}
struct Small {
  void* p[24];
};
__global__ void noArgK() {}
__global__ void emptyK(Small) {}
int main() {
  int n = 0;
  cudaGetDeviceCount(&n);
  std::vector<cudaStream_t> st(n), blocking(n);
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking);
    cudaStreamCreate(&blocking[d]);
    noArgK<<<1, 32, 0, st[d]>>>();
    emptyK<<<1, 32, 0, st[d]>>>(Small{});
    cudaDeviceSynchronize();
  }
  const int N = 20000;
  cudaSetDevice(0);
  auto bench = [&](const char* name, auto&& launch) {
    for (int w = 0; w < 2000; ++w) {
      launch();
      if (w % 500 == 499) cudaDeviceSynchronize();
    }
    cudaDeviceSynchronize();
    auto t = Clock::now();
    for (int i = 0; i < N; ++i) {
      launch();
      if (i % 500 == 499) cudaStreamSynchronize(st[0]);
    }
    printf("%-60s %.3f us\n", name, usSince(t, N));
  };
  bench("noArg <<<>>> nonblocking stream", [&] { noArgK<<<1, 32, 0, st[0]>>>(); });
  bench("Small <<<>>> nonblocking stream", [&] { emptyK<<<1, 32, 0, st[0]>>>(Small{}); });
  bench("Small <<<>>> blocking stream", [&] { emptyK<<<1, 32, 0, blocking[0]>>>(Small{}); });
  bench("Small <<<>>> legacy default stream", [&] { emptyK<<<1, 32>>>(Small{}); });
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = 1;
  cfg.blockDim = 32;
  cfg.stream = st[0];
  bench("cudaLaunchKernelEx no attrs", [&] { cudaLaunchKernelEx(&cfg, emptyK, Small{}); });
  cudaFunction_t rf;
  cudaGetFuncBySymbol(&rf, (const void*)emptyK);
  CUfunction f = (CUfunction)rf;
  Small s{};
  void* params[] = {&s};
  bench("cuLaunchKernel", [&] { cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)st[0], params, nullptr); });
  bench("cudaEventRecord", [&] {
    static cudaEvent_t e = [] {
      cudaEvent_t x;
      cudaEventCreateWithFlags(&x, cudaEventDisableTiming);
      return x;
    }();
    cudaEventRecord(e, st[0]);
  });
  // a graph of one kernel per device, launched into stream 0 (forked/joined)
  {
    std::vector<cudaEvent_t> ev(n);
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaEventCreateWithFlags(&ev[d], cudaEventDisableTiming);
    }
    cudaSetDevice(0);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaStreamBeginCapture(st[0], cudaStreamCaptureModeGlobal);
    cudaEventRecord(ev[0], st[0]);
    for (int d = 1; d < n; ++d) cudaStreamWaitEvent(st[d], ev[0], 0);
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      emptyK<<<1, 32, 0, st[d]>>>(Small{});
    }
    for (int d = 1; d < n; ++d) {
      cudaSetDevice(d);
      cudaEventRecord(ev[d], st[d]);
      cudaSetDevice(0);
      cudaStreamWaitEvent(st[0], ev[d], 0);
    }
    cudaSetDevice(0);
    cudaStreamEndCapture(st[0], &g);
    cudaGraphInstantiate(&ge, g, 0);
    bench("graph launch: one kernel per device, all devices", [&] { cudaGraphLaunch(ge, st[0]); });
    cudaGraph_t g1;
    cudaGraphExec_t ge1;
    cudaStreamBeginCapture(st[0], cudaStreamCaptureModeGlobal);
    emptyK<<<1, 32, 0, st[0]>>>(Small{});
    cudaStreamEndCapture(st[0], &g1);
    cudaGraphInstantiate(&ge1, g1, 0);
    bench("graph launch: one kernel one device", [&] { cudaGraphLaunch(ge1, st[0]); });
  }
  // one launching thread per device, in parallel, each N launches; per-set time
  for (int spin = 0; spin < 2; ++spin) {
    std::atomic<int> go{0};
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int d = 0; d < n; ++d)
      threads.emplace_back([&, d] {
        cudaSetDevice(d);
        ready++;
        while (!go.load()) {
        }
        for (int i = 0; i < N; ++i) {
          emptyK<<<1, 32, 0, st[d]>>>(Small{});
          if (i % 500 == 499) cudaStreamSynchronize(st[d]);
        }
      });
    while (ready.load() < n) {
    }
    auto t = Clock::now();
    go = 1;
    for (auto& th : threads) th.join();
    printf("%-60s %.3f us per set of %d\n", "parallel launches, one thread per device", usSince(t, N), n);
  }
  return 0;
}
