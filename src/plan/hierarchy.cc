#include "plan/hierarchy.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "net/net_call.hpp"
#include "peerlink/error.hpp"
#include "plan/host_path.hpp"

namespace peerlink::plan {
namespace {

constexpr int kMaxNodes = 100000;
constexpr double kMaxNicGbps = 100000;  // 100 Tb/s: no NIC is near it
constexpr double kMaxLatencyUs = 1e6;

double ceilLog2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// The narrowest PCIe link of the node's GPUs, GB/s per direction; 0 where the topology says none.
double narrowestHostLink(const Fabric& node) {
  double host = 0;
  for (const double gbps : node.hostLinkGBps) {
    if (gbps > 0) host = host > 0 ? std::min(host, gbps) : gbps;
  }
  return host;
}

// What one GPU's traffic between nodes gets: its share of its NIC, or its PCIe link where that is narrower.
struct NicShare {
  double gbps = 0;
  std::string name;
};

// `sending` GPUs of the node at once, spread over its NICs. With GPUDirect RDMA a GPU's PCIe link bounds it where that
// is narrower; on the staged path the NIC reads host memory, and the GPU's link carries the copies instead.
NicShare nicShareOf(const Fabric& node, const Network& network, int sending) {
  const int nics = network.nicsPerNode > 0 ? network.nicsPerNode : node.ranks();
  const int sharing = (sending + nics - 1) / nics;
  NicShare share{network.nicGbps / 8 / sharing, fmt::format("NIC ({:.4g} GB/s per direction, {} GPU{} per NIC)",
                                                            network.nicGbps / 8, sharing, sharing == 1 ? "" : "s")};
  if (network.path == NetworkPath::Staged) return share;
  const double host = narrowestHostLink(node);
  if (host > 0 && host < share.gbps) share = {host, fmt::format("GPU PCIe link to the NIC ({:.4g} GB/s)", host)};
  return share;
}

class Phases {
 public:
  Phases(const Fabric& node, const ChoiceContext& context, const CostModel& model, const Network& network)
      : node_(node),
        context_(context),
        model_(model),
        network_(network),
        everyGpu_(nicShareOf(node, network, node.ranks())),
        oneGpu_(nicShareOf(node, network, 1)),
        hostLink_(narrowestHostLink(node)) {
    if (network.path == NetworkPath::Staged && !(hostLink_ > 0)) {
      throw Error(ErrorCode::InvalidInput,
                  "the topology says nothing of the GPUs' PCIe links, which the staged path's copies to and from "
                  "pinned host memory cross");
    }
  }

  // A collective among the node's GPUs, every node at once, with the kernel the node's communicator chooses.
  PhaseTime inNode(const std::string& name, Collective collective, const Call& like, std::size_t count) const {
    Call call = like;
    call.collective = collective;
    call.count = count;
    call.inPlace = false;
    const Prediction p = predictChosen(call, node_, context_, model_);
    return {name + " (" + kernelName(p.kernel) + ")", p.timeUs, p.bottleneck};
  }

  // A call across nodes on the staged path: `collective` of `bytes` of each block on every rail at once (or, `everyGpu`
  // false, one GPU a node), as the transport runs it (net_staged.hpp).
  PhaseTime stagedAcrossNodes(const std::string& name, Collective collective, double bytes,
                              bool everyGpu = true) const {
    const NicShare& nic = everyGpu ? everyGpu_ : oneGpu_;
    StagedCosts costs;
    const KernelCost& copy = model_.costs(HostPath::PlanSteps).all;  // the copy engines through host memory
    costs.copyLaunchUs = copy.launchUs;
    costs.copyGBps = hostLink_ * copy.efficiency;
    costs.mpi = network_.mpi ? *network_.mpi : MpiLink{network_.nicLatencyUs, 1 / (nic.gbps * 1e3)};
    costs.callUs = model_.netCallUs;
    costs.inFlight = net::kPiecesInFlight;
    const StagedNetTime t =
        stagedNetTime(stagedPiecesOf(collective, network_.nodes, bytes, network_.chunkBytes), costs);
    return {name, t.timeUs, t.bottleneck};
  }

  // `messages` messages one after another across nodes carrying `bytes` through each sending GPU's NIC share:
  // every GPU of a node sends at once, or (`everyGpu` false: a rooted call's root, a ring shift's last rank) one.
  PhaseTime acrossNodes(const std::string& name, double messages, double bytes, bool everyGpu = true) const {
    const NicShare& nic = everyGpu ? everyGpu_ : oneGpu_;
    const double latency = messages * network_.nicLatencyUs;
    const double data = bytes / (nic.gbps * 1e3);
    return {name, latency + data, latency >= data ? "network latency" : nic.name};
  }

