// Calls of a world that spans processes whose buffers lie in registered windows (user_windows.hpp): the peers'
// buffers are their windows' bases plus this rank's offsets, so the set runs any kernel on the callers' own
// buffers, with no staging copies.
#pragma once

#include <optional>
#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// The set with every rank's buffers filled in, when every buffer the local ranks pass (a broadcast's send off
/// the root and a reduce's recv off the root included: the contract is the same offsets on every rank) lies in
/// a registered window; nullopt otherwise (the call then goes through the staging windows), and always for a
/// process that drives several ranks.
std::optional<std::vector<CallArgs>> registeredSet(const CommState& state, const std::vector<CallArgs>& set);

}  // namespace peerlink::coll
