// Hierarchical plans (hierarchical_plan.hpp): the shapes as group calls, and their expansion into one plan over
// every rank. Each call's flat plan (buildPlan) is built for the group's ranks and remapped: member m's Input and
// Output become the ranges its call names, its Scratch a region of the rank's scratch above what earlier calls
// of the phase took there. The calls of a phase are merged step by step (step k of the phase is step k of every
// call), so they run side by side; phases follow one another.
#include <algorithm>
#include <sstream>

#include "coll/choice_rules.hpp"
#include "coll/hierarchical_plan.hpp"
#include "coll/partition.hpp"
#include "coll/plan_builder.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

BufferRef shifted(BufferRef ref, std::size_t offset) {
  ref.offset += offset;
  return ref;
}

Algorithm pick(Algorithm wanted, Algorithm automatic, Collective collective) {
  const std::vector<Algorithm> available = algorithmsOf(collective);
  if (wanted == Algorithm::Auto) wanted = automatic;
  if (std::find(available.begin(), available.end(), wanted) != available.end()) return wanted;
  return available.front();
}

using Where = std::pair<BufferRef, BufferRef>;

// In place, one buffer is the other as the API says (communicator.hpp): the call names both the way a caller
// passes them. The flat plan addresses only that buffer, so the expansion is the same either way.
void inPlaceRefs(GroupCall& call) {
  for (std::size_t m = 0; m < call.members.size(); ++m) {
    const std::size_t block = m * call.count;
    switch (call.collective) {
      case Collective::AllGather: call.sends[m] = shifted(call.recvs[m], block); break;
      case Collective::ReduceScatter: call.recvs[m] = shifted(call.sends[m], block); break;
      case Collective::Reduce:  // in place at the root; the others keep their send
        if (m == static_cast<std::size_t>(call.root)) call.sends[m] = call.recvs[m];
        break;
      default: call.sends[m] = call.recvs[m];
    }
  }
}

class Shapes {
 public:
  Shapes(Plan& plan, NodeGrid grid, HierarchyAlgorithms algorithms)
      : plan_(plan), grid_(grid), algorithms_(algorithms) {}

  int nodes() const { return grid_.nodes; }
  int locals() const { return grid_.ranksPerNode; }
  std::size_t count() const { return plan_.count; }
  bool inPlace() const { return plan_.inPlace; }
  int rootNode() const { return grid_.nodeOf(plan_.root); }
  int rootLocal() const { return grid_.localOf(plan_.root); }

  BufferRef send(int rank, std::size_t offset = 0) const { return shifted(layout(rank).send, offset); }
  BufferRef recv(int rank, std::size_t offset = 0) const { return shifted(layout(rank).recv, offset); }
  BufferRef scratch(int rank, std::size_t offset = 0) const { return {rank, BufferKind::Scratch, offset}; }

  /// Scratch the shape itself keeps (intermediate results) at the bottom of every rank's scratch.
  void reserveScratch(std::size_t elements) { reserved_ = elements; }
  std::size_t reserved() const { return reserved_; }

  /// A call of `collective` over the node's ranks (InNode) or the rail's (AcrossNodes); `at(member rank)` gives
  /// the member's send and recv.
  template <typename Where>
  GroupCall call(Scope scope, int group, Collective collective, std::size_t count, int root, bool inPlace,
                 bool finishes, Where at) const {
    GroupCall c;
    c.scope = scope;
    c.group = group;
    c.collective = collective;
    c.algorithm = scope == Scope::InNode
                      ? pick(algorithms_.inNode, Algorithm::OneShot, collective)
                      : pick(algorithms_.acrossNodes, acrossNodesAlgorithm(collective, nodes()), collective);
    c.count = count;
    c.root = root;
    c.inPlace = inPlace;
    c.finishes = finishes;
    const int size = scope == Scope::InNode ? locals() : nodes();
    for (int m = 0; m < size; ++m) {
      const int rank = scope == Scope::InNode ? grid_.rankOf(group, m) : grid_.rankOf(m, group);
      const auto [sendRef, recvRef] = at(rank);
      c.members.push_back(rank);
      c.sends.push_back(sendRef);
      c.recvs.push_back(recvRef);
    }
    if (inPlace) inPlaceRefs(c);
    return c;
  }

