// Turning a matched set of calls into kernel launches: the algorithm (chooseAlgorithm, then what this
// build can do with the buffers given), every rank's kernel arguments from the peer pointer table, and one
// launch per rank on its stream. Nothing here blocks, allocates device memory or copies from the host, so
// a set is capturable in a CUDA graph.
#pragma once

#include <string>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"

namespace peerlink::coll {

/// The kernel a collective runs, after chooseAlgorithm and the build's limits.
enum class Kernel { LlOneShot, DirectOneShot, TwoShot, ReduceScatter, Copy };

struct KernelChoice {
  Algorithm algorithm = Algorithm::OneShot;  ///< what the kernel is, in the vocabulary of the plans
  Kernel kernel = Kernel::Copy;
  std::string reason;
};

/// What a call of `collective` with `bytes` per rank runs; `inPlace`: some rank calls it in place.
KernelChoice chooseKernel(const CommState& state, Collective collective, std::size_t bytes, bool inPlace);

/// The peer pointer table of a set: every rank's send and recv as the GPUs address them.
PeerPointerTable peerPointers(const CommState& state, const std::vector<CallArgs>& set);

/// Launches the set (set[r] is rank r's call, already validated and matched) on every rank's stream.
void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set);

/// Launches matched send/recv pairs: one kernel on every rank that takes part (receivers pull).
void launchTransfers(CommState& state, const std::vector<Transfer>& transfers);

}  // namespace peerlink::coll
