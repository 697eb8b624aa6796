// The host memory of staged plans across processes (comm_launch_plan.hpp): each rank's host stage and step flags
// in a POSIX shared memory segment its process creates (mode 0600) and every other process of the world opens by
// name, all-gathered at creation; every segment registered with CUDA (portable, mapped), so every local GPU copies
// to and from any rank's stage and the step barriers (plan_barrier.cuh) poll any rank's flags. GPUs without peer
// access meet only here. A creator removes its segment's name once every process has opened it.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/world.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// A rank's step flags (plan_barrier.cuh) come first in its stage's memory, its LL area from the next page, then the
/// stage.
constexpr std::size_t kPlanFlagBytes = 4096;

class SharedPlanStages {
 public:
  /// Collective over the world: creates the local ranks' segments (flags, `linesBytes` of LL area, `stageBytes` of
  /// stage, all zeroed), exchanges their names,
  /// opens and registers every other rank's, and meets every process before the names are removed
  /// (mapHostSegments). Throws Error(SystemError) on every process where any could not make or open a segment, and
  /// what the exchange and CUDA throw.
  SharedPlanStages(const World& world, WorldExchange& exchange, std::size_t linesBytes, std::size_t stageBytes);
  ~SharedPlanStages();
  SharedPlanStages(const SharedPlanStages&) = delete;
  SharedPlanStages& operator=(const SharedPlanStages&) = delete;

  /// Rank r's stage, as this process (and each of its GPUs: unified addressing) addresses it.
  void* stage(int rank) const;
  /// Rank r's flag area (kCollMaxRanks slots, zeroed at creation), device-addressable.
  unsigned long long* flags(int rank) const;
  /// Rank r's LL area, device-addressable.
  void* lines(int rank) const;

 private:
  struct Segment {
    void* base = nullptr;
    std::size_t bytes = 0;
    bool registered = false;
  };
  void release() noexcept;

  std::vector<Segment> segments_;  ///< by rank
  std::size_t linesBytes_ = 0;
};

}  // namespace peerlink::coll