 private:
  const RankLayout& layout(int rank) const { return plan_.ranks[static_cast<std::size_t>(rank)]; }

  Plan& plan_;
  NodeGrid grid_;
  HierarchyAlgorithms algorithms_;
  std::size_t reserved_ = 0;
};

// Reductions finish in the last phase that reduces across more than one rank: across nodes when there are
// several nodes, else in the node.
std::vector<Phase> allReduceShape(Shapes& s, std::size_t align) {
  Phase scatter{"reduce-scatter in the node", Scope::InNode, {}};
  Phase across{"all-reduce across nodes", Scope::AcrossNodes, {}};
  Phase gather{"all-gather in the node", Scope::InNode, {}};
  for (int l = 0; l < s.locals(); ++l) {
    const ElementRange shard = partitionRange(s.count(), s.locals(), l, align);
    if (shard.count == 0) continue;
    const auto at = [&](int r) { return Where{s.send(r, shard.begin), s.recv(r, shard.begin)}; };
    for (int i = 0; i < s.nodes(); ++i) {
      scatter.calls.push_back(
          s.call(Scope::InNode, i, Collective::Reduce, shard.count, l, s.inPlace(), s.nodes() == 1, at));
      gather.calls.push_back(s.call(Scope::InNode, i, Collective::Broadcast, shard.count, l, true, false, at));
    }
    if (s.nodes() > 1) {
      across.calls.push_back(
          s.call(Scope::AcrossNodes, l, Collective::AllReduce, shard.count, 0, true, true, [&](int r) {
            return Where{s.recv(r, shard.begin), s.recv(r, shard.begin)};
          }));
    }
  }
  return {scatter, across, gather};
}

std::vector<Phase> reduceScatterShape(Shapes& s) {
  const std::size_t c = s.count();
  const std::size_t nodeBlocks = c * static_cast<std::size_t>(s.locals());
  Phase inNode{"reduce-scatter in the node", Scope::InNode, {}};
  if (s.nodes() == 1) {
    // In place the flat plan finds each member's recv as block l of its send, where the API puts it.
    inNode.calls.push_back(s.call(Scope::InNode, 0, Collective::ReduceScatter, c, 0, s.inPlace(), true, [&](int r) {
      return Where{s.send(r), s.recv(r)};
    }));
    return {inNode};
  }
  s.reserveScratch(c * static_cast<std::size_t>(s.nodes()));
  for (int i = 0; i < s.nodes(); ++i) {
    for (int j = 0; j < s.nodes(); ++j) {
      const auto at = [&](int r) { return Where{s.send(r, j * nodeBlocks), s.scratch(r, j * c)}; };
      inNode.calls.push_back(s.call(Scope::InNode, i, Collective::ReduceScatter, c, 0, false, false, at));
    }
  }
  Phase across{"reduce-scatter across nodes", Scope::AcrossNodes, {}};
  for (int l = 0; l < s.locals(); ++l) {
    across.calls.push_back(s.call(Scope::AcrossNodes, l, Collective::ReduceScatter, c, 0, false, true, [&](int r) {
      return Where{s.scratch(r), s.recv(r)};
    }));
  }
  return {inNode, across};
}

