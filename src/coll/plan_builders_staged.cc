// Plans over a mix of direct, relayed and host-staged pairs (plan_staged.hpp). Race-free under the step model
// of plan.hpp because every chunk has its own offsets in every buffer (scratch and host stages mirror the data's
// offsets), and within a chunk a hop reads only what an earlier phase wrote: hop h reads at phase 2h what hop
// h-1 stored by phase 2h-1. The host executor checks it, and checkPlanLinks that no transfer crosses a pair
// other than directly where the links say so.
#include "coll/plan_staged.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "coll/plan_builder.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// The ring's order and each rank's place in it.
class Ring {
 public:
  explicit Ring(std::vector<int> order) : order_(std::move(order)), pos_(order_.size()) {
    for (std::size_t i = 0; i < order_.size(); ++i) pos_[static_cast<std::size_t>(order_[i])] = static_cast<int>(i);
  }
  /// The rank `steps` places after `rank` along the ring.
  int after(int rank, int steps) const {
    const int n = static_cast<int>(order_.size());
    return order_[static_cast<std::size_t>((pos_[static_cast<std::size_t>(rank)] + steps) % n)];
  }

 private:
  std::vector<int> order_;
  std::vector<int> pos_;
};

// Moves chunks between ranks the way their pair allows (the header's two phases per hop), and sizes the host
// stages it uses.
class HopMover {
 public:
  HopMover(PlanBuilder& b, const RankLinks& links) : b_(b), links_(links), stage_(links.nranks, 0) {}

  /// dst (on `to`) = srcs (on `from`) reduced, or copied where there is one source, as hop slot `slot` of chunk
  /// `c`; a host stage holds it at `stageOffset` of `from`'s stage.
  void hop(std::size_t c, int slot, int from, int to, BufferRef dst, std::vector<BufferRef> srcs, std::size_t count,
           std::size_t stageOffset) {
    if (count == 0) return;
    const int first = 2 * slot;
    const int second = first + 1;
    const bool reduce = srcs.size() > 1;
    switch (links_.way(from, to)) {
      case PairWay::Direct: put(c, second, from, dst, std::move(srcs), count); return;
      case PairWay::Relay: put(c, second, links_.relay(from, to), dst, std::move(srcs), count); return;
      case PairWay::HostStaged: {
        const BufferRef stage{from, BufferKind::HostStage, stageOffset};
        stage_[static_cast<std::size_t>(from)] = std::max(stage_[static_cast<std::size_t>(from)], stageOffset + count);
        if (reduce) {
          b_.reduce(c, first, stage, std::move(srcs), count, false);
        } else {
          b_.copy(c, first, stage, srcs.front(), count);
        }
        b_.copy(c, second, dst, stage, count);
        return;
      }
    }
  }

  /// Each rank's host stage, in elements, after every hop was added.
  const std::vector<std::size_t>& stageElements() const { return stage_; }

 private:
  void put(std::size_t c, int phase, int executor, BufferRef dst, std::vector<BufferRef> srcs, std::size_t count) {
    if (srcs.size() > 1) {
      b_.pushReduce(c, phase, executor, dst, std::move(srcs), count, false);
    } else {
      b_.pushCopy(c, phase, executor, dst, srcs.front(), count);
    }
  }

  PlanBuilder& b_;
  const RankLinks& links_;
  std::vector<std::size_t> stage_;
};

// The chain that reduces the range at `at` of every rank's send data into `out` on rank `end`: the rank after
// `end` starts by sending its data, each next rank adds its own, `end` adds its own last and finishes (phase
// 2(n-1), after the last hop). Hop slots 0..n-2.
void reduceChain(PlanBuilder& b, HopMover& mover, const Ring& ring, std::size_t c, std::size_t at, std::size_t count,
                 int end, BufferRef out) {
  const int n = b.nranks();
  for (int i = 0; i + 1 < n; ++i) {
    const int r = ring.after(end, 1 + i);
    const int next = ring.after(r, 1);
    std::vector<BufferRef> srcs = {b.send(r, at)};
    if (i > 0) srcs.insert(srcs.begin(), b.scratch(r, at));
    mover.hop(c, i, r, next, b.scratch(next, at), std::move(srcs), count, at);
  }
  b.reduce(c, 2 * (n - 1), out, {b.scratch(end, at), b.send(end, at)}, count, true);
}

