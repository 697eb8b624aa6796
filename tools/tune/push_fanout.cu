// Development tool, not a test: how fast SM stores leave a GPU that pushes to all of its peers at once, by how
// a kernel spreads its stores over the destinations. Every GPU at once sends `mib` MiB to each peer (its
// buffer, stored into the peer's receive slot for this sender), so every port carries n - 1 flows out and
// n - 1 in, as the two-phase push all-reduce's phases and the all-gather's SM kernel do. Written for round 54:
// the push all-reduce moved ~352 GB/s a direction where two GPUs pushing both ways reach ~365 (round 6).
//
// Layouts (each thread moves 16-byte packs, `unroll` loads in flight before its stores):
//   pack:   every pack of the walk goes to every peer in turn (the all-gather kernel's and the push's way);
//   block:  a block serves one peer (block b: peer b mod (n - 1)), so each SM's stores have one destination;
//   chunk:  the walk is cut in 64 KiB chunks, consecutive chunks of a block going to consecutive peers;
//   warp:   within a block, warp w stores to peer w mod (n - 1);
//   ce:     no kernel: the GPU's copy engines, one cudaMemcpyAsync per peer, one after another on one stream
//           (the next peer first: the copy-engine collectives' way, comm_launch_copy_engine.cc);
//   ce-streams: the same copies side by side, each on a stream of its own (round 55 call A: 1.6x ce's time
//           at 8 MiB per peer, as round 42 found for the all-gather);
//   mix:    `ce_share` percent of every peer's bytes by ce's copies, the rest at once by the block layout's
//           kernel (round 55: whether the copy engines' ~388 GB/s out of a port would lift a push phase that
//           SM stores hold at ~352).
// Prints per layout the slowest GPU's time from a latch to its kernel's end (events; median over the
// iterations) and the bytes per second that makes out of one GPU.
// Usage: peerlink_push_fanout [iterations=11] [mib=64] [blocks=0 (every SM)] [ce_share=50 (percent, mix)]
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/device_status.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/latch_kernel.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "tool_main.hpp"
#include "transport/peer_access.hpp"

namespace peerlink {
namespace {

constexpr std::uint64_t kLatchTimeoutNs = 5'000'000'000ull;
constexpr int kThreads = 512;
constexpr int kUnroll = 2;
constexpr int kMaxPeers = 7;
constexpr std::size_t kChunkPacks = (64 << 10) / 16;

enum class Layout { Pack, Block, Chunk, Warp, Ce, CeStreams, Mix };

struct FanoutArgs {
  const uint4* src = nullptr;
  uint4* dst[kMaxPeers] = {};
  int peers = 0;
  std::size_t packs = 0;  // per peer
};

__device__ __forceinline__ void copyPacks(const FanoutArgs& a, int peer, std::size_t first, std::size_t stride,
                                          std::size_t end, std::size_t step) {
  for (std::size_t p = first; p < end; p += stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (p + u * step < end) v[u] = a.src[p + u * step];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (p + u * step < end) a.dst[peer][p + u * step] = v[u];
    }
  }
}

template <Layout L>
__global__ void __launch_bounds__(kThreads, 1) fanoutKernel(const __grid_constant__ FanoutArgs a) {
  const std::size_t tid = threadIdx.x;
  if constexpr (L == Layout::Pack) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads * kUnroll;
    for (std::size_t p = blockIdx.x * static_cast<std::size_t>(kThreads) * kUnroll + tid; p < a.packs; p += stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (p + u * kThreads < a.packs) v[u] = a.src[p + u * kThreads];
      }
      for (int k = 0; k < a.peers; ++k) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (p + u * kThreads < a.packs) a.dst[k][p + u * kThreads] = v[u];
        }
      }
    }
  } else if constexpr (L == Layout::Block) {
    const int peer = static_cast<int>(blockIdx.x) % a.peers;
    const std::size_t blocks = (gridDim.x - static_cast<unsigned>(peer) + a.peers - 1) / a.peers;  // this peer's
    const std::size_t index = blockIdx.x / a.peers;
    copyPacks(a, peer, index * kThreads * kUnroll + tid, blocks * kThreads * kUnroll, a.packs, kThreads);
  } else if constexpr (L == Layout::Chunk) {
    const std::size_t chunks = (a.packs + kChunkPacks - 1) / kChunkPacks * a.peers;
    for (std::size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
      const int peer = static_cast<int>(c % a.peers);
      const std::size_t begin = c / a.peers * kChunkPacks;
      const std::size_t end = begin + kChunkPacks < a.packs ? begin + kChunkPacks : a.packs;
      copyPacks(a, peer, begin + tid, static_cast<std::size_t>(kThreads) * kUnroll, end, kThreads);
    }
  } else {
    const int warp = static_cast<int>(tid / 32);
    const int peer = warp % a.peers;
    const std::size_t warpsOfPeer = (kThreads / 32 - peer + a.peers - 1) / a.peers;
    const std::size_t lane = tid % 32 + static_cast<std::size_t>(warp / a.peers) * 32;  // index among its warps
    const std::size_t team = warpsOfPeer * 32;
    copyPacks(a, peer, blockIdx.x * team * kUnroll + lane, static_cast<std::size_t>(gridDim.x) * team * kUnroll,
              a.packs, team);
  }
}

