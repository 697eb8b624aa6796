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

/// A set on registered windows: every rank's call, another process's ranks' buffers as the first local rank's GPU
/// addresses them (what the kernel choice's facts come from), and each local rank's table.
struct RegisteredSet {
  std::vector<CallArgs> set;
  SetPointers pointers;
};

/// The set with every rank's buffers filled in, when every buffer the local ranks pass (a broadcast's send off
/// the root and a reduce's recv off the root included: the contract is the same offsets on every rank) lies in
/// a registered window; nullopt otherwise (the call then goes through the staging windows). Error(InvalidUsage)
/// where they lie in windows but not at the same offsets on every local rank (checkSymmetricBuffers).
std::optional<RegisteredSet> registeredSet(const CommState& state, const std::vector<CallArgs>& set);

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
