// The step barrier of staged plans across processes (src/coll/plan_executor.hpp): one small kernel per rank and
// step. Rank r numbers its barriers on the device (a counter in its own memory, so graph replays advance it), stores
// the number into every peer's flag area -- pinned host memory every process of the world maps, since GPUs
// without peer access reach each other only through the host -- and waits until every peer has stored at least
// the same number into its own area. Every rank runs the same plans, so the numbers stay in step. A wait gives up
// at its deadline or the abort word and records the stall in the rank's CollFailure (step kStepPlanBarrier).
// The first barrier of a plan run also carries the rank's call signature (collective, count, type, op, root):
// a peer whose signature differs called something else, and the rank records that (step kStepPlanCallMismatch)
// where the ranks would otherwise run plans of different data, silently.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/coll_kernels.cuh"
#include "kernels/device_status.cuh"
#if defined(__CUDACC__)
#include "kernels/coll_device.cuh"
#endif

namespace peerlink::kernels {

/// A rank's flag area: slot q holds rank q's barrier number, slot kCollMaxRanks + q its call signature; the next
/// 2 x kCollMaxRanks slots are staged send/recv's (plan_p2p.cuh).
constexpr int kPlanFlagSlots = 4 * kCollMaxRanks;

struct PlanBarrierArgs {
  unsigned long long* flags[kCollMaxRanks] = {};  ///< rank p's flag area (kPlanFlagSlots), device-addressable
  unsigned long long signature = 0;               ///< this rank's call, or 0: nothing to compare
  unsigned long long* count = nullptr;            ///< this rank's barriers so far (its device memory, zeroed)
  CollFailure* failure = nullptr;                 ///< this rank's record (mapped host memory)
  const unsigned int* abort = nullptr;            ///< the communicator's abort word (mapped host memory), or null
  unsigned long long timeoutNs = 0;
  int rank = 0;
  int nranks = 0;
  int collective = 0;  ///< peerlink::Collective, for the failure record
  int unused = 0;      // the argument struct has no padding
};

#if defined(__CUDACC__)
/// Writes a staged plan's stall into the rank's record (plan_barrier.cu, plan_p2p.cu and host_ring.cu), of block
/// `block`: the launch id last, and the time of the stall as that id, above every earlier record of the rank's
/// whichever kernel wrote it.
__device__ __forceinline__ void recordPlanStall(CollFailure* failure, unsigned long long seq,
                                                unsigned long long observed, unsigned long long expected, int status,
                                                int step, int peer, int collective, int block = 0) {
  volatile CollFailure* f = failure;
  f->seq = seq;
  f->observed = observed;
  f->expected = expected;
  f->timeNs = globalTimerNs();
  f->status = status;
  f->step = step;
  f->peer = peer;
  f->block = block;
  f->collective = collective;
  __threadfence_system();
  f->launch = static_cast<unsigned long long>(globalTimerNs());
  __threadfence_system();
}

/// Threads 0..nranks-1's part of step barrier `number` of this rank: thread p stores the number (and the signature,
/// unless 0) into peer p's area, releasing at system scope what this rank stored before, and waits until peer p has
/// stored at least the same number into this rank's (then acquires). A thread that gives up records the stall, the
/// first of its block only (`failed`, shared, zeroed), and returns false.
__device__ __forceinline__ bool meetPlanPeers(const PlanBarrierArgs& args, unsigned long long number, int* failed) {
  const int peer = static_cast<int>(threadIdx.x);
  if (peer >= args.nranks || peer == args.rank) return true;
  if (args.signature != 0) {
    *reinterpret_cast<volatile unsigned long long*>(args.flags[peer] + kCollMaxRanks + args.rank) = args.signature;
  }
  storeReleaseSys(reinterpret_cast<uint64_t*>(args.flags[peer] + args.rank), number);
  unsigned long long observed = 0;
  unsigned long long expected = number;
  int step = kStepPlanBarrier;
  int status = PEERLINK_STATUS_TIMEOUT;
  if (colldev::waitAtLeast(args.flags[args.rank] + peer, number, args.timeoutNs, args.abort, &observed)) {
    if (args.signature == 0) return true;
    observed = *reinterpret_cast<const volatile unsigned long long*>(args.flags[args.rank] + kCollMaxRanks + peer);
    if (observed == args.signature) return true;
    expected = args.signature;
    step = kStepPlanCallMismatch;
    status = PEERLINK_STATUS_INVALID_USAGE;
  } else if (colldev::aborted(args.abort)) {
    status = PEERLINK_STATUS_REMOTE_ERROR;
  }
  if (atomicExch(failed, 1) == 0) {
    recordPlanStall(args.failure, number, observed, expected, status, step, peer, args.collective);
  }
  return false;
}
#endif

/// Launches the barrier for one rank on `stream` (its GPU current).
void launchPlanBarrier(const PlanBarrierArgs& args, cudaStream_t stream);

namespace detail {
void preloadPlanBarrierKernels();  // plan_barrier.cu
}  // namespace detail

}  // namespace peerlink::kernels
