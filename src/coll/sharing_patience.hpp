// How long a process waits at a shared call's exchange for the other ranks before the call goes through the staging
// windows instead (AUTO; shared_calls.hpp): as long as sharing would save, so waiting never costs the host more than
// sharing gains -- processes that reach the call far apart (a training step's ranks drift by hundreds of
// microseconds) stage it, processes in step share it. Pure.
#pragma once

#include <chrono>
#include <cstddef>

namespace peerlink::coll {

/// The patience for a shared call whose count is `bytes` (a rank's count times the element size, as shareFromBytes
/// counts it; alike for every collective).
std::chrono::nanoseconds sharingPatience(std::size_t bytes);

}  // namespace peerlink::coll
