// The step barrier of staged plans across processes (src/coll/plan_executor.hpp): one small kernel per rank and
// step. Rank r numbers its barriers on the device (a counter in its own memory, so graph replays advance it), stores
// the number into every peer's flag area -- pinned host memory every process of the world maps, since GPUs
// without peer access reach each other only through the host -- and waits until every peer has stored at least
// the same number into its own area. Every rank runs the same plans, so the numbers stay in step. A wait gives up
// at its deadline or the abort word and records the stall in the rank's CollFailure (step kStepPlanBarrier).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {

struct PlanBarrierArgs {
  unsigned long long* flags[kCollMaxRanks] = {};  ///< rank p's flag area (slot q: rank q's number), device-addressable
  unsigned long long* count = nullptr;            ///< this rank's barriers so far (its device memory, zeroed)
  CollFailure* failure = nullptr;                 ///< this rank's record (mapped host memory)
  const unsigned int* abort = nullptr;            ///< the communicator's abort word (mapped host memory), or null
  unsigned long long timeoutNs = 0;
  int rank = 0;
  int nranks = 0;
  int collective = 0;  ///< peerlink::Collective, for the failure record
  int unused = 0;      // the argument struct has no padding
};

/// Launches the barrier for one rank on `stream` (its GPU current).
void launchPlanBarrier(const PlanBarrierArgs& args, cudaStream_t stream);

namespace detail {
void preloadPlanBarrierKernels();  // plan_barrier.cu
}  // namespace detail

}  // namespace peerlink::kernels
