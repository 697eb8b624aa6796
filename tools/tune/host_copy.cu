// Development tool, not a test: how fast a kernel's threads move data between a GPU and pinned host memory, by the
// kind of load, the loads each thread keeps in flight and the blocks, beside the copy engines over the same bytes in
// the same run. The staged plans' one-kernel run (kernels/plan_run.cu) moves its host traffic this way, and measured
// 24-30 GB/s a direction where the copy engines moved 45-50: this says which of its choices holds it there.
//
// Directions: in (host to GPU), out (GPU to host), both (the two at once, half the blocks each, as a staged step's
// copy to the host and its copy back run; then with more of the blocks on the way in). Loads: cv (ld.global.cv, what
// plan_run must use where a peer may have rewritten host memory since), cg (ld.global.cg: cached in L2 only), ca (a
// plain load). Prints per variant the median time over the iterations and GB/s a direction. Usage: peerlink_host_copy
// [iterations=11] [mib=32]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"
#include "tool_main.hpp"

namespace peerlink {
namespace {

constexpr int kThreads = 512;

enum class Load { Cv, Cg, Ca };

template <Load L>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (L == Load::Cv) return __ldcv(p);
  if constexpr (L == Load::Cg) return __ldcg(p);
  return *p;
}

// Blocks [first, first + blocks) copy `packs` 16-byte packs from src to dst, `Unroll` loads in flight per thread.
template <Load L, int Unroll>
__device__ void copyPart(uint4* dst, const uint4* src, std::size_t packs, int first, int blocks) {
  const std::size_t stride = static_cast<std::size_t>(blocks) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x - first) * kThreads + threadIdx.x;
  for (; i + (Unroll - 1) * stride < packs; i += stride * Unroll) {
    uint4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = load<L>(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < packs; i += stride) dst[i] = load<L>(src + i);
}

// With `backDst` null: every block copies src to dst. Else the first `first` blocks copy src to dst and the others
// backSrc to backDst.
template <Load L, int Unroll>
__global__ void __launch_bounds__(kThreads)
    copyKernel(uint4* dst, const uint4* src, uint4* backDst, const uint4* backSrc, std::size_t packs, int first) {
  const int grid = static_cast<int>(gridDim.x);
  if (backDst == nullptr) {
    copyPart<L, Unroll>(dst, src, packs, 0, grid);
  } else if (static_cast<int>(blockIdx.x) < first) {
    copyPart<L, Unroll>(dst, src, packs, 0, first);
  } else {
    copyPart<L, Unroll>(backDst, backSrc, packs, first, grid - first);
  }
}

using CopyKernel = void (*)(uint4*, const uint4*, uint4*, const uint4*, std::size_t, int);

template <Load L>
CopyKernel kernelFor(int unroll) {
  switch (unroll) {
    case 1: return copyKernel<L, 1>;
    case 2: return copyKernel<L, 2>;
    case 4: return copyKernel<L, 4>;
    default: return copyKernel<L, 8>;
  }
}

CopyKernel kernelFor(Load load, int unroll) {
  if (load == Load::Cv) return kernelFor<Load::Cv>(unroll);
  if (load == Load::Cg) return kernelFor<Load::Cg>(unroll);
  return kernelFor<Load::Ca>(unroll);
}

const char* nameOf(Load load) {
  return load == Load::Cv ? "cv" : load == Load::Cg ? "cg" : "ca";
}

struct Buffers {
  void* host = nullptr;    // pinned: the data going to the GPU
  void* hostIn = nullptr;  // pinned: the data coming from the GPU
  void* device = nullptr;
  void* deviceOut = nullptr;
};

int run(int iterations, std::size_t bytes) {
  Buffers b;
  PEERLINK_CUDA_CHECK(cudaSetDevice(0));
  PEERLINK_CUDA_CHECK(cudaHostAlloc(&b.host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  PEERLINK_CUDA_CHECK(cudaHostAlloc(&b.hostIn, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  PEERLINK_CUDA_CHECK(cudaMalloc(&b.device, bytes));
  PEERLINK_CUDA_CHECK(cudaMalloc(&b.deviceOut, bytes));
  PEERLINK_CUDA_CHECK(cudaMemset(b.device, 1, bytes));
  PEERLINK_CUDA_CHECK(cudaMemset(b.deviceOut, 2, bytes));
  std::memset(b.host, 3, bytes);
  cudaStream_t stream = nullptr;
  cudaStream_t back = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&back, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cudaEvent_t backDone = nullptr;
  PEERLINK_CUDA_CHECK(cudaEventCreate(&start));
  PEERLINK_CUDA_CHECK(cudaEventCreate(&stop));
  PEERLINK_CUDA_CHECK(cudaEventCreateWithFlags(&backDone, cudaEventDisableTiming));
  const std::size_t packs = bytes / 16;
  auto* hostOut = static_cast<uint4*>(b.host);
  auto* hostIn = static_cast<uint4*>(b.hostIn);
  auto* dev = static_cast<uint4*>(b.device);
  auto* devOut = static_cast<uint4*>(b.deviceOut);

  auto timed = [&](auto&& work) {
    return tools::medianOfRounds(iterations, [&] {
      PEERLINK_CUDA_CHECK(cudaEventRecord(start, stream));
      work();
      PEERLINK_CUDA_CHECK(cudaEventRecord(stop, stream));
      PEERLINK_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      return static_cast<double>(ms) * 1000.0;
    });
  };
  auto print = [&](const std::string& what, const char* direction, double us) {
    std::printf("%-28s %-5s %10.1f us %8.1f GB/s a direction\n", what.c_str(), direction, us,
                static_cast<double>(bytes) / us / 1e3);
  };

  std::printf("# %zu MiB a direction, %d iterations, median; pinned host memory, GPU 0\n", bytes >> 20, iterations);
  // The copy engines: one copy, or one each way on two streams.
  print("copy engines", "in",
        timed([&] { PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dev, hostOut, bytes, cudaMemcpyHostToDevice, stream)); }));
  print("copy engines", "out",
        timed([&] { PEERLINK_CUDA_CHECK(cudaMemcpyAsync(hostIn, devOut, bytes, cudaMemcpyDeviceToHost, stream)); }));
  print("copy engines", "both", timed([&] {
          PEERLINK_CUDA_CHECK(cudaEventRecord(backDone, stream));
          PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(back, backDone, 0));
          PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dev, hostOut, bytes, cudaMemcpyHostToDevice, stream));
          PEERLINK_CUDA_CHECK(cudaMemcpyAsync(hostIn, devOut, bytes, cudaMemcpyDeviceToHost, back));
          PEERLINK_CUDA_CHECK(cudaEventRecord(backDone, back));
          PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, backDone, 0));
        }));

  int sms = 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const Load kind : {Load::Cv, Load::Cg, Load::Ca}) {
    for (const int unroll : {1, 4, 8}) {
      for (const int blocks : {8, 32, sms}) {
        const CopyKernel kernel = kernelFor(kind, unroll);
        const std::string what = fmt::format("kernel {} x{} {} blocks", nameOf(kind), unroll, blocks);
        print(what, "in", timed([&] {
                kernel<<<blocks, kThreads, 0, stream>>>(dev, hostOut, nullptr, nullptr, packs, 0);
                PEERLINK_CUDA_CHECK_LAUNCH();
              }));
        print(what, "out", timed([&] {
                kernel<<<blocks, kThreads, 0, stream>>>(hostIn, devOut, nullptr, nullptr, packs, 0);
                PEERLINK_CUDA_CHECK_LAUNCH();
              }));
        print(what, "both", timed([&] {
                kernel<<<blocks, kThreads, 0, stream>>>(dev, hostOut, hostIn, devOut, packs, blocks / 2);
                PEERLINK_CUDA_CHECK_LAUNCH();
              }));
      }
    }
  }
  // Both ways at once with the blocks shared unevenly: loads of host memory wait for their data to come back, stores
  // to it are posted, so the way in may want more of the blocks.
  for (const int blocks : {32, 64, sms}) {
    for (const int percentIn : {50, 62, 75, 87}) {
      const int in = std::max(1, std::min(blocks - 1, blocks * percentIn / 100));
      const CopyKernel kernel = kernelFor(Load::Cv, 4);
      print(fmt::format("kernel cv x4 {} blocks, {} in", blocks, in), "both", timed([&] {
              kernel<<<blocks, kThreads, 0, stream>>>(dev, hostOut, hostIn, devOut, packs, in);
              PEERLINK_CUDA_CHECK_LAUNCH();
            }));
    }
  }
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream));
  PEERLINK_CUDA_CHECK(cudaFreeHost(b.host));
  PEERLINK_CUDA_CHECK(cudaFreeHost(b.hostIn));
  PEERLINK_CUDA_CHECK(cudaFree(b.device));
  PEERLINK_CUDA_CHECK(cudaFree(b.deviceOut));
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  return peerlink::tools::runTool("peerlink_host_copy", [&] {
    if (peerlink::tools::gpusBetween("peerlink_host_copy", 1) == 0) return 2;
    const int iterations = static_cast<int>(peerlink::tools::positionalArg(argc, argv, 1, 11, 1));
    const std::size_t mib = static_cast<std::size_t>(peerlink::tools::positionalArg(argc, argv, 2, 32, 1));
    return peerlink::run(iterations, mib << 20);
  });
}
