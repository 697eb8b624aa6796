// Stalls reported by the collective kernels (CollFailure records in mapped host memory) turned into
// errors: read without synchronizing anything, so every call can check first.
#pragma once

#include <optional>
#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// One rank's stall record as throwIfFailed reads it.
struct StallReport {
  int rank = 0;
  kernels::CollFailure record{};
};

/// The error throwIfFailed throws for `reports` (records of this process's ranks, in any order): InvalidUsage where a
/// staged plan's ranks made different calls; else RemoteError where every record says the communicator was aborted,
/// Timeout otherwise, naming each record earliest first; where a ring's wait is among them, a note that the rank
/// named may itself be waiting for another. Pure.
Error stallError(const CommState& state, std::vector<StallReport> reports);

/// Throws Error(Timeout) when a kernel of any rank reported a stalled peer since the last report, naming
/// for each record the collective, its sequence number, the rank (GPU) that gave up, the rank it waited
/// for, the step and the flag values, earliest first (the earliest is the likely cause; later ones are
/// often its echo). Each record is reported once.
void throwIfFailed(CommState& state);

/// The latest failure a kernel reported, whether or not a call has thrown it already: once one is reported it is
/// returned until the communicator is destroyed (as NCCL's ncclCommGetAsyncError keeps its error). Takes only the
/// failure records' lock, never the communicator's.
std::optional<Error> lastFailure(CommState& state);

}  // namespace peerlink::coll