std::vector<Phase> allGatherShape(Shapes& s) {
  const std::size_t c = s.count();
  Phase inNode{"all-gather in the node", Scope::InNode, {}};
  if (s.nodes() == 1) {
    // In place the flat plan finds each member's send as block l of its recv, where the API puts it.
    inNode.calls.push_back(s.call(Scope::InNode, 0, Collective::AllGather, c, 0, s.inPlace(), false, [&](int r) {
      return Where{s.send(r), s.recv(r)};
    }));
    return {inNode};
  }
  s.reserveScratch(c * static_cast<std::size_t>(s.nodes()));
  Phase across{"all-gather across nodes", Scope::AcrossNodes, {}};
  for (int l = 0; l < s.locals(); ++l) {
    across.calls.push_back(s.call(Scope::AcrossNodes, l, Collective::AllGather, c, 0, false, false, [&](int r) {
      return Where{s.send(r), s.scratch(r)};
    }));
  }
  const std::size_t nodeBlocks = c * static_cast<std::size_t>(s.locals());
  for (int i = 0; i < s.nodes(); ++i) {
    for (int j = 0; j < s.nodes(); ++j) {
      inNode.calls.push_back(s.call(Scope::InNode, i, Collective::AllGather, c, 0, false, false, [&](int r) {
        return Where{s.scratch(r, j * c), BufferRef{r, BufferKind::Output, j * nodeBlocks}};
      }));
    }
  }
  return {across, inNode};
}

std::vector<Phase> broadcastShape(Shapes& s) {
  const auto at = [&](int r) { return Where{s.send(r), s.recv(r)}; };
  Phase across{"broadcast across nodes", Scope::AcrossNodes, {}};
  if (s.nodes() > 1) {
    across.calls.push_back(s.call(Scope::AcrossNodes, s.rootLocal(), Collective::Broadcast, s.count(), s.rootNode(),
                                  s.inPlace(), false, at));
  }
  // Once the root's rail has the data in its outputs, every node broadcasts in place from the root's local index.
  Phase inNode{"broadcast in the node", Scope::InNode, {}};
  for (int i = 0; i < s.nodes(); ++i) {
    const bool inPlace = s.nodes() > 1 || s.inPlace();
    inNode.calls.push_back(
        s.call(Scope::InNode, i, Collective::Broadcast, s.count(), s.rootLocal(), inPlace, false, at));
  }
  return {across, inNode};
}

std::vector<Phase> reduceShape(Shapes& s) {
  Phase inNode{"reduce in the node", Scope::InNode, {}};
  if (s.nodes() == 1) {
    inNode.calls.push_back(
        s.call(Scope::InNode, 0, Collective::Reduce, s.count(), s.rootLocal(), s.inPlace(), true, [&](int r) {
          return Where{s.send(r), s.recv(r)};
        }));
    return {inNode};
  }
  s.reserveScratch(s.count());
  for (int i = 0; i < s.nodes(); ++i) {
    inNode.calls.push_back(
        s.call(Scope::InNode, i, Collective::Reduce, s.count(), s.rootLocal(), false, false, [&](int r) {
          return Where{s.send(r), s.scratch(r)};
        }));
  }
  Phase across{"reduce across nodes", Scope::AcrossNodes, {}};
  across.calls.push_back(
      s.call(Scope::AcrossNodes, s.rootLocal(), Collective::Reduce, s.count(), s.rootNode(), false, true, [&](int r) {
        return Where{s.scratch(r), s.recv(r)};
      }));
  return {inNode, across};
}

std::vector<Phase> allToAllShape(Shapes& s) {
  const std::size_t c = s.count();
  Phase inNode{"all-to-all in the node", Scope::InNode, {}};
  if (s.nodes() == 1) {
    inNode.calls.push_back(s.call(Scope::InNode, 0, Collective::AllToAll, c, 0, false, false, [&](int r) {
      return Where{s.send(r), s.recv(r)};
    }));
    return {inNode};
  }
  // Across nodes first: rank (i, l) sends node j the G blocks meant for its ranks, contiguous in its send buffer;
  // scratch then holds, at (j * G + l') * c, what rank (j, l) sent rank (i, l'), which the node's all-to-all j
  // delivers.
  const std::size_t nodeBlocks = c * static_cast<std::size_t>(s.locals());
  s.reserveScratch(nodeBlocks * static_cast<std::size_t>(s.nodes()));
  Phase across{"all-to-all across nodes", Scope::AcrossNodes, {}};
  for (int l = 0; l < s.locals(); ++l) {
    across.calls.push_back(s.call(Scope::AcrossNodes, l, Collective::AllToAll, nodeBlocks, 0, false, false, [&](int r) {
      return Where{s.send(r), s.scratch(r)};
    }));
  }
  for (int i = 0; i < s.nodes(); ++i) {
    for (int j = 0; j < s.nodes(); ++j) {
      inNode.calls.push_back(s.call(Scope::InNode, i, Collective::AllToAll, c, 0, false, false, [&](int r) {
        return Where{s.scratch(r, j * nodeBlocks), s.recv(r, j * nodeBlocks)};
      }));
    }
  }
  return {across, inNode};
}

