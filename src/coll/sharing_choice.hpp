// Whether a call across processes shares its buffers at the call (shared_calls.hpp) rather than go through the
// staging windows, and how long AUTO waits for the other ranks. A shared call is a meeting of the processes' hosts:
// AUTO shares only calls large enough that sharing saves more than the meeting may cost, and waits at the exchange
// only as long as sharing would save -- processes that reach the call far apart (a training step's ranks drift by
// hundreds of microseconds) stage it, processes in step share it. Pure.
#pragma once

#include <chrono>
#include <cstddef>

#include "coll/call_sharing.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// The bytes of a call's count (a rank's count times the element size: an all-to-all's block to each peer) from
/// which AUTO shares a call of `collective`: one size for the collectives of a training step, a smaller one for
/// broadcasts and reduces (sharing_choice.cc says why).
std::size_t shareFromBytes(Collective collective);

/// Whether a call of `collective` whose count is `bytes` that would go through the staging windows shares its
/// buffers at the call instead. Not while capturing: a graph would keep the peers' buffers it names for as long as it
/// lives, which the communicator cannot know (the staged path replays graphs of its own).
bool sharesAtCall(BufferSharing mode, Collective collective, std::size_t bytes, bool capturing);

/// The patience for a shared call whose count is `bytes` (as shareFromBytes counts it; alike for every collective).
std::chrono::nanoseconds sharingPatience(std::size_t bytes);

}  // namespace peerlink::coll
