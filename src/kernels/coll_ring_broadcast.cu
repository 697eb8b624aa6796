// Ring broadcast (CollRingArgs): a large broadcast as a chain of stores along the ranks from the root, so
// every byte crosses NVLink as a store and each link carries the data once in one direction (the two-shot
// broadcast has the non-root ranks load from the root: on 4xH200 at 512 MiB 324 GB/s busbw against NCCL's
// ring at 358, round 27). Position i = (rank - root) mod n; position i sends to position i + 1.
//
// Block b works through rounds; round k moves chunk k * grid + b of the buffer. Two groups of warps run
// independently:
//   copy:   (not the root) wait for the predecessor's ready flag of round k, then (not the last) copy the
//           chunk from this rank's source (the root: its input; the others: their own output, where the
//           predecessor stored it) into the next rank's output, and arrive at round k's stage barrier;
//   signal: after that barrier, release ready = (call << 20) + k + 1 to the next rank (the fence waits for
//           the stores to land while the copy warps go on with round k + 1).
// The root copies its input into its own output too when out of place. No end barrier: the last rank's
// kernel ends after every round's flag, and a rank's start barrier of the next call keeps everyone from
// storing into its output before it has finished this one. Every wait has the call's deadline; after a
// timeout both groups still pass every barrier they share (they only stop waiting and moving data).
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/copy_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kCopyThreads = 480;   // warps 0-14
constexpr int kSignalThreads = 32;  // warp 15
constexpr int kRingThreads = kCopyThreads + kSignalThreads;
constexpr int kCopyUnroll = 4;
constexpr int kStages = 4;      // rounds the copy warps may be ahead of the signal warp (barrier ids)
constexpr int kRoundBits = 20;  // flag value = (call number << kRoundBits) + round + 1
// Named barriers (0 is __syncthreads): the copy warps among themselves, and one per stage from the copy
// warps to the signal warp (reused kStages rounds later, after the signal warp has passed it).
constexpr int kBarCopy = 1;
constexpr int kBarFirstStage = 2;
static_assert(kBarFirstStage + kStages <= 16, "16 named barriers per block");
constexpr std::size_t kMinChunkBytes = std::size_t{16} << 10;
constexpr std::size_t kMaxChunkBytes = std::size_t{64} << 10;

struct RingShared {
  KernelNumbers numbers;
  int failed;                   // a wait timed out (failure recorded): both groups stop waiting and moving data
  unsigned long long signaled;  // rounds whose ready flag the signal warp has released
};

// The rounds of this block: bytes [first(k), first(k) + chunkBytes) of the buffer.
struct RingRounds {
  std::size_t chunkBytes;
  std::size_t bytes;
  unsigned long long base;
  __device__ std::size_t first(std::size_t k) const { return (k * gridDim.x + blockIdx.x) * chunkBytes; }
  __device__ bool exists(std::size_t k) const { return first(k) < bytes; }
};

