// Host memory every process of a one-host world maps: a POSIX shared memory segment per rank, created (mode 0600,
// zeroed) by the rank's process and opened by name by every other, the names all-gathered at creation. Every
// process learns whether every other got its segments; each creator then removes its segments' names, so none
// stays in /dev/shm once creation is over, whether it succeeded or not.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "coll/world.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// One rank's segment as this process maps it.
struct HostSegment {
  void* base = nullptr;
  std::size_t bytes = 0;
};

/// Collective over the world (every process calls it at the same point): every rank's segment of `bytes`, by rank,
/// named "/peerlink-<purpose>-<pid>-<rank>-<random>". Where any process could not create or open one, every process
/// throws Error(SystemError) naming the ranks (and, where this process failed, the OS's reason), nothing mapped.
/// Release the segments with unmapHostSegments.
std::vector<HostSegment> mapHostSegments(const World& world, const WorldAllGather& allGather, std::size_t bytes,
                                         const std::string& purpose);

/// Unmaps each segment of `segments` and empties it.
void unmapHostSegments(std::vector<HostSegment>& segments) noexcept;

}  // namespace peerlink::coll
