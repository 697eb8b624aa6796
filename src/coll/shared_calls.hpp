// Calls on unregistered buffers across processes that share their buffers with the peers at the call: every
// rank turns the allocations its buffers lie in into IPC handles (cudaMalloc memory: what PyTorch's caching
// allocator and cudaMalloc give), the ranks exchange them, and each process opens the others' as windows
// (user_windows.hpp, WindowUse::SharedByCall) and runs the call's kernel on the callers' own buffers, as on
// registered windows -- no copies through the staging windows. The windows stay open for the calls that come
// back on the same buffers (SharedCallCache), so a training loop's buffers are opened once.
//
// Every step is decided alike on every rank (call_sharing.hpp): whether to share, from the setting and the
// call's shape; whether it can, from every rank's card after the exchange (one rank's buffer that cannot be
// shared sends the call through the staging windows on every rank); whether the windows opened, by a second
// exchange when a call opened any.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "coll/registered_calls.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// The set as a shared call runs it: every rank's buffers as the local ranks' GPUs address them, and the entry
/// of the cache it uses (its send window's id).
struct SharedSet {
  RegisteredSet set;
  int entry = 0;
};

/// An all-gather every process may leave early: every rank's blobs, or nullopt on every process where some rank did
/// not come within `patience` (SharedMemoryExchange::allGatherWithin).
using WorldAllGatherWithin = std::function<std::optional<std::vector<std::uint8_t>>(
    const std::vector<std::vector<std::uint8_t>>& localBlobs, std::size_t bytes, std::chrono::nanoseconds patience)>;

/// The exchanges a call may use across processes.
struct CallExchange {
  WorldAllGather allGather;
  WorldAllGatherWithin allGatherWithin;
};

/// The set shared with the peers, when sharesAtCall says so, every rank came to the exchange of the cards in time
/// (AUTO: within sharingPatience; ON: waits for every rank) and every rank could share its buffers; nullopt otherwise
/// (the call then goes through the staging windows on every rank). Throws what the exchange throws (a rank that
/// does not come within the deadline).
std::optional<SharedSet> sharedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing,
                                   const CallExchange& exchange);

/// Lets every cached shared call go (their windows closed once their latest kernels ended). Every process calls it
/// together -- the caches are alike everywhere -- where an allocation of another process could not be opened: on
/// driver 580.159 such opens sometimes fail with cudaErrorAlreadyMapped while cached calls map other allocations of
/// that process (at the first shared calls of new buffers after others were freed; bench/results/
/// 2026-11-30-h200x2-rooted-sharing/), and opening again once they were let go succeeded every time. Returns how
/// many calls were let go.
std::size_t closeSharedCalls(CommState& state);

/// Launches a shared set (launchCollectiveSet on its tables), then records behind it on each local rank's stream
/// that its entry was used.
void launchSharedSet(CommState& state, const SharedSet& shared, bool capturing);

}  // namespace peerlink::coll
