// The ways the arena ring runs a call (coll/arena_ring.hpp: calls on unregistered buffers across processes as the host
// ring's kernel with its ring areas in the ranks' arenas), each costed by the model as a kernel is (cost_model.hpp):
// the ring's rounds and the chain, as the host ring's two ways through host memory are (host_path.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "peerlink/collectives.hpp"

namespace peerlink::plan {

/// How the arena ring's kernel moves a call (kernels/host_ring.cuh's schedule).
enum class ArenaWay {
  Ring,   ///< the rounds: all-reduce, reduce-scatter, all-gather, and the all-to-all of two ranks (the exchange)
  Chain,  ///< the chain from (to) the root along the ring: broadcast, reduce
};

inline constexpr std::size_t kArenaWayCount = 2;

/// "arena_ring", "arena_chain".
const char* arenaWayName(ArenaWay way) noexcept;

/// The way named `name` (arenaWayName's), or nullopt.
std::optional<ArenaWay> parseArenaWay(const std::string& name);

/// The way the arena ring runs `collective`.
ArenaWay arenaWayOf(Collective collective) noexcept;

}  // namespace peerlink::plan
