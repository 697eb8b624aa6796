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
// this rank's: neighborStart) or the next kernel's barrier keeps everyone from storing into a rank's output
// before it has finished this one.
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
  runRing(args.sync, args.chain, args.chains, args.chunkBytes, false,
          [&](RingShared& shared, const RingRounds& rounds, const CollRingChain& chain) {
            copyRounds(args, shared, rounds, chain, trace);
          });
}

}  // namespace

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