// The ring shift (rank r receives rank r - 1's buffer), each pair a call of two members: sender, receiver.
std::vector<Phase> sendRecvShape(Shapes& s, const NodeGrid& grid) {
  Phase inNode{"send/recv in the node", Scope::InNode, {}};
  Phase across{"send/recv across nodes", Scope::AcrossNodes, {}};
  across.withPrevious = true;
  const int n = grid.size();
  for (int to = 0; to < n; ++to) {
    const int from = (to + n - 1) % n;
    GroupCall c;
    c.collective = Collective::SendRecv;
    c.count = s.count();
    c.members = {from, to};
    c.sends = {s.send(from), s.send(to)};
    c.recvs = {s.recv(from), s.recv(to)};
    c.scope = grid.nodeOf(from) == grid.nodeOf(to) ? Scope::InNode : Scope::AcrossNodes;
    c.group = c.scope == Scope::InNode ? grid.nodeOf(from) : grid.localOf(from);
    (c.scope == Scope::InNode ? inNode : across).calls.push_back(c);
  }
  return {inNode, across};
}

// One rank per node, several nodes: the node's calls of the shapes above would only copy (into scratch, or the send
// buffer into the recv buffer), so the collective runs across nodes alone, from the caller's buffers to its own.
// (A broadcast's shape already does: its call in the node, in place, has nothing to do.)
std::vector<Phase> acrossNodesOnlyShape(Shapes& s, Collective collective) {
  std::string name = collectiveName(collective);
  std::replace(name.begin(), name.end(), '_', '-');
  Phase across{name + " across nodes", Scope::AcrossNodes, {}};
  const int root = hasRoot(collective) ? s.rootNode() : 0;
  const bool inPlace = collective != Collective::AllToAll && s.inPlace();
  across.calls.push_back(
      s.call(Scope::AcrossNodes, 0, collective, s.count(), root, inPlace, reduces(collective), [&](int r) {
        return Where{s.send(r), s.recv(r)};
      }));
  return {across};
}

// A call's flat plan: buildPlan over its members, or one send/recv pair.
Plan flatPlanOf(const GroupCall& call, std::size_t chunkElements, DataType type) {
  if (call.collective == Collective::SendRecv) {
    return buildSendRecvPlan(2, {PointToPoint{0, 1, call.count}}, type, chunkElements);
  }
  return buildPlan(call.collective, call.algorithm, static_cast<int>(call.members.size()), call.count, call.root,
                   call.inPlace, chunkElements, type);
}

class Expander {
 public:
  Expander(Plan& plan, std::size_t reserved) : plan_(plan), reserved_(reserved) {}

