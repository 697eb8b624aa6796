// Eager-launch alternatives (throwaway): a cached one-kernel graph per device whose node arguments are
// updated before each launch, against cudaLaunchKernelEx; and one launching thread per device.
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
struct Args {
  void* p[40];
  unsigned long long v[8];
};
__global__ void k(const __grid_constant__ Args a) {
  if (a.v[0] == 12345) *(int*)a.p[0] = 1;
}
int main() {
  int n = 0;
  cudaGetDeviceCount(&n);
  std::vector<cudaStream_t> st(n);
  std::vector<cudaGraphExec_t> exec(n);
  std::vector<cudaGraphNode_t> node(n);
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking);
    Args a{};
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    void* params[] = {&a};
    cudaKernelNodeParams kp{};
    kp.func = (void*)k;
    kp.gridDim = 1;
    kp.blockDim = 32;
    kp.kernelParams = params;
    cudaGraphAddKernelNode(&node[d], g, nullptr, 0, &kp);
    cudaGraphInstantiate(&exec[d], g, 0);
    cudaGraphLaunch(exec[d], st[d]);
    cudaDeviceSynchronize();
  }
  const int N = 20000;
  auto bench = [&](const char* name, auto&& perSet) {
    for (int w = 0; w < 1000; ++w) perSet(w);
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaDeviceSynchronize();
    }
    auto t = Clock::now();
    for (int i = 0; i < N; ++i) {
      perSet(i);
      if (i % 250 == 249)
        for (int d = 0; d < n; ++d) cudaStreamSynchronize(st[d]);
    }
    printf("%-70s %.3f us per set of %d\n", name, usSince(t, N), n);
  };
  bench("cudaLaunchKernelEx, one thread, every device", [&](int i) {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      Args a{};
      a.v[1] = i;
      cudaLaunchConfig_t c{};
      c.gridDim = 1;
      c.blockDim = 32;
      c.stream = st[d];
      cudaLaunchKernelEx(&c, k, a);
    }
  });
  bench("graph: cudaGraphExecKernelNodeSetParams + cudaGraphLaunch, one thread", [&](int i) {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      Args a{};
      a.v[1] = i;
      void* params[] = {&a};
      cudaKernelNodeParams kp{};
      kp.func = (void*)k;
      kp.gridDim = 1;
      kp.blockDim = 32;
      kp.kernelParams = params;
      cudaGraphExecKernelNodeSetParams(exec[d], node[d], &kp);
      cudaGraphLaunch(exec[d], st[d]);
    }
  });
  bench("graph: cudaGraphLaunch only (same arguments), one thread", [&](int) {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaGraphLaunch(exec[d], st[d]);
    }
  });
  // Spinning launcher threads for devices 1..n-1; the caller launches device 0 and waits for the others.
  std::atomic<long> posted{0};
  std::vector<std::atomic<long>> done(n);
  for (auto& x : done) x = 0;
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int d = 1; d < n; ++d)
    workers.emplace_back([&, d] {
      cudaSetDevice(d);
      long seen = 0;
      while (!stop.load(std::memory_order_acquire)) {
        long p = posted.load(std::memory_order_acquire);
        if (p == seen) continue;
        seen = p;
        Args a{};
        a.v[1] = p;
        cudaLaunchConfig_t c{};
        c.gridDim = 1;
        c.blockDim = 32;
        c.stream = st[d];
        cudaLaunchKernelEx(&c, k, a);
        done[d].store(p, std::memory_order_release);
      }
    });
  long seq = 0;
  bench("spinning launcher thread per device, caller launches device 0", [&](int i) {
    ++seq;
    posted.store(seq, std::memory_order_release);
    cudaSetDevice(0);
    Args a{};
    a.v[1] = i;
    cudaLaunchConfig_t c{};
    c.gridDim = 1;
    c.blockDim = 32;
    c.stream = st[0];
    cudaLaunchKernelEx(&c, k, a);
    for (int d = 1; d < n; ++d)
      while (done[d].load(std::memory_order_acquire) != seq) {
      }
  });
  stop = true;
  for (auto& w : workers) w.join();
  return 0;
}
