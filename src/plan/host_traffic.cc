// The bytes a call through host memory puts on each GPU's link to the host (host_traffic.hpp).
#include "plan/host_traffic.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "coll/comm_state.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/plan_program.hpp"
#include "coll/plan_staged.hpp"
#include "coll/planned_calls.hpp"
#include "coll/rank_links.hpp"
#include "coll/rank_transport.hpp"
#include "coll/segment_plans.hpp"

namespace peerlink::plan {
namespace {

// LL's 16-byte line carries 8 payload bytes (ll_line.cuh).
constexpr double kLlWire = 2.0;
// A token where a rank has no message for a peer (send/recv in lines): the first 16-byte line alone.
constexpr double kLlTokenBytes = 16.0;

bool isChain(Collective collective) {
  return collective == Collective::Broadcast || collective == Collective::Reduce;
}

coll::RankLinks linksOf(const Fabric& fabric) {
  const int n = fabric.ranks();
  coll::RankLinks links = coll::RankLinks::uniform(n, coll::PairWay::Direct);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b && fabric.hostStaged[fabric.routeIndex(a, b)]) links.set(a, b, coll::PairWay::HostStaged);
    }
  }
  return links;
}

class HostLoader {
 public:
  explicit HostLoader(const Fabric& fabric) : fabric_(fabric), bytes_(fabric.resources.size(), 0.0) {}

  void out(int rank, double bytes) { at(fabric_.toHost[static_cast<std::size_t>(rank)]) += bytes; }
  void in(int rank, double bytes) { at(fabric_.fromHost[static_cast<std::size_t>(rank)]) += bytes; }

  // A staged plan's transfer: its executor reads each source (a host stage through its link from the host, a peer's
  // buffer over their route, its own through its memory) and writes its destination alike.
  void add(const coll::Transfer& transfer, std::size_t elementBytes) {
    const double bytes = static_cast<double>(transfer.count * elementBytes);
    const int e = transfer.executor;
    for (const coll::BufferRef& src : transfer.srcs) {
      const auto key = std::make_tuple(e, src.rank, static_cast<int>(src.buffer), src.offset, transfer.count);
      if (!read_.insert(key).second) continue;  // read once, stored several times
      if (src.buffer == coll::BufferKind::HostStage) {
        in(e, bytes);
      } else {
        flow(src.rank, e, bytes);
      }
    }
    if (transfer.dst.buffer == coll::BufferKind::HostStage) {
      out(e, bytes);
    } else {
      flow(e, transfer.dst.rank, bytes);
    }
  }

  ResourceBytes take() {
    read_.clear();
    ResourceBytes taken(fabric_.resources.size(), 0.0);
    std::swap(taken, bytes_);
    return taken;
  }

 private:
  void flow(int from, int to, double bytes) {
    if (from == to || fabric_.route(from, to).empty()) {
      at(fabric_.memory[static_cast<std::size_t>(from)]) += bytes;
      return;
    }
    for (const int resource : fabric_.route(from, to)) at(resource) += bytes;
  }

  double& at(int resource) { return bytes_[static_cast<std::size_t>(resource)]; }

  const Fabric& fabric_;
  ResourceBytes bytes_;
  std::set<std::tuple<int, int, int, std::size_t, std::size_t>> read_;
};

// Every rank's message for each peer in LL lines into the peer's area, read back there.
ResourceBytes linesTraffic(const Call& call, const Fabric& fabric) {
  const int n = fabric.ranks();
  const double message = kLlWire * static_cast<double>(call.count * dataTypeSize(call.type));
  HostLoader load(fabric);
  for (int r = 0; r < n; ++r) {
    const double peers = n - 1;
    switch (call.collective) {
      case Collective::Broadcast: r == call.root ? load.out(r, peers * message) : load.in(r, message); break;
      case Collective::Reduce: r == call.root ? load.in(r, peers * message) : load.out(r, message); break;
      case Collective::SendRecv:  // the ring shift: the message to the next rank, tokens to the others; alike in
        load.out(r, message + (peers - 1) * kLlTokenBytes);
        load.in(r, message + (peers - 1) * kLlTokenBytes);
        break;
      default: load.out(r, peers * message); load.in(r, peers * message);
    }
  }
  return load.take();
}

// The host ring: every hop a slot stored out of one rank and loaded into the next.
ResourceBytes ringTraffic(const Call& call, const Fabric& fabric, const std::vector<int>& order) {
  const int n = fabric.ranks();
  const double bytes = static_cast<double>(call.count * dataTypeSize(call.type));
  HostLoader load(fabric);
  if (isChain(call.collective)) {
    // From the root along the ring (a reduce to it: the same links the other way round).
    const auto root = std::find(order.begin(), order.end(), call.root) - order.begin();
    for (int hop = 0; hop + 1 < n; ++hop) {
      const int from = order[static_cast<std::size_t>((root + hop) % n)];
      const int to = order[static_cast<std::size_t>((root + hop + 1) % n)];
      if (call.collective == Collective::Broadcast) {
        load.out(from, bytes);
        load.in(to, bytes);
      } else {
        load.out(to, bytes);
        load.in(from, bytes);
      }
    }
    return load.take();
  }
  // An all-reduce's 2(n-1) rounds of a shard, an all-gather's or reduce-scatter's n-1 of a block (count is a
  // rank's block there).
  const double each = call.collective == Collective::AllReduce ? 2.0 * (n - 1) * bytes / n : (n - 1) * bytes;
  for (int r = 0; r < n; ++r) {
    load.out(r, each);
    load.in(r, each);
  }
  return load.take();
}