 private:
  const Fabric& node_;
  const ChoiceContext& context_;
  const CostModel& model_;
  const Network& network_;
  NicShare everyGpu_;
  NicShare oneGpu_;
  double hostLink_ = 0;
};

HierarchicalPrediction sequence(std::vector<PhaseTime> phases) {
  HierarchicalPrediction h;
  for (const PhaseTime& phase : phases) {
    h.shape += (h.shape.empty() ? "" : ", then ") + phase.name;
    h.timeUs += phase.timeUs;
  }
  h.phases = std::move(phases);
  return h;
}

// The shape the communicator runs on the staged path: the transport's one algorithm across nodes (ring; a chain for
// broadcast and reduce; direct for all-to-all) between the phases in the node, or with one rank a node the call across
// nodes alone.
HierarchicalPrediction stagedShape(const Call& call, const Phases& phases, int ranksPerNode, int nodes,
                                   std::size_t elementBytes) {
  const auto n = static_cast<std::size_t>(ranksPerNode);
  const auto everyNode = call.count * static_cast<std::size_t>(nodes);
  const bool alone = ranksPerNode == 1;
  const double bytes = static_cast<double>(call.count * elementBytes);
  const auto with = [&](std::vector<PhaseTime> inNode, PhaseTime across, bool acrossFirst) {
    if (alone) return sequence({std::move(across)});
    std::vector<PhaseTime> all;
    if (acrossFirst) all.push_back(across);
    for (PhaseTime& phase : inNode) all.push_back(std::move(phase));
    if (!acrossFirst) all.push_back(std::move(across));
    return sequence(std::move(all));
  };
  switch (call.collective) {
    case Collective::AllReduce: {
      const std::size_t shard = (call.count + n - 1) / n;
      const PhaseTime across = phases.stagedAcrossNodes("all-reduce across nodes (ring, staged)", Collective::AllReduce,
                                                        static_cast<double>(shard * elementBytes));
      if (alone) return sequence({across});
      return sequence({phases.inNode("reduce-scatter in the node", Collective::ReduceScatter, call, shard), across,
                       phases.inNode("all-gather in the node", Collective::AllGather, call, shard)});
    }
    case Collective::AllGather:
      return with({phases.inNode("all-gather in the node", Collective::AllGather, call, everyNode)},
                  phases.stagedAcrossNodes("all-gather across nodes (ring, staged)", Collective::AllGather, bytes),
                  true);
    case Collective::ReduceScatter:
      return with(
          {phases.inNode("reduce-scatter in the node", Collective::ReduceScatter, call, everyNode)},
          phases.stagedAcrossNodes("reduce-scatter across nodes (ring, staged)", Collective::ReduceScatter, bytes),
          false);
    case Collective::Broadcast:
      return with(
          {phases.inNode("broadcast in every node", Collective::Broadcast, call, call.count)},
          phases.stagedAcrossNodes("broadcast across nodes (chain, staged)", Collective::Broadcast, bytes, false),
          true);
    case Collective::Reduce:
      return with({phases.inNode("reduce in every node", Collective::Reduce, call, call.count)},
                  phases.stagedAcrossNodes("reduce across nodes (chain, staged)", Collective::Reduce, bytes, false),
                  false);
    case Collective::AllToAll:
      return with({phases.inNode("all-to-all in the node", Collective::AllToAll, call, call.count)},
                  phases.stagedAcrossNodes("all-to-all across nodes (direct, staged)", Collective::AllToAll,
                                           static_cast<double>(n) * bytes),
                  true);
    case Collective::SendRecv: {
      const PhaseTime across = phases.stagedAcrossNodes("send/recv across nodes (at the same time, staged)",
                                                        Collective::SendRecv, bytes, false);
      if (alone) return sequence({across});
      HierarchicalPrediction shift =
          sequence({phases.inNode("send/recv in the node", Collective::SendRecv, call, call.count), across});
      shift.timeUs = std::max(shift.phases[0].timeUs, shift.phases[1].timeUs);
      shift.shape = "send/recv in the node and across nodes at the same time";
      return shift;
    }
  }
  return {};
}

}  // namespace

void validateNetwork(const Network& network) {
  if (network.nodes < 1 || network.nodes > kMaxNodes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--nodes {}: give a number of nodes from 1 to {}", network.nodes, kMaxNodes));
  }
  if (network.nicsPerNode < 0) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--nics-per-node {}: give 1 or more (0: one per GPU)", network.nicsPerNode));
  }
  if (network.nodes == 1) return;
  if (network.path == NetworkPath::Staged && network.chunkBytes == 0) {
    throw Error(ErrorCode::InvalidUsage, "the staged path's pieces must hold a byte or more");
  }
  if (network.path == NetworkPath::Staged && network.mpi) {
    if (!std::isfinite(network.mpi->latencyUs) || network.mpi->latencyUs < 0 ||
        !std::isfinite(network.mpi->usPerByte) || network.mpi->usPerByte < 0) {
      throw Error(ErrorCode::InvalidInput, "MPI's measured latency and time per byte must be finite and >= 0");
    }
    return;  // MPI's own figures stand for the NIC's
  }
  if (!std::isfinite(network.nicGbps) || network.nicGbps <= 0 || network.nicGbps > kMaxNicGbps) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--nic-gbps {}: give one NIC's speed per direction in Gb/s, above 0 and at most {} "
                            "(400 for a 400 Gb/s InfiniBand NDR or Ethernet NIC)",
                            network.nicGbps, kMaxNicGbps));
  }
  if (!std::isfinite(network.nicLatencyUs) || network.nicLatencyUs < 0 || network.nicLatencyUs > kMaxLatencyUs) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--nic-latency-us {}: give one message's latency between nodes in µs, from 0 to {:g} "
                            "(a few µs for InfiniBand)",
                            network.nicLatencyUs, kMaxLatencyUs));
  }
}

