// Send/recv waits and signals through the host stages (plan_p2p.cuh).
#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/plan_barrier.cuh"
#include "kernels/plan_p2p.cuh"

namespace peerlink::kernels {
namespace {

// Slots of a rank's flag area (after plan_barrier's numbers and signatures).
__device__ __forceinline__ unsigned long long* readySlot(const PlanP2pArgs& a, int receiver, int sender) {
  return a.flags[receiver] + 2 * kCollMaxRanks + sender;
}
__device__ __forceinline__ unsigned long long* freeSlot(const PlanP2pArgs& a, int sender, int receiver) {
  return a.flags[sender] + 3 * kCollMaxRanks + receiver;
}

__device__ void recordStall(const PlanP2pArgs& a, unsigned long long observed, unsigned long long expected) {
  recordPlanStall(a.failure, expected, observed, expected,
                  colldev::aborted(a.abort) ? PEERLINK_STATUS_REMOTE_ERROR : PEERLINK_STATUS_TIMEOUT, kStepPlanSendRecv,
                  a.peer, 6 /* peerlink::Collective::SendRecv */);
}

__global__ void planP2pKernel(PlanP2pArgs a) {
  unsigned long long* sent = a.counts + a.peer;
  unsigned long long* taken = a.counts + kCollMaxRanks + a.peer;
  unsigned long long observed = 0;
  switch (a.action) {
    case kAwaitFree: {
      const unsigned long long need = a.firstOfPair || *sent == 0 ? *sent : *sent - 1;
      if (!colldev::waitAtLeast(freeSlot(a, a.rank, a.peer), need, a.timeoutNs, a.abort, &observed)) {
        recordStall(a, observed, need);
      }
      return;
    }
    case kSignalReady:
      *sent += 1;
      storeReleaseSys(reinterpret_cast<uint64_t*>(readySlot(a, a.peer, a.rank)), *sent);
      return;
    case kAwaitReady: {
      const unsigned long long need = *taken + 1;
      if (!colldev::waitAtLeast(readySlot(a, a.rank, a.peer), need, a.timeoutNs, a.abort, &observed)) {
        recordStall(a, observed, need);
      }
      return;
    }
    case kSignalFree:
      *taken += 1;
      storeReleaseSys(reinterpret_cast<uint64_t*>(freeSlot(a, a.peer, a.rank)), *taken);
      return;
    default: return;
  }
}

}  // namespace

void launchPlanP2p(const PlanP2pArgs& args, cudaStream_t stream) {
  planP2pKernel<<<1, 1, 0, stream>>>(args);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

namespace detail {

void preloadPlanP2pKernels() {
  loadKernel(planP2pKernel, "planP2pKernel");
}

}  // namespace detail
}  // namespace peerlink::kernels
