// The figures of a `peerlink coll` run across nodes (coll_nodes.hpp).
#include "coll_bench/coll_nodes.hpp"

#include <algorithm>
#include <memory>

#include "coll/hierarchical_plan.hpp"
#include "net/rail_exchange.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// Pinned host memory for MPI's exchange, both directions; grown to the largest size of the run.
struct ExchangeBuffers {
  PinnedBuffer send;
  PinnedBuffer recv;
  void ensure(std::size_t bytes) {
    if (send.size() >= bytes) return;
    send = PinnedBuffer();
    recv = PinnedBuffer();
    send = PinnedBuffer(bytes);
    recv = PinnedBuffer(bytes);
  }
};

}  // namespace

AcrossNodesTraffic acrossNodesTraffic(Collective collective, const NodeGrid& grid, const CollSizing& sizing,
                                      DataType type, int root) {
  AcrossNodesTraffic traffic;
  if (sizing.count == 0) return traffic;
  const HierarchicalPlan plan = buildHierarchicalPlan(collective, grid, sizing.count, root, false, 0, type);
  const std::vector<std::size_t> sent = elementsSentAcrossNodes(plan.plan);
  traffic.bytesPerRank = *std::max_element(sent.begin(), sent.end()) * dataTypeSize(type);
  traffic.everyRankSends = std::all_of(sent.begin(), sent.end(), [](std::size_t elements) { return elements > 0; });
  return traffic;
}

std::string mpiReferenceGap(const AcrossNodesTraffic& traffic) {
  if (traffic.bytesPerRank == 0) return "nothing crosses nodes";
  if (!traffic.everyRankSends) {
    return "not every rank sends between nodes in this call (MPI's exchange has every rank send and receive)";
  }
  return "";
}

CollNodes collNodesOf(const CollWorld& world) {
  CollNodes nodes;
  if (!world.nodes()) return nodes;
  nodes.nodes = world.nodes()->nodes;
  nodes.ranksPerNode = world.nodes()->ranksPerNode;
  if (const net::MpiStartup* mpi = world.mpi()) {
    nodes.mpi = mpi->facts().library;
    nodes.mpiLibrary = mpi->facts().path;
    nodes.mpiInitializedHere = mpi->initializedHere();
  }
  return nodes;
}

void measureAcrossNodes(const Params& params, const CollWorld& world, CollRun& run) {
  if (!world.nodes() || world.job() == nullptr) return;
  const NodeGrid grid = *world.nodes();
  const CollBenchOptions& options = run.options;
  for (CollRow& row : run.rows) {
    const CollSizing sizing = collSizing(options.collective, row.bytes, options.type, run.ranks);
    CollAcrossNodes across;
    const AcrossNodesTraffic traffic = acrossNodesTraffic(options.collective, grid, sizing, options.type, options.root);
    across.bytesPerRank = traffic.bytesPerRank;
    across.mpiReason = mpiReferenceGap(traffic);
    row.acrossNodes = across;
  }
  const auto measured = [](const CollRow& row) { return row.acrossNodes->mpiReason.empty(); };
  if (std::none_of(run.rows.begin(), run.rows.end(), measured)) return;
  // A communicator of its own (MPI_Comm_dup: every rank, in the same order), so no message of the transport's can
  // match the exchange's.
  const std::unique_ptr<net::PointToPoint> p2p = net::openMpiPointToPoint(params);
  Bootstrap& job = *world.job();
  net::RailExchange exchange;
  exchange.p2p = p2p.get();
  exchange.neighbours = net::railRingNeighbours(grid, job.rank());
  exchange.timeout = std::chrono::milliseconds(params.getInt("PEERLINK_NET_TIMEOUT_MS"));
  exchange.describe = [&job](int rank) { return describePeer(job.peers()[static_cast<std::size_t>(rank)]); };
  auto buffers = std::make_unique<ExchangeBuffers>();
  try {
    for (CollRow& row : run.rows) {
      if (!measured(row)) continue;
      const std::size_t bytes = row.acrossNodes->bytesPerRank;
      buffers->ensure(bytes);
      world.barrier();  // the ranks start together; each times its own exchanges, the slowest is reported
      const double seconds = net::timeExchanges(exchange, buffers->send.data(), buffers->recv.data(), bytes,
                                                options.warmup, options.iterations);
      row.acrossNodes->mpiUs = world.slowest(seconds * 1e6);
    }
  } catch (...) {
    (void)buffers.release();  // MPI may still read and write them (its requests were abandoned)
    throw;
  }
}

}  // namespace peerlink::coll