// The chain that passes `count` elements from `src` on rank `start` to every other rank's recv at `recvAt`,
// forwarded along the ring, in hop slots firstSlot to firstSlot + n - 2; host stages hold them at `recvAt` too.
void passChain(PlanBuilder& b, HopMover& mover, const Ring& ring, std::size_t c, int start, BufferRef src,
               std::size_t recvAt, std::size_t count, int firstSlot) {
  for (int h = 0; h + 1 < b.nranks(); ++h) {
    const int from = ring.after(start, h);
    const int to = ring.after(from, 1);
    mover.hop(c, firstSlot + h, from, to, b.recv(to, recvAt), {h == 0 ? src : b.recv(from, recvAt)}, count, recvAt);
  }
}

void setScratch(PlanBuilder& b, std::size_t elements) {
  for (int r = 0; r < b.nranks(); ++r) b.setScratch(r, elements);
}

void buildAllReduce(PlanBuilder& b, HopMover& mover, const Ring& ring) {
  const int n = b.nranks();
  setScratch(b, b.count());
  b.setChunks(b.shard(b.count(), 0).count);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    for (int j = 0; j < n; ++j) {
      const ElementRange ch = b.chunk(b.shard(b.count(), j), c);
      reduceChain(b, mover, ring, c, ch.begin, ch.count, j, b.recv(j, ch.begin));
      passChain(b, mover, ring, c, j, b.recv(j, ch.begin), ch.begin, ch.count, n);
    }
  }
}

void buildReduceScatter(PlanBuilder& b, HopMover& mover, const Ring& ring) {
  const std::size_t block = b.count();
  setScratch(b, block * static_cast<std::size_t>(b.nranks()));
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    for (int j = 0; j < b.nranks(); ++j) {
      reduceChain(b, mover, ring, c, static_cast<std::size_t>(j) * block + ch.begin, ch.count, j, b.recv(j, ch.begin));
    }
  }
}

void buildReduce(PlanBuilder& b, HopMover& mover, const Ring& ring) {
  setScratch(b, b.count());
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    reduceChain(b, mover, ring, c, ch.begin, ch.count, b.root(), b.recv(b.root(), ch.begin));
  }
}

void buildBroadcast(PlanBuilder& b, HopMover& mover, const Ring& ring) {
  const int root = b.root();
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    if (!b.inPlace()) b.copy(c, 0, b.recv(root, ch.begin), b.send(root, ch.begin), ch.count);
    passChain(b, mover, ring, c, root, b.send(root, ch.begin), ch.begin, ch.count, 0);
  }
}

// Block q starts at rank q and is forwarded along the ring; out of place each rank also copies its own block.
void buildAllGather(PlanBuilder& b, HopMover& mover, const Ring& ring) {
  const std::size_t block = b.count();
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    for (int q = 0; q < b.nranks(); ++q) {
      const std::size_t at = static_cast<std::size_t>(q) * block + ch.begin;
      if (!b.inPlace()) b.copy(c, 0, b.recv(q, at), b.send(q, ch.begin), ch.count);
      passChain(b, mover, ring, c, q, b.send(q, ch.begin), at, ch.count, 0);
    }
  }
}

// Every ordered pair in one hop: block r of q's send data into block q of r's recv; a rank's own block locally.
void buildAllToAll(PlanBuilder& b, HopMover& mover) {
  const std::size_t block = b.count();
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    const auto at = [&](int index) { return static_cast<std::size_t>(index) * block + ch.begin; };
    for (int q = 0; q < b.nranks(); ++q) {
      for (int r = 0; r < b.nranks(); ++r) {
        if (q == r) {
          b.copy(c, 0, b.recv(q, at(q)), b.send(q, at(q)), ch.count);
        } else {
          mover.hop(c, 0, q, r, b.recv(r, at(q)), {b.send(q, at(r))}, ch.count, at(r));
        }
      }
    }
  }
}