struct Gpu {
  int device = 0;
  int sms = 0;
  DeviceBuffer send;
  DeviceBuffer recv;  // one slot of `bytes` per sender
  Stream stream;
  Event start;
  Event end;
  Event forked;                // recorded after `start`, where the copy streams begin
  std::vector<Stream> copies;  // the copy engines' streams: the first for ce and mix, one per peer for ce-streams
  std::vector<Event> copied;
};

const char* layoutName(Layout layout) {
  switch (layout) {
    case Layout::Pack: return "pack";
    case Layout::Block: return "block";
    case Layout::Chunk: return "chunk";
    case Layout::Warp: return "warp";
    case Layout::Ce: return "ce";
    case Layout::CeStreams: return "ce-streams";
    case Layout::Mix: return "mix";
  }
  return "?";
}

void launch(Layout layout, const FanoutArgs& args, int blocks, cudaStream_t stream) {
  switch (layout) {
    case Layout::Pack: fanoutKernel<Layout::Pack><<<blocks, kThreads, 0, stream>>>(args); break;
    case Layout::Block: fanoutKernel<Layout::Block><<<blocks, kThreads, 0, stream>>>(args); break;
    case Layout::Chunk: fanoutKernel<Layout::Chunk><<<blocks, kThreads, 0, stream>>>(args); break;
    case Layout::Warp: fanoutKernel<Layout::Warp><<<blocks, kThreads, 0, stream>>>(args); break;
    case Layout::Mix: fanoutKernel<Layout::Block><<<blocks, kThreads, 0, stream>>>(args); break;
    case Layout::Ce:
    case Layout::CeStreams: return;
  }
  PEERLINK_CUDA_CHECK(cudaGetLastError());
}

// The slowest GPU's microseconds from its latch's release to its kernel's end, for one round.
double oneRound(std::vector<Gpu>& gpus, std::size_t bytes, Layout layout, int blocks, int ceShare,
                volatile std::uint64_t* flag, kernels::DeviceStatus* statuses) {
  const int n = static_cast<int>(gpus.size());
  const bool ceOnly = layout == Layout::Ce || layout == Layout::CeStreams;
  const int cePercent = ceOnly ? 100 : layout == Layout::Mix ? ceShare : 0;
  const std::size_t streams = layout == Layout::CeStreams ? static_cast<std::size_t>(n - 1) : 1;
  const std::size_t ceBytes = bytes / 100 * static_cast<std::size_t>(cePercent) / 4096 * 4096;
  const std::size_t smBytes = cePercent == 100 ? 0 : bytes - ceBytes;
  *flag = 0;
  for (int r = 0; r < n; ++r) {
    Gpu& gpu = gpus[static_cast<std::size_t>(r)];
    DeviceGuard guard(gpu.device);
    FanoutArgs args;
    args.src = static_cast<const uint4*>(gpu.send.data());
    args.packs = smBytes / 16;
    for (int k = 1; k < n; ++k) {  // the peers in ring order after this GPU, into their slot for it
      const Gpu& to = gpus[static_cast<std::size_t>((r + k) % n)];
      args.dst[args.peers++] = reinterpret_cast<uint4*>(static_cast<char*>(to.recv.data()) + bytes * r);
    }
    statuses[r] = kernels::pendingStatus();
    kernels::launchLatch(flag, kLatchTimeoutNs, &statuses[r], gpu.stream.get());
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.start.get(), gpu.stream.get()));
    if (smBytes < bytes) {  // the copy engines' share: the tail of every peer's slot
      PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.forked.get(), gpu.stream.get()));
      for (int k = 0; k < n - 1; ++k) {
        const std::size_t index = static_cast<std::size_t>(k) % streams;
        const cudaStream_t side = gpu.copies[index].get();
        if (k < static_cast<int>(streams)) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(side, gpu.forked.get(), 0));
        PEERLINK_CUDA_CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(args.dst[k]) + smBytes,
                                            static_cast<const char*>(gpu.send.data()) + smBytes, bytes - smBytes,
                                            cudaMemcpyDeviceToDevice, side));
      }
      for (std::size_t index = 0; index < streams; ++index) {
        PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.copied[index].get(), gpu.copies[index].get()));
      }
    }
    if (smBytes > 0) launch(layout, args, blocks > 0 ? blocks : gpu.sms, gpu.stream.get());
    if (smBytes < bytes) {
      for (std::size_t index = 0; index < streams; ++index) {
        PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(gpu.stream.get(), gpu.copied[index].get(), 0));
      }
    }
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.end.get(), gpu.stream.get()));
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag = 1;
  double slowest = 0;
  for (int r = 0; r < n; ++r) {
    Gpu& gpu = gpus[static_cast<std::size_t>(r)];
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(gpu.end.get()));
    kernels::throwIfDeviceFailed(statuses[r], "latch");
    float ms = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, gpu.start.get(), gpu.end.get()));
    slowest = std::max(slowest, static_cast<double>(ms) * 1000.0);
  }
  return slowest;
}