std::vector<HierarchicalPrediction> predictAcrossNodes(const Call& call, const Fabric& node,
                                                       const ChoiceContext& context, const CostModel& model,
                                                       const Network& network) {
  validateNetwork(network);
  const Phases phases(node, context, model, network);
  const int nodes = network.nodes;
  const auto n = static_cast<std::size_t>(node.ranks());
  const auto others = static_cast<double>(nodes - 1);
  const double steps = ceilLog2(nodes);
  const std::size_t elementBytes = dataTypeSize(call.type);
  const double bytes = static_cast<double>(call.count * elementBytes);

  std::vector<HierarchicalPrediction> shapes;
  if (network.path == NetworkPath::Staged) {
    shapes.push_back(stagedShape(call, phases, node.ranks(), nodes, elementBytes));
    shapes.front().fastest = true;
    return shapes;
  }
  switch (call.collective) {
    case Collective::AllReduce: {
      const std::size_t shard = (call.count + n - 1) / n;
      const double shardBytes = static_cast<double>(shard * elementBytes);
      const PhaseTime scatter = phases.inNode("reduce-scatter in the node", Collective::ReduceScatter, call, shard);
      const PhaseTime gather = phases.inNode("all-gather in the node", Collective::AllGather, call, shard);
      shapes.push_back(sequence(
          {scatter, phases.acrossNodes("all-reduce across nodes (ring)", 2 * others, 2 * others / nodes * shardBytes),
           gather}));
      shapes.push_back(sequence(
          {scatter, phases.acrossNodes("all-reduce across nodes (recursive doubling)", steps, steps * shardBytes),
           gather}));
      break;
    }
    case Collective::AllGather: {
      const PhaseTime gather = phases.inNode("all-gather in the node", Collective::AllGather, call,
                                             call.count * static_cast<std::size_t>(nodes));
      shapes.push_back(
          sequence({phases.acrossNodes("all-gather across nodes (ring)", others, others * bytes), gather}));
      shapes.push_back(sequence(
          {phases.acrossNodes("all-gather across nodes (recursive doubling)", steps, others * bytes), gather}));
      break;
    }
    case Collective::ReduceScatter: {
      const PhaseTime scatter = phases.inNode("reduce-scatter in the node", Collective::ReduceScatter, call,
                                              call.count * static_cast<std::size_t>(nodes));
      shapes.push_back(
          sequence({scatter, phases.acrossNodes("reduce-scatter across nodes (ring)", others, others * bytes)}));
      shapes.push_back(sequence(
          {scatter, phases.acrossNodes("reduce-scatter across nodes (recursive halving)", steps, others * bytes)}));
      break;
    }
    case Collective::Broadcast: {
      const PhaseTime local = phases.inNode("broadcast in every node", Collective::Broadcast, call, call.count);
      shapes.push_back(
          sequence({phases.acrossNodes("broadcast across nodes (pipelined chain)", others, bytes, false), local}));
      shapes.push_back(
          sequence({phases.acrossNodes("broadcast across nodes (binomial tree)", steps, steps * bytes, false), local}));
      break;
    }
    case Collective::Reduce: {
      const PhaseTime local = phases.inNode("reduce in every node", Collective::Reduce, call, call.count);
      shapes.push_back(
          sequence({local, phases.acrossNodes("reduce across nodes (pipelined chain)", others, bytes, false)}));
      shapes.push_back(
          sequence({local, phases.acrossNodes("reduce across nodes (binomial tree)", steps, steps * bytes, false)}));
      break;
    }
    case Collective::AllToAll: {
      // Across nodes first, as coll/hierarchical_plan.hpp builds it: each GPU sends every other node the blocks of
      // that node's GPUs, which the node's all-to-all then delivers.
      shapes.push_back(sequence({phases.acrossNodes("all-to-all across nodes (pairwise exchange)", others,
                                                    others * static_cast<double>(n) * bytes),
                                 phases.inNode("all-to-all in the node", Collective::AllToAll, call, call.count)}));
      break;
    }
    case Collective::SendRecv: {
      // The ring shift: the last rank of a node sends to the next node while the others send within it.
      HierarchicalPrediction shift =
          sequence({phases.inNode("send/recv in the node", Collective::SendRecv, call, call.count),
                    phases.acrossNodes("send/recv across nodes (at the same time)", 1, bytes, false)});
      shift.timeUs = std::max(shift.phases[0].timeUs, shift.phases[1].timeUs);
      shift.shape = "send/recv in the node and across nodes at the same time";
      shapes.push_back(shift);
      break;
    }
  }
  const auto fastest =
      std::min_element(shapes.begin(), shapes.end(), [](const auto& a, const auto& b) { return a.timeUs < b.timeUs; });
  fastest->fastest = true;
  return shapes;
}

}  // namespace peerlink::plan