std::vector<coll::Plan> stagedPlans(const Call& call, const Fabric& fabric, const HostSettings& settings) {
  const int n = fabric.ranks();
  const coll::RankLinks links = linksOf(fabric);
  std::vector<coll::Plan> plans;
  if (call.collective == Collective::SendRecv) {
    // peerlink coll's send/recv: the ring shift, each rank sending to the next (coll::stagedCallShape's).
    std::vector<coll::PointToPoint> ring;
    for (int r = 0; r < n; ++r) ring.push_back({(r + n - 1) % n, r, call.count});
    for (coll::StagedPiece& piece :
         coll::stagedPieces(ring, n, call.type, links, settings.chunkBytes, coll::kPlanStageBytes)) {
      plans.push_back(std::move(piece.plan));
    }
    return plans;
  }
  for (coll::StagedSegment& segment : coll::stagedSegments(call.collective, n, call.count, call.root, call.type, links,
                                                           settings.chunkBytes, coll::kPlanStageBytes)) {
    plans.push_back(std::move(segment.plan));
  }
  return plans;
}

}  // namespace

HostSettings hostSettingsOf(const Params& params, int ranks) {
  HostSettings settings;
  settings.ringMaxBytes = static_cast<std::size_t>(params.getInt("PEERLINK_COLL_HOST_RING"));
  if (const auto shape = coll::hostRingShapeNamed(params.getString("PEERLINK_COLL_HOST_RING_SHAPE"))) {
    settings.ringBlocks = shape->blocks;
    settings.ringSlotBytes = shape->slotBytes;
  }
  settings.chunkBytes = coll::stagedChunkBytes(params);
  settings.oneKernel = params.getBool("PEERLINK_COLL_STAGED_KERNEL");
  settings.forcedPairs = coll::forcedHostStagedPairs(params.getString("PEERLINK_COLL_HOST_STAGED"), ranks);
  return settings;
}

HostPath hostPathOf(const Call& call, int ranks, const HostSettings& settings, bool acrossProcesses) {
  // Send/recv as `peerlink coll` times it: the ring shift, which a process driving every rank sends as a group, and
  // processes of a rank each rank by rank.
  const coll::StagedWay way = coll::stagedWayOf(call.collective, call.count, call.type, ranks, settings.ringMaxBytes,
                                                settings.oneKernel, acrossProcesses);
  return *costedHostPath(way);
}

coll::HostRingShape hostRingShapeOf(Collective collective, const HostSettings& settings) {
  const std::optional<coll::HostRingShape> chosen =
      settings.ringBlocks > 0 ? std::optional<coll::HostRingShape>({settings.ringBlocks, settings.ringSlotBytes})
                              : std::nullopt;
  // The model has a GPU per rank: the communicator's grid cap (the GPU's SMs) is above the host ring's largest grid.
  return coll::hostRingShape(collective, chosen, kernels::kHostRingMaxBlocks);
}

HostTraffic hostTraffic(const Call& call, const Fabric& fabric, const HostSettings& settings,
                        std::optional<HostPath> path) {
  HostTraffic traffic;
  traffic.path = path ? *path : hostPathOf(call, fabric.ranks(), settings);
  const int n = fabric.ranks();
  switch (traffic.path) {
    case HostPath::Lines: traffic.steps.push_back(linesTraffic(call, fabric)); break;
    case HostPath::PairByPair: {
      // The ring shift: every rank sends the next its message and receives the previous one's, through host memory.
      const double message = static_cast<double>(call.count * dataTypeSize(call.type));
      HostLoader sends(fabric);
      HostLoader receives(fabric);
      for (int r = 0; r < n; ++r) {
        sends.out(r, message);
        receives.in(r, message);
      }
      traffic.steps.push_back(sends.take());
      traffic.steps.push_back(receives.take());
      break;
    }
    case HostPath::Ring:
    case HostPath::Chain: {
      const coll::HostRingShape shape = hostRingShapeOf(call.collective, settings);
      traffic.blocks = shape.blocks;
      traffic.slotBytes = shape.slotBytes;
      traffic.steps.push_back(ringTraffic(call, fabric, coll::chooseRing(linksOf(fabric))));
      if (traffic.path == HostPath::Chain && n > 2) {
        // The last rank's first slot crosses n - 1 hops; the links past the root idle until it reaches them.
        const double grain = static_cast<double>(shape.blocks) * static_cast<double>(shape.slotBytes);
        traffic.fillBytes = (n - 2) * std::min(grain, static_cast<double>(call.count * dataTypeSize(call.type)));
      }
      break;
    }
    case HostPath::PlanKernel:
    case HostPath::PlanSteps: {
      HostLoader load(fabric);
      for (const coll::Plan& plan : stagedPlans(call, fabric, settings)) {
        for (const coll::Step& step : plan.steps) {
          for (const coll::Transfer& transfer : step.transfers) load.add(transfer, dataTypeSize(plan.type));
          traffic.steps.push_back(load.take());
        }
      }
      break;
    }
  }
  return traffic;
}

}  // namespace peerlink::plan
