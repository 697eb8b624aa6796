// Ring broadcast (CollRingArgs): a large broadcast as a chain of stores along the ranks from the root, so
// every byte crosses NVLink as a store and each link carries the data once in one direction (the two-shot
// broadcast has the non-root ranks load from the root: on 4xH200 at 512 MiB 324 GB/s busbw, the ring 353,
// NCCL's ring 358; rounds 27 and 28). Position i = (rank - root) mod n; position i sends to position i + 1.
//
// Rounds and warp roles as coll_ring_device.cuh describes. Work warps: (not the root) wait for the
// predecessor's ready flag of round k, then (not the last) copy the chunk from this rank's source (the
// root: its input; the others: their own output, where the predecessor stored it) into the next rank's
// output. The root copies its input into its own output too when out of place. No end barrier: the last
// rank's kernel ends after every round's flag, and the start of the next ring call (the predecessor waits for
// this rank's: neighborStart) or barrier keeps everyone from storing into a rank's output before it has
// finished this one.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/coll_ring_device.cuh"
#include "kernels/copy_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kCopyUnroll = 4;
constexpr std::size_t kMinChunkBytes = std::size_t{8} << 10;
// Rounds per block aimed at by the reduce kernels and the SM gather: the chain's fill costs n - 1 rounds. On
// 4xH200 (round 32, forced ring) 16 rounds of at least 8 KiB took 79-80 us at 16 MiB against 86 with 8 rounds
// of at least 16 KiB (broadcast and reduce), 238 against 241-250 at 64 MiB, at 32 MiB 134 against 140
// (broadcast) and 141 against 140 (reduce), and the same from 128 MiB; 32 rounds of 4 KiB helped the
// broadcast at 32-64 MiB but cost the reduce 40% at 8 MiB.
constexpr std::size_t kRoundsPerBlock = 16;
// The broadcast aims at 64 rounds of at most 32 KiB. A round of the whole grid, chunk x 132 blocks, takes a
// chunk's time on every block at once, so a chain of n ranks ends n - 2 such rounds after the root's last
// store: with 64 KiB chunks ~23 us each (8.25 MiB at the ring's 372 GB/s). On 4x H100 (round 43 call A,
// forced ring, least squares over 128 MiB - 1 GiB, scripts/coll_fit.py) 64 KiB chunks cost 76.4 us per call
// plus 2.820 us per MiB, 32 KiB 52.0 + 2.834, 16 KiB 46.3 + 2.848, 8 KiB 34.9 + 2.891, 4 KiB 34.3 + 3.118
// (smaller rounds fill sooner and pay their flag and barriers more often): 128 MiB took 404.8-408.5 us in
// 8-16 KiB chunks against 442.8 in 64 KiB (NCCL 405.3), 512 MiB 1503-1506 in 16-32 KiB against 1518 (NCCL
// 1499), 1 GiB 2954 against 2966 (NCCL 2966).
constexpr std::size_t kBroadcastRoundsPerBlock = 64;
constexpr std::size_t kBroadcastMaxChunkBytes = std::size_t{32} << 10;

// Up to `largest` (16-byte multiples), at least 8 KiB unless `largest` is less, aiming at `rounds` rounds per
// block in whole 128-byte lines: on 4x H100 (round 43 call B) a 256 MiB broadcast in chunks of 31776 bytes
// (32 past a line) took 803 us, in 16 or 32 KiB 776-777 (call A) - a chunk that starts mid-line makes each
// warp's 512-byte stores touch five lines, not four.
std::size_t ringChunk(std::size_t bytes, int maxBlocks, std::size_t rounds, std::size_t largest) {
  const std::size_t blocks = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t perRound = bytes / (blocks * rounds) / 128 * 128;
  largest = std::max<std::size_t>(16, largest / 16 * 16);
  return std::min(largest, std::max(std::min(kMinChunkBytes, largest), perRound));
}

// Blocks for `bytes` in chunks of `chunk`, at most `maxBlocks`.
int blocksFor(std::size_t bytes, int maxBlocks, std::size_t chunk) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  return static_cast<int>(std::max<std::size_t>(1, std::min(cap, (bytes + chunk - 1) / chunk)));
}