  // Appends the phase's steps; drops calls with nothing to do. Returns false when none is left.
  bool add(Phase& phase, std::size_t chunkElements) {
    std::vector<std::size_t> cursor(plan_.ranks.size(), reserved_);
    std::vector<Step> steps;
    std::vector<GroupCall> kept;
    for (GroupCall& call : phase.calls) {
      const Plan flat = flatPlanOf(call, chunkElements, plan_.type);
      if (flat.steps.empty()) continue;
      std::vector<std::size_t> base;
      for (std::size_t m = 0; m < call.members.size(); ++m) {
        std::size_t& top = cursor[static_cast<std::size_t>(call.members[m])];
        base.push_back(top);
        top += flat.ranks[m].scratchElements;
      }
      if (steps.size() < flat.steps.size()) steps.resize(flat.steps.size());
      for (std::size_t k = 0; k < flat.steps.size(); ++k) {
        for (Transfer transfer : flat.steps[k].transfers) {
          transfer.executor = call.members[static_cast<std::size_t>(transfer.executor)];
          transfer.dst = remap(call, base, transfer.dst);
          for (BufferRef& src : transfer.srcs) src = remap(call, base, src);
          transfer.finish = transfer.finish && call.finishes;
          steps[k].transfers.push_back(std::move(transfer));
        }
      }
      kept.push_back(std::move(call));
    }
    phase.calls = std::move(kept);
    if (phase.calls.empty()) return false;
    for (std::size_t r = 0; r < cursor.size(); ++r) {
      plan_.ranks[r].scratchElements = std::max(plan_.ranks[r].scratchElements, cursor[r]);
    }
    if (phase.withPrevious && !plan_.steps.empty()) {
      // Side by side with the phase before: its steps from that phase's first on.
      const std::size_t first = previousFirst_;
      if (plan_.steps.size() < first + steps.size()) plan_.steps.resize(first + steps.size());
      for (std::size_t k = 0; k < steps.size(); ++k) {
        Step& into = plan_.steps[first + k];
        for (Transfer& transfer : steps[k].transfers) into.transfers.push_back(std::move(transfer));
        into.acrossNodes = into.acrossNodes || phase.scope == Scope::AcrossNodes;
      }
      phase.firstStep = first;
      phase.endStep = first + steps.size();
      return true;
    }
    phase.firstStep = plan_.steps.size();
    previousFirst_ = phase.firstStep;
    for (Step& step : steps) {
      step.acrossNodes = phase.scope == Scope::AcrossNodes;
      plan_.steps.push_back(std::move(step));
    }
    phase.endStep = plan_.steps.size();
    return true;
  }

 private:
  static BufferRef remap(const GroupCall& call, const std::vector<std::size_t>& base, const BufferRef& ref) {
    const auto m = static_cast<std::size_t>(ref.rank);
    switch (ref.buffer) {
      case BufferKind::Input: return shifted(call.sends[m], ref.offset);
      case BufferKind::Output: return shifted(call.recvs[m], ref.offset);
      case BufferKind::Scratch: break;
      case BufferKind::HostStage:  // only the staged plans (plan_builders_staged.cc) have one
        throw Error(ErrorCode::Internal, "a group call's plan names a host stage");
    }
    return {call.members[m], BufferKind::Scratch, base[m] + ref.offset};
  }

  Plan& plan_;
  std::size_t reserved_;
  std::size_t previousFirst_ = 0;
};

std::string memberList(const std::vector<int>& members) {
  std::string text;
  for (const int rank : members) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

}  // namespace

const char* scopeName(Scope scope) noexcept {
  return scope == Scope::InNode ? "in the node" : "across nodes";
}

ReduceOp groupReduceOp(const GroupCall& call, ReduceOp op) noexcept {
  return op == ReduceOp::Avg && !call.finishes ? ReduceOp::Sum : op;
}

int groupAvgDivisor(const GroupCall& call, const NodeGrid& grid) noexcept {
  return call.finishes ? grid.size() : 1;
}

Algorithm acrossNodesAlgorithm(Collective collective, int nodes) {
  if ((collective == Collective::AllReduce && nodes == 2) ||
      (collective == Collective::ReduceScatter && nodes >= 2 && nodes <= kOneShotReduceScatterRanksMax)) {
    return Algorithm::OneShot;
  }
  const std::vector<Algorithm> available = algorithmsOf(collective);
  const bool ring = std::find(available.begin(), available.end(), Algorithm::Ring) != available.end();
  return ring ? Algorithm::Ring : available.front();
}

