// A `peerlink coll` run across nodes (docs/multinode.md): what each size's call sends between nodes, and MPI's own
// point-to-point bandwidth on that path measured in the same run (net/rail_exchange.hpp), through the MPI the world
// started, so that the phases across nodes (CollMeasurement::acrossNodesUs) can be put beside what MPI itself moves.
#pragma once

#include <cstddef>

#include "coll_bench/coll_bench.hpp"
#include "coll_bench/coll_world.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

/// What one call sends between nodes.
struct AcrossNodesTraffic {
  std::size_t bytesPerRank = 0;  ///< the most any rank sends to other nodes
  bool everyRankSends = false;   ///< every rank sends something to another node (all-reduce, all-gather, ...)
};
/// Pure. The traffic of `collective` with `sizing`'s count on `grid` (the hierarchical plan the communicator runs:
/// elementsSentAcrossNodes).
AcrossNodesTraffic acrossNodesTraffic(Collective collective, const NodeGrid& grid, const CollSizing& sizing,
                                      DataType type, int root);

/// Pure. MPI's exchange is the reference for a call only where every rank sends between nodes, as the exchange has
/// every rank do: empty then, else why not.
std::string mpiReferenceGap(const AcrossNodesTraffic& traffic);

/// The run's nodes and MPI (CollRun::nodes) from `world`; nodes 0 on one host.
CollNodes collNodesOf(const CollWorld& world);

/// Every row's acrossNodes in a run across nodes (nothing on one host): the bytes a rank sends between nodes, and
/// MPI's exchange of those bytes timed (`run.options`' warm-up and iterations, the slowest rank) where
/// mpiReferenceGap is empty. Collective over the world: every rank calls it with the same rows. Error(Timeout) or
/// Error(RemoteError) from MPI (the run cannot go on: its pinned buffers are then left to MPI).
void measureAcrossNodes(const Params& params, const CollWorld& world, CollRun& run);

}  // namespace peerlink::coll