void buildSendRecvShift(PlanBuilder& b, HopMover& mover) {
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    for (int r = 0; r < b.nranks(); ++r) {
      const int from = b.wrap(r - 1);
      mover.hop(c, 0, from, r, b.recv(r, ch.begin), {b.send(from, ch.begin)}, ch.count, ch.begin);
    }
  }
}

void requireLinksFor(const RankLinks& links, int nranks, const std::string& what) {
  if (links.nranks != nranks) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}: rank links of {} ranks for {} ranks", what, links.nranks, nranks));
  }
  validateRankLinks(links);
}

void finish(Plan& plan, PlanBuilder& b, const HopMover& mover) {
  b.emit(true);
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) plan.ranks[r].hostStageElements = mover.stageElements()[r];
}

}  // namespace

bool needsStagedPlans(const RankLinks& links) {
  for (int s = 0; s < links.nranks; ++s) {
    for (int d = 0; d < links.nranks; ++d) {
      if (s != d && links.way(s, d) != PairWay::Direct) return true;
    }
  }
  return false;
}

Plan buildStagedPlan(Collective collective, int nranks, std::size_t count, int root, bool inPlace,
                     std::size_t chunkElements, DataType type, const RankLinks& links) {
  // The one-shot plan brings the header and the layout every algorithm shares (and validates the arguments).
  Plan plan = buildPlan(collective, Algorithm::OneShot, nranks, count, root, inPlace, chunkElements, type);
  requireLinksFor(links, nranks, planName(plan));
  if (nranks == 1) return plan;  // a local copy: no pair to cross
  plan.steps.clear();
  for (RankLayout& layout : plan.ranks) layout.scratchElements = 0;
  const bool ring = collective != Collective::AllToAll && collective != Collective::SendRecv;
  plan.algorithm = ring ? Algorithm::Ring : Algorithm::OneShot;
  PlanBuilder b(plan);
  HopMover mover(b, links);
  const Ring order(chooseRing(links));
  switch (collective) {
    case Collective::AllReduce: buildAllReduce(b, mover, order); break;
    case Collective::ReduceScatter: buildReduceScatter(b, mover, order); break;
    case Collective::Reduce: buildReduce(b, mover, order); break;
    case Collective::Broadcast: buildBroadcast(b, mover, order); break;
    case Collective::AllGather: buildAllGather(b, mover, order); break;
    case Collective::AllToAll: buildAllToAll(b, mover); break;
    case Collective::SendRecv: buildSendRecvShift(b, mover); break;
  }
  finish(plan, b, mover);
  return plan;
}

Plan buildStagedSendRecvPlan(const std::vector<PointToPoint>& pairs, DataType type, std::size_t chunkElements,
                             const RankLinks& links) {
  // The plain plan brings the layout (each rank's sends and receives back to back, in the order given).
  Plan plan = buildSendRecvPlan(links.nranks, pairs, type, chunkElements);
  requireLinksFor(links, plan.nranks, planName(plan));
  plan.steps.clear();
  PlanBuilder b(plan);
  HopMover mover(b, links);
  std::size_t largest = 0;
  for (const PointToPoint& pair : pairs) largest = std::max(largest, pair.count);
  b.setChunks(largest);
  std::vector<std::size_t> sent(plan.ranks.size(), 0);
  std::vector<std::size_t> received(plan.ranks.size(), 0);
  for (const PointToPoint& pair : pairs) {
    std::size_t& from = sent[static_cast<std::size_t>(pair.from)];
    std::size_t& to = received[static_cast<std::size_t>(pair.to)];
    for (std::size_t c = 0; c < b.chunks(); ++c) {
      const ElementRange ch = b.chunk({0, pair.count}, c);
      mover.hop(c, 0, pair.from, pair.to, {pair.to, BufferKind::Output, to + ch.begin},
                {{pair.from, BufferKind::Input, from + ch.begin}}, ch.count, from + ch.begin);
    }
    from += pair.count;
    to += pair.count;
  }
  finish(plan, b, mover);
  return plan;
}

}  // namespace peerlink::coll
