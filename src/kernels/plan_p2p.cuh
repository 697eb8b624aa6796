// The waits and signals of send/recv through the host stages (src/coll/staged_p2p.hpp): one-thread kernels on the
// rank's stream around the copies. A pair's counts live in each rank's GPU memory (graph replays advance them) and
// are published into the peer's flag area in host memory (plan_barrier.cuh's, slots 2-3 x kCollMaxRanks). A wait
// gives up at its deadline or the abort word and records the stall (step kStepPlanSendRecv).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {

enum PlanP2pAction : int {
  kAwaitFree = 0,    ///< sender: until the receiver has taken every chunk but the last (the pair's first: every one)
  kSignalReady = 1,  ///< sender: one more chunk in the slot
  kAwaitReady = 2,   ///< receiver: until the sender has put the next chunk
  kSignalFree = 3,   ///< receiver: one more chunk taken
};

struct PlanP2pArgs {
  unsigned long long* flags[kCollMaxRanks] = {};  ///< rank p's flag area, device-addressable
  unsigned long long* counts = nullptr;  ///< this rank's: [p] chunks sent to p, [kCollMaxRanks + p] taken from p
  CollFailure* failure = nullptr;
  const unsigned int* abort = nullptr;
  unsigned long long timeoutNs = 0;
  int rank = 0;
  int peer = 0;
  int action = 0;       ///< a PlanP2pAction
  int firstOfPair = 0;  ///< kAwaitFree: the pair's first chunk of the group
};

void launchPlanP2p(const PlanP2pArgs& args, cudaStream_t stream);

namespace detail {
void preloadPlanP2pKernels();  // plan_p2p.cu
}  // namespace detail

}  // namespace peerlink::kernels
