// Predicted times across nodes: N copies of one node joined by NICs, each collective as the hierarchical plan
// issue 36 builds (all-reduce: a reduce-scatter in the node, an all-reduce across nodes per local rank, an
// all-gather in the node; the matching shapes for the others). The phases in the node are predict.hpp's for the
// kernel the node's communicator would choose; the phases across nodes are the textbook costs of MPI's
// algorithms over the NIC figures the user gives (a latency per message, the NIC's bandwidth divided among the
// GPUs that share it) with GPUDirect RDMA (no copy through the host), or on MPI's staged path through pinned host
// memory as the transport runs it (net_staged.hpp: its ring, pieces copied to and from the GPU, pipelined), from the
// NIC figures or from MPI's own measured in a run (`peerlink plan --check`).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "plan/net_staged.hpp"
#include "plan/predict.hpp"

namespace peerlink::plan {

/// The network between the nodes.
struct Network {
  int nodes = 1;
  double nicGbps = 0;       ///< one NIC's bandwidth per direction, Gb/s (10^9 bits per second)
  double nicLatencyUs = 0;  ///< one message's latency from a GPU to a GPU of another node, µs
  int nicsPerNode = 0;      ///< 0: one per GPU
  NetworkPath path = NetworkPath::GpuDirect;
  /// Staged: MPI's messages as a run measured them (its own figures, every rank sending at once), instead of the NIC
  /// figures.
  std::optional<MpiLink> mpi;
  std::size_t chunkBytes = std::size_t{4} << 20;  ///< staged: the transport's pieces (PEERLINK_NET_CHUNK_BYTES)
};

/// Throws Error(InvalidUsage) naming the flag for fewer than 1 node or more than 100000, a NIC speed that is not
/// a finite number in (0, 100000] Gb/s or a latency outside [0, 1e6] µs (when nodes > 1), NICs per node < 0.
void validateNetwork(const Network& network);

/// One phase of a hierarchical plan.
struct PhaseTime {
  std::string name;  ///< "reduce-scatter in the node", "all-reduce across nodes (ring)"
  double timeUs = 0;
  std::string bottleneck;  ///< the resource, "NIC (50 GB/s, 1 GPU per NIC)", or "network latency"
};

/// One way to run the call across the nodes.
struct HierarchicalPrediction {
  std::string shape;  ///< the phases' names joined
  double timeUs = 0;
  std::vector<PhaseTime> phases;
  bool fastest = false;  ///< the quickest of the shapes predicted (MPI picks its own algorithm across nodes)
};

/// `call` (the API's count, on nodes x ranks-of-`node` ranks) across `network.nodes` copies of `node`, one
/// prediction per algorithm across nodes (ring, and recursive doubling or a binomial tree where the collective
/// has one) with GPUDirect RDMA; on the staged path the one the transport runs (ring, a chain for the rooted
/// calls, direct for all-to-all). With one rank a node the call is that one call across nodes, no phase in the node
/// (as the communicator runs it). `context` is the choice's view of one node. Throws Error(InvalidInput) on the
/// staged path where the topology does not say a GPU's PCIe link (the copies cross it).
std::vector<HierarchicalPrediction> predictAcrossNodes(const Call& call, const Fabric& node,
                                                       const ChoiceContext& context, const CostModel& model,
                                                       const Network& network);

}  // namespace peerlink::plan
