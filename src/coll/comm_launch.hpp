// Turning a matched set of calls into kernel launches: the kernel (chooseCollective, from the call's size and
// the facts of its buffers), every rank's kernel arguments from the peer pointer table, and one launch per
// rank on its stream. Nothing here blocks, allocates device memory or copies from the host, so
// a set is capturable in a CUDA graph.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"

namespace peerlink::coll {

/// What a call of `collective` with `bytes` per rank runs on this communicator (chooseCollective), remembered
/// per collective (its latest few) so a loop of calls of a few sizes builds no reasons; `inPlace`: some rank calls it
/// in place; `aligned`: every buffer it touches starts on a 16-byte boundary.
const CollectiveChoice& callChoice(CommState& state, Collective collective, std::size_t bytes, Fact inPlace,
                                   Fact aligned);

/// Every rank's send and recv of a set as each local rank's GPU addresses them (kernel_args.hpp reads them). In
/// one process (peer access, UVA) and on the staging windows one table serves every local rank; on registered
/// windows across processes each local rank's GPU reaches another process's buffers through its own mapping of
/// them, so each has its table (registered_calls.hpp).
class SetPointers {
 public:
  /// One table for every local rank: every rank's send and recv as the set gives them.
  explicit SetPointers(const std::vector<CallArgs>& set);
  /// A table per rank (byRank[r] for each local rank r).
  explicit SetPointers(std::vector<PeerPointerTable> byRank) : byRank_(std::move(byRank)) {}
  const PeerPointerTable& of(int rank) const {
    return byRank_.empty() ? everyRank_ : byRank_[static_cast<std::size_t>(rank)];
  }

 private:
  PeerPointerTable everyRank_;
  std::vector<PeerPointerTable> byRank_;  // empty: everyRank_ for every rank
};

/// Which buffers of a set this process knows: every rank's (one process, or the staging windows), or only its
/// local ranks' (ranks of other processes are stand-ins without buffers).
enum class SetReach { EveryBuffer, LocalBuffers };

/// The facts of a set every rank agrees on: where this process knows every buffer, whether some rank calls
/// it in place and whether every buffer is 16-byte aligned; where it knows its own only, Unknown (the choice
/// then takes what is safe either way, and every rank makes the same).
Fact setInPlace(const std::vector<CallArgs>& set, SetReach reach);
Fact setAligned(const std::vector<CallArgs>& set, SetReach reach);

/// Launches the set (set[r] is rank r's call, already validated and matched) on every local rank's stream;
/// `capturing`: the streams are being captured into a graph (else the launches go through each rank's
/// eager KernelGraph, the cheaper way on the host). With LocalBuffers the chosen kernel must touch no peer's
/// buffers (the LL kernels); the caller stages any other (comm_launch_staged.hpp).
void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set, bool capturing,
                         SetReach reach = SetReach::EveryBuffer);
/// The same with every rank's buffers as each local rank's GPU addresses them given apart (`pointers`; the
/// choice's facts still come from `set`, which holds every rank's buffers as some local rank addresses them).
void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                         bool capturing);

/// Launches matched send/recv pairs: one kernel on every rank that takes part -- for small groups
/// (callChoice: Kernel::LlPairs) the senders' LL lines (comm_launch_p2p_ll.hpp), else the receivers pull between
/// barriers -- or for large groups (Kernel::CeCopy) the senders' copy engines between two barrier kernels.
void launchSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs);

}  // namespace peerlink::coll