int run(int iterations, std::size_t bytes, int blocks, int ceShare) {
  const int count = tools::gpusBetween("peerlink_push_fanout", 2, kMaxPeers + 1);
  if (count == 0) return 2;
  PeerAccessTable peers;
  std::vector<Gpu> gpus;
  for (int d = 0; d < count; ++d) {
    DeviceGuard guard(d);
    for (int p = 0; p < count; ++p) peers.enable(d, p);
    Gpu gpu{d,
            0,
            DeviceBuffer(d, bytes),
            DeviceBuffer(d, bytes * static_cast<std::size_t>(count)),
            Stream(d),
            Event(d),
            Event(d),
            Event(d, cudaEventDisableTiming),
            {},
            {}};
    for (int k = 0; k + 1 < count; ++k) {
      gpu.copies.emplace_back(d);
      gpu.copied.emplace_back(d, cudaEventDisableTiming);
    }
    PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&gpu.sms, cudaDevAttrMultiProcessorCount, d));
    // Loaded now: a first launch behind the spinning latch would wait for it (kernel_preload.cuh).
    kernels::ensureKernelsLoaded();
    kernels::detail::loadKernel(fanoutKernel<Layout::Pack>, "fanoutKernel<Pack>");
    kernels::detail::loadKernel(fanoutKernel<Layout::Block>, "fanoutKernel<Block>");
    kernels::detail::loadKernel(fanoutKernel<Layout::Chunk>, "fanoutKernel<Chunk>");
    kernels::detail::loadKernel(fanoutKernel<Layout::Warp>, "fanoutKernel<Warp>");
    gpus.push_back(std::move(gpu));
  }
  PinnedBuffer flagMemory(sizeof(std::uint64_t), cudaHostAllocMapped | cudaHostAllocPortable);
  PinnedBuffer statusMemory(sizeof(kernels::DeviceStatus) * gpus.size(), cudaHostAllocMapped | cudaHostAllocPortable);
  auto* flag = static_cast<volatile std::uint64_t*>(flagMemory.data());
  auto* statuses = static_cast<kernels::DeviceStatus*>(statusMemory.data());
  fmt::print("{} GPUs, each pushing {} MiB to each of its {} peers at once; slowest GPU, median of {} rounds\n", count,
             bytes >> 20, count - 1, iterations);
  fmt::print("{:>8} {:>7} {:>10} {:>10}\n", "layout", "blocks", "us", "GB/s out");
  for (int round = 0; round < 2; ++round) {  // twice, so drift between layouts shows
    for (Layout layout :
         {Layout::Pack, Layout::Block, Layout::Chunk, Layout::Warp, Layout::Ce, Layout::CeStreams, Layout::Mix}) {
      const double median = tools::medianOfRounds(
          iterations, [&] { return oneRound(gpus, bytes, layout, blocks, ceShare, flag, statuses); });
      const std::string name = layout == Layout::Mix ? fmt::format("mix{}", ceShare) : std::string(layoutName(layout));
      fmt::print("{:>8} {:>7} {:>10.1f} {:>10.1f}\n", name, blocks > 0 ? std::to_string(blocks) : std::string("all"),
                 median, static_cast<double>(bytes) * (count - 1) / (median * 1e3));
    }
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  using peerlink::tools::positionalArg;
  const auto iterations = static_cast<int>(positionalArg(argc, argv, 1, 11, 1));
  const auto mib = static_cast<std::size_t>(positionalArg(argc, argv, 2, 64, 1));
  const auto blocks = static_cast<int>(positionalArg(argc, argv, 3, 0, 0));
  const auto ceShare = static_cast<int>(std::min(100L, positionalArg(argc, argv, 4, 50, 0)));
  return peerlink::tools::runTool("peerlink_push_fanout",
                                  [&] { return peerlink::run(iterations, mib << 20, blocks, ceShare); });
}