// setCollTrace's records on this GPU (coll_ring_reduce.cu sets every traced kernel's), or null.
__device__ CollTraceRecord* gCollRingBroadcastTrace = nullptr;

// Work warps: round k waits (thread 0) for the predecessor's ready flag, then copies the chunk from this
// rank's source into the next rank's output (and, on the root out of place, its own).
__device__ void copyRounds(const CollRingArgs& args, RingShared& shared, const RingRounds& rounds,
                           const CollRingChain& chain, CollTraceRecord* trace) {
  const int tid = static_cast<int>(threadIdx.x);
  const bool passes = chain.next >= 0;
  const bool tracing = trace != nullptr && tid == 0;
  if (tracing) trace->startedNs = globalTimerNs();
  std::size_t k = 0;
  for (; rounds.exists(k); ++k) {
    const std::size_t first = chain.offset + rounds.first(k);
    const std::size_t bytes = rounds.size(k);
    if (tid == 0) {
      if (passes) waitForStageBarrier(shared, k);
      if (chain.prev >= 0) {
        ringWait(args.sync, shared, kPhaseRingReady, kStepRingData, chain.prev, rounds.base + k + 1);
      }
    }
    barSync(kBarRingWork, kRingWorkThreads);  // the chunk has arrived (thread 0 acquired it) or the call failed
    if (!ringFailed(shared)) {
      const auto* src = static_cast<const unsigned char*>(args.src) + first;
      if (passes) {
        detail::copyRange<CopyHint::Plain, uint4, kCopyUnroll>(static_cast<unsigned char*>(args.nextDst) + first, src,
                                                               bytes, static_cast<std::size_t>(tid), kRingWorkThreads);
      }
      if (args.localDst != nullptr) {
        detail::copyRange<CopyHint::Plain, uint4, kCopyUnroll>(static_cast<unsigned char*>(args.localDst) + first, src,
                                                               bytes, static_cast<std::size_t>(tid), kRingWorkThreads);
      }
    }
    if (passes) arriveAtStage(shared, k);
  }
  if (tracing) {
    trace->chain = static_cast<int>(blockIdx.x / rounds.blocks);
    trace->finishedNs = globalTimerNs();
    trace->rounds = k;
  }
}

__global__ void __launch_bounds__(kRingThreads, 1) collRingBroadcastKernel(const __grid_constant__ CollRingArgs args) {
  CollTraceRecord* trace = startTrace(gCollRingBroadcastTrace);
  runRing(args.sync, args.chain, args.chains, args.chunkBytes, false, args.neighborStart,
          [&](RingShared& shared, const RingRounds& rounds, const CollRingChain& chain) {
            copyRounds(args, shared, rounds, chain, trace);
          });
}

}  // namespace

std::size_t collRingChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return ringChunk(bytes, maxBlocks, kRoundsPerBlock, maxChunk == 0 ? kCollRingMaxChunkBytes : maxChunk);
}

int collRingBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return blocksFor(bytes, maxBlocks, collRingChunkBytes(bytes, maxBlocks, maxChunk));
}

int collRingChainBlocks(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk) {
  return collRingBlocks(bytes, std::max(1, maxBlocks / std::max(1, chains)), maxChunk);
}

std::size_t collRingBroadcastChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return ringChunk(bytes, maxBlocks, kBroadcastRoundsPerBlock, maxChunk == 0 ? kBroadcastMaxChunkBytes : maxChunk);
}

int collRingBroadcastBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return blocksFor(bytes, maxBlocks, collRingBroadcastChunkBytes(bytes, maxBlocks, maxChunk));
}

void launchCollRingBroadcast(const CollRingArgs& args, int blocks, cudaStream_t stream, const KernelLaunch& launch) {
  detail::launchKernel(collRingBroadcastKernel, blocks, colldev::kRingThreads, stream, args, launch);
}

namespace detail {

void setCollRingBroadcastTrace(CollTraceRecord* records) {
  PEERLINK_CUDA_CHECK(cudaMemcpyToSymbol(gCollRingBroadcastTrace, &records, sizeof(records)));
}

void preloadCollRingKernels() {
  loadKernel(collRingBroadcastKernel, "collRingBroadcastKernel");
}

}  // namespace detail
}  // namespace peerlink::kernels