HierarchicalPlan buildHierarchicalPlan(Collective collective, NodeGrid grid, std::size_t count, int root, bool inPlace,
                                       std::size_t chunkElements, DataType type, HierarchyAlgorithms algorithms) {
  if (grid.nodes < 1 || grid.ranksPerNode < 1) {
    throw Error(ErrorCode::InvalidUsage, "a hierarchical plan needs at least 1 node of at least 1 rank, got " +
                                             std::to_string(grid.nodes) + " nodes of " +
                                             std::to_string(grid.ranksPerNode));
  }
  // buildPlan checks the arguments (root, in place); the layout is the flat call's.
  HierarchicalPlan h;
  h.grid = grid;
  h.plan = buildPlan(collective, algorithmsOf(collective).front(), grid.size(), 0, root, inPlace, 0, type);
  h.plan.count = count;
  h.plan.chunkElements = chunkElements;
  h.plan.ranksPerNode = grid.ranksPerNode;
  h.plan.steps.clear();
  fillLayout(h.plan);

  Shapes shapes(h.plan, grid, algorithms);
  std::vector<Phase> phases;
  const bool oneRankPerNode = grid.ranksPerNode == 1 && grid.nodes > 1;
  if (oneRankPerNode && collective != Collective::Broadcast && collective != Collective::SendRecv) {
    phases = acrossNodesOnlyShape(shapes, collective);
  } else {
    switch (collective) {
      case Collective::AllReduce: phases = allReduceShape(shapes, h.plan.alignElements); break;
      case Collective::ReduceScatter: phases = reduceScatterShape(shapes); break;
      case Collective::AllGather: phases = allGatherShape(shapes); break;
      case Collective::Broadcast: phases = broadcastShape(shapes); break;
      case Collective::Reduce: phases = reduceShape(shapes); break;
      case Collective::AllToAll: phases = allToAllShape(shapes); break;
      case Collective::SendRecv: phases = sendRecvShape(shapes, grid); break;
    }
  }
  for (RankLayout& layout : h.plan.ranks) layout.scratchElements = shapes.reserved();
  Expander expander(h.plan, shapes.reserved());
  for (Phase& phase : phases) {
    if (expander.add(phase, chunkElements)) h.phases.push_back(std::move(phase));
  }
  return h;
}

std::vector<std::size_t> elementsSentAcrossNodes(const Plan& plan) {
  std::vector<std::size_t> sent(static_cast<std::size_t>(plan.nranks), 0);
  // The executor computes: sources on other nodes come to it, and its result goes to a destination elsewhere.
  for (const Step& step : plan.steps) {
    for (const Transfer& transfer : step.transfers) {
      const int node = nodeOfRank(plan, transfer.executor);
      for (const BufferRef& src : transfer.srcs) {
        if (nodeOfRank(plan, src.rank) != node) sent[static_cast<std::size_t>(src.rank)] += transfer.count;
      }
      if (nodeOfRank(plan, transfer.dst.rank) != node)
        sent[static_cast<std::size_t>(transfer.executor)] += transfer.count;
    }
  }
  return sent;
}

std::string describePhases(const HierarchicalPlan& plan) {
  std::ostringstream out;
  out << planName(plan.plan) << " on " << plan.grid.nodes << " nodes x " << plan.grid.ranksPerNode << " ranks\n";
  for (std::size_t p = 0; p < plan.phases.size(); ++p) {
    const Phase& phase = plan.phases[p];
    out << "phase " << p << " " << scopeName(phase.scope) << " (" << phase.name << "), steps " << phase.firstStep << "-"
        << phase.endStep << (phase.withPrevious ? ", with the phase before" : "") << ":\n";
    for (const GroupCall& call : phase.calls) {
      out << "  " << collectiveName(call.collective) << ' ' << algorithmName(call.algorithm) << " of ranks "
          << memberList(call.members) << ": count " << call.count;
      if (hasRoot(call.collective)) out << ", root member " << call.root;
      out << (call.inPlace ? ", in place" : "") << (call.finishes ? ", finishes" : "") << '\n';
    }
  }
  return out.str();
}

}  // namespace peerlink::coll