__device__ void copyRounds(const CollRingArgs& args, RingShared& shared, const RingRounds& rounds) {
  const CollSyncArgs& s = args.sync;
  const int tid = static_cast<int>(threadIdx.x);
  const volatile int& failed = shared.failed;
  for (std::size_t k = 0; rounds.exists(k); ++k) {
    const std::size_t first = rounds.first(k);
    const std::size_t bytes = min(rounds.chunkBytes, rounds.bytes - first);
    if (tid == 0) {
      if (args.nextDst != nullptr) {
        while (*static_cast<volatile unsigned long long*>(&shared.signaled) + kStages <= k) {
        }
      }
      if (args.prev >= 0 && failed == 0) {
        const unsigned long long value = rounds.base + k + 1;
        unsigned long long observed = 0;
        if (!waitAtLeast(flagSlot(s.flags[s.rank], kPhaseRingReady, static_cast<int>(blockIdx.x), args.prev), value,
                         s.timeoutNs, &observed)) {
          recordFailure(s, shared.numbers, kStepRingData, args.prev, observed, value);
          *static_cast<volatile int*>(&shared.failed) = 1;
        }
      }
    }
    barSync(kBarCopy, kCopyThreads);  // the chunk has arrived (thread 0 acquired it) or the call failed
    if (failed == 0) {
      const auto* src = static_cast<const unsigned char*>(args.src) + first;
      if (args.nextDst != nullptr) {
        detail::copyRange<CopyHint::Plain, uint4, kCopyUnroll>(static_cast<unsigned char*>(args.nextDst) + first, src,
                                                               bytes, static_cast<std::size_t>(tid), kCopyThreads);
      }
      if (args.localDst != nullptr) {
        detail::copyRange<CopyHint::Plain, uint4, kCopyUnroll>(static_cast<unsigned char*>(args.localDst) + first, src,
                                                               bytes, static_cast<std::size_t>(tid), kCopyThreads);
      }
    }
    if (args.nextDst != nullptr) {
      // The copies are ordered before the arrival at block scope; the signal warp's release at system scope
      // is cumulative over what the barrier made visible to it.
      __threadfence_block();
      barArrive(kBarFirstStage + static_cast<int>(k % kStages), kCopyThreads + kSignalThreads);
    }
  }
}

__device__ void signalRounds(const CollRingArgs& args, RingShared& shared, const RingRounds& rounds) {
  const CollSyncArgs& s = args.sync;
  const int lane = static_cast<int>(threadIdx.x) - kCopyThreads;
  for (std::size_t k = 0; rounds.exists(k); ++k) {
    barSync(kBarFirstStage + static_cast<int>(k % kStages), kCopyThreads + kSignalThreads);
    if (lane == 0) {
      if (*static_cast<volatile int*>(&shared.failed) == 0) {
        storeReleaseSys(reinterpret_cast<uint64_t*>(
                            flagSlot(s.flags[args.next], kPhaseRingReady, static_cast<int>(blockIdx.x), s.rank)),
                        rounds.base + k + 1);
      }
      *static_cast<volatile unsigned long long*>(&shared.signaled) = k + 1;
    }
    __syncwarp();
  }
}

__global__ void __launch_bounds__(kRingThreads, 1) collRingBroadcastKernel(const __grid_constant__ CollRingArgs args) {
  __shared__ RingShared shared;
  if (threadIdx.x == 0) {
    shared.failed = 0;
    shared.signaled = 0;
  }
  readNumbers(args.sync, &shared.numbers);
  if (blockBarrier(args.sync, shared.numbers, kPhaseStart, kStepStartBarrier, BarrierAt::Start)) {
    const RingRounds rounds{args.chunkBytes, args.bytes, shared.numbers.seq << kRoundBits};
    if (threadIdx.x < kCopyThreads) {
      copyRounds(args, shared, rounds);
    } else if (args.nextDst != nullptr) {
      signalRounds(args, shared, rounds);
    }
  }
  finishKernel(args.sync, shared.numbers);
}

}  // namespace

std::size_t collRingChunkBytes(std::size_t bytes, int maxBlocks) {
  // At least 8 rounds per block where the buffer allows, so the chain's fill (n - 1 rounds) stays small.
  const std::size_t blocks = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t perRound = bytes / (blocks * 8) / 16 * 16;
  return std::min(kMaxChunkBytes, std::max(kMinChunkBytes, perRound));
}

int collRingBlocks(std::size_t bytes, int maxBlocks) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t chunk = collRingChunkBytes(bytes, maxBlocks);
  return static_cast<int>(std::max<std::size_t>(1, std::min(cap, (bytes + chunk - 1) / chunk)));
}

void launchCollRingBroadcast(const CollRingArgs& args, int blocks, cudaStream_t stream, KernelGraph* graph) {
  detail::launchKernel(collRingBroadcastKernel, blocks, kRingThreads, stream, args, graph);
}

namespace detail {

void preloadCollRingKernels() {
  loadKernel(collRingBroadcastKernel, "collRingBroadcastKernel");
}

}  // namespace detail
}  // namespace peerlink::kernels
