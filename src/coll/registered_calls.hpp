// Calls of a world that spans processes whose buffers lie in registered windows (user_windows.hpp): the peers'
// buffers are their windows' bases plus this rank's offsets, so the set runs any kernel on the callers' own
// buffers, with no staging copies. A process that drives several ranks gives each its own table: each GPU
// reaches another process's windows through its own mapping of them (window_mappings.hpp).
#pragma once

#include <optional>
#include <vector>

#include "coll/comm_launch.hpp"
#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// A copy on one local rank's stream before the kernel.
struct LocalCopy {
  int rank = -1;
  void* to = nullptr;
  const void* from = nullptr;
  std::size_t bytes = 0;
};

/// The local ranks' calls as the registered path reads them, from the buffers every rank uses: the choice of path
/// must follow from what every rank knows, or the root would go one way and the others another, to meet only at
/// the deadline. The buffers only the root uses are unknown to the others (NCCL lets them pass anything there,
/// NULL too):
/// - a broadcast reads the root's input from the root's output (every rank's send becomes its recv), where the root
///   first copies it when it calls out of place (`rootCopy`);
/// - a reduce has no registered form (nullopt): its two-shot kernel stores into the root's output from the other
///   ranks, which cannot know where it lies; it goes through the staging windows.
/// Every other collective's buffers are every rank's, and pass unchanged.
struct RegisteredCalls {
  std::vector<CallArgs> set;
  std::optional<LocalCopy> rootCopy;
};
std::optional<RegisteredCalls> registeredCalls(const std::vector<CallArgs>& set, const std::vector<int>& localRanks);

/// A set on registered windows: every rank's call, another process's ranks' buffers as the first local rank's GPU
/// addresses them (what the kernel choice's facts come from), each local rank's table, and the root's copy.
struct RegisteredSet {
  std::vector<CallArgs> set;
  SetPointers pointers;
  std::optional<LocalCopy> rootCopy;
};

/// The set with every rank's buffers filled in, when every buffer registeredCalls keeps lies in a registered window
/// on every local rank; nullopt otherwise (the call then goes through the staging windows). Error(InvalidUsage)
/// where they lie in windows but not at the same offsets on every local rank (checkSymmetricBuffers).
std::optional<RegisteredSet> registeredSet(const CommState& state, const std::vector<CallArgs>& set);

/// Launches a registered set: the root's copy, then the kernel (launchCollectiveSet).
void launchRegisteredSet(CommState& state, const RegisteredSet& registered, bool capturing);

/// Throws Error(InvalidUsage) naming the rank unless every rank of `localRanks` passed its buffers where the other
/// processes will reach them: at the first local rank `lead`'s window and offsets (`send`, `recv`), in place at
/// its own block (registeredTable, as another process computes it).
void checkSymmetricBuffers(const std::vector<CallArgs>& set, const std::vector<int>& localRanks, int lead,
                           const WindowHit& send, const WindowHit& recv);

/// Local rank `viewer`'s table for `set` (set[r]: rank r's call; `local[r]`: r is a rank of this process), whose
/// first local rank `lead` passed buffers at `send` and `recv` (their windows and offsets): a rank of this process
/// its own buffers, another process's rank p its windows' bases as viewer's GPU addresses them plus lead's
/// offsets -- in place, an all-gather's send and a reduce-scatter's recv at p's own block instead.
PeerPointerTable registeredTable(const std::vector<CallArgs>& set, const std::vector<bool>& local, int lead,
                                 const WindowHit& send, const WindowHit& recv, int viewer);

}  // namespace peerlink::coll
