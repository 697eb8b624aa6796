// Plans (plan.hpp): layouts, validation, dispatch to the builders (plan_builders.cc), the pipeline, and
// descriptions.
#include "coll/plan.hpp"

#include <algorithm>
#include <sstream>

#include "coll/plan_builder.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

// Where send and recv data lie. In place the API says which user buffer is the other's alias
// (communicator.hpp): the plan then addresses only that one, and the other is declared empty.
void fillLayout(Plan& plan) {
  const int n = plan.nranks;
  const std::size_t count = plan.count;
  plan.ranks.assign(static_cast<std::size_t>(n), RankLayout{});
  for (int r = 0; r < n; ++r) {
    RankLayout& layout = plan.ranks[static_cast<std::size_t>(r)];
    layout.sendElements = sendElementsOf(plan.collective, n, count, r, plan.root);
    layout.recvElements = recvElementsOf(plan.collective, n, count, r, plan.root);
    layout.send = {r, BufferKind::Input, 0};
    layout.recv = {r, BufferKind::Output, 0};
    layout.inputElements = layout.sendElements;
    layout.outputElements = layout.recvElements;
    if (!plan.inPlace) continue;
    const std::size_t rankBlock = static_cast<std::size_t>(r) * count;
    switch (plan.collective) {
      case Collective::AllReduce:
      case Collective::Broadcast:
      case Collective::Reduce:
        if (plan.collective != Collective::AllReduce && r != plan.root) break;  // in place concerns the root
        layout.send = {r, BufferKind::Output, 0};
        layout.inputElements = 0;
        break;
      case Collective::AllGather:
        layout.send = {r, BufferKind::Output, rankBlock};
        layout.inputElements = 0;
        break;
      case Collective::ReduceScatter:
        layout.recv = {r, BufferKind::Input, rankBlock};
        layout.outputElements = 0;
        break;
      case Collective::AllToAll:
      case Collective::SendRecv: break;
    }
  }
}

namespace {

void validate(Collective collective, Algorithm algorithm, int nranks, int root, bool inPlace) {
  const std::string what = std::string(collectiveName(collective)) + "/" + algorithmName(algorithm);
  if (nranks < 1)
    throw Error(ErrorCode::InvalidUsage, what + ": a plan needs at least 1 rank, got " + std::to_string(nranks));
  if (hasRoot(collective) && (root < 0 || root >= nranks)) {
    throw Error(ErrorCode::InvalidUsage,
                what + ": root " + std::to_string(root) + " is not a rank of " + std::to_string(nranks));
  }
  if (inPlace && (collective == Collective::AllToAll || collective == Collective::SendRecv)) {
    throw Error(ErrorCode::InvalidUsage, what + " has no in-place form (send and recv must not overlap)");
  }
}

using Builder = void (*)(PlanBuilder&);

Builder builderOf(Collective collective, Algorithm algorithm, bool push) {
  if (push) {
    if (collective == Collective::AllReduce && algorithm == Algorithm::TwoShot) return buildAllReduceTwoShotPush;
    if (collective == Collective::ReduceScatter && algorithm == Algorithm::OneShot) return buildReduceScatterPush;
    return nullptr;
  }
  struct Entry {
    Collective collective;
    Algorithm algorithm;
    Builder builder;
  };
  static const Entry kBuilders[] = {
      {Collective::AllReduce, Algorithm::OneShot, buildAllReduceOneShot},
      {Collective::AllReduce, Algorithm::TwoShot, buildAllReduceTwoShot},
      {Collective::AllReduce, Algorithm::Ring, buildAllReduceRing},
      {Collective::ReduceScatter, Algorithm::OneShot, buildReduceScatterDirect},
      {Collective::ReduceScatter, Algorithm::Ring, buildReduceScatterRing},
      {Collective::AllGather, Algorithm::OneShot, buildAllGatherDirect},
      {Collective::AllGather, Algorithm::Ring, buildAllGatherRing},
      {Collective::Broadcast, Algorithm::OneShot, buildBroadcastDirect},
      {Collective::Broadcast, Algorithm::TwoShot, buildBroadcastTwoShot},
      {Collective::Broadcast, Algorithm::Ring, buildBroadcastRing},
      {Collective::Reduce, Algorithm::OneShot, buildReduceDirect},
      {Collective::Reduce, Algorithm::TwoShot, buildReduceTwoShot},
      {Collective::Reduce, Algorithm::Ring, buildReduceRing},
      {Collective::AllToAll, Algorithm::OneShot, buildAllToAllDirect},
      {Collective::SendRecv, Algorithm::OneShot, buildSendRecvShift},
  };
  for (const Entry& entry : kBuilders) {
    if (entry.collective == collective && entry.algorithm == algorithm) return entry.builder;
  }
  return nullptr;
}

std::string rangeText(const BufferRef& ref, std::size_t count) {
  std::ostringstream out;
  out << "rank " << ref.rank << ' ' << bufferKindName(ref.buffer) << '[' << ref.offset << ", " << ref.offset + count
      << ')';
  return out.str();
}

}  // namespace

const char* bufferKindName(BufferKind buffer) noexcept {
  switch (buffer) {
    case BufferKind::Input: return "input";
    case BufferKind::Output: return "output";
    case BufferKind::Scratch: return "scratch";
    case BufferKind::HostStage: return "host_stage";
  }
  return "?";
}

std::size_t alignElementsOf(DataType type) noexcept {
  return std::max<std::size_t>(1, 16 / dataTypeSize(type));
}

std::size_t PlanBuilder::setChunks(std::size_t largestPiece) {
  std::size_t chunks = 1;
  if (plan_.chunkElements > 0 && largestPiece > 0) {
    const std::size_t align = plan_.alignElements;
    const std::size_t chunk = (plan_.chunkElements + align - 1) / align * align;
    chunks = (largestPiece + chunk - 1) / chunk;
  }
  plan_.chunks = chunks;
  return chunks;
}

void PlanBuilder::add(std::size_t chunkIndex, int phase, Transfer transfer) {
  if (transfer.count == 0) return;
  transfer.executor = transfer.dst.rank;
  pending_[{chunkIndex, phase}].push_back(std::move(transfer));
}

void PlanBuilder::copy(std::size_t chunkIndex, int phase, BufferRef dst, BufferRef src, std::size_t count) {
  add(chunkIndex, phase, Transfer{dst.rank, TransferKind::Copy, dst, {src}, count, false});
}

void PlanBuilder::reduce(std::size_t chunkIndex, int phase, BufferRef dst, std::vector<BufferRef> srcs,
                         std::size_t count, bool finish) {
  add(chunkIndex, phase, Transfer{dst.rank, TransferKind::Reduce, dst, std::move(srcs), count, finish});
}

void PlanBuilder::emit(bool pipelined) {
  std::map<std::size_t, std::vector<Transfer>> byStep;
  for (auto& [key, transfers] : pending_) {
    const std::size_t step = static_cast<std::size_t>(key.second) + (pipelined ? key.first : 0);
    auto& into = byStep[step];
    for (Transfer& transfer : transfers) into.push_back(std::move(transfer));
  }
  pending_.clear();
  for (auto& [step, transfers] : byStep) plan_.steps.push_back(Step{std::move(transfers)});
}

Plan buildPlan(Collective collective, Algorithm algorithm, int nranks, std::size_t count, int root, bool inPlace,
               std::size_t chunkElements, DataType type, bool push) {
  validate(collective, algorithm, nranks, root, inPlace);
  const Builder builder = builderOf(collective, algorithm, push);
  if (builder == nullptr) {
    throw Error(ErrorCode::InvalidUsage, std::string(collectiveName(collective)) + " has no " +
                                             algorithmName(algorithm) + (push ? " push" : "") +
                                             " plan (see algorithmsOf)");
  }
  Plan plan;
  plan.collective = collective;
  plan.algorithm = algorithm;
  plan.type = type;
  plan.nranks = nranks;
  plan.count = count;
  plan.root = hasRoot(collective) ? root : 0;
  plan.inPlace = inPlace;
  plan.chunkElements = chunkElements;
  plan.alignElements = alignElementsOf(type);
  plan.push = push;
  fillLayout(plan);
  PlanBuilder b(plan);
  if (nranks == 1) {
    // Every collective of one rank is its send data copied to its recv (avg divides by 1): nothing in place.
    b.setChunks(count);
    for (std::size_t c = 0; c < b.chunks() && !inPlace; ++c) {
      const ElementRange ch = b.chunk({0, count}, c);
      b.copy(c, 0, b.recv(0, ch.begin), b.send(0, ch.begin), ch.count);
    }
    b.emit(false);
    return plan;
  }
  builder(b);
  return plan;
}

Plan buildSendRecvPlan(int nranks, const std::vector<PointToPoint>& pairs, DataType type, std::size_t chunkElements) {
  validate(Collective::SendRecv, Algorithm::OneShot, nranks, 0, false);
  Plan plan;
  plan.collective = Collective::SendRecv;
  plan.type = type;
  plan.nranks = nranks;
  plan.chunkElements = chunkElements;
  plan.alignElements = alignElementsOf(type);
  plan.ranks.assign(static_cast<std::size_t>(nranks), RankLayout{});
  for (int r = 0; r < nranks; ++r) {
    plan.ranks[static_cast<std::size_t>(r)].send = {r, BufferKind::Input, 0};
    plan.ranks[static_cast<std::size_t>(r)].recv = {r, BufferKind::Output, 0};
  }
  std::size_t largest = 0;
  for (const PointToPoint& pair : pairs) {
    if (pair.from < 0 || pair.from >= nranks || pair.to < 0 || pair.to >= nranks) {
      throw Error(ErrorCode::InvalidUsage, "send/recv " + std::to_string(pair.from) + " -> " + std::to_string(pair.to) +
                                               ": not ranks of " + std::to_string(nranks));
    }
    largest = std::max(largest, pair.count);
  }
  PlanBuilder b(plan);
  b.setChunks(largest);
  for (const PointToPoint& pair : pairs) {
    RankLayout& from = plan.ranks[static_cast<std::size_t>(pair.from)];
    RankLayout& to = plan.ranks[static_cast<std::size_t>(pair.to)];
    for (std::size_t c = 0; c < b.chunks(); ++c) {
      const ElementRange ch = b.chunk({0, pair.count}, c);
      b.copy(c, 0, {pair.to, BufferKind::Output, to.recvElements + ch.begin},
             {pair.from, BufferKind::Input, from.sendElements + ch.begin}, ch.count);
    }
    from.sendElements += pair.count;
    to.recvElements += pair.count;
  }
  for (RankLayout& layout : plan.ranks) {
    layout.inputElements = layout.sendElements;
    layout.outputElements = layout.recvElements;
  }
  b.emit(false);
  return plan;
}

std::string describeTransfer(const Transfer& transfer) {
  std::ostringstream out;
  out << "rank " << transfer.executor << ": " << (transfer.kind == TransferKind::Copy ? "copy " : "reduce ")
      << rangeText(transfer.dst, transfer.count) << " <- ";
  for (std::size_t i = 0; i < transfer.srcs.size(); ++i) {
    out << (i > 0 ? ", " : "") << rangeText(transfer.srcs[i], transfer.count);
  }
  if (transfer.finish) out << " (finish)";
  return out.str();
}

std::string planName(const Plan& plan) {
  std::ostringstream out;
  out << collectiveName(plan.collective) << '/' << algorithmName(plan.algorithm) << (plan.push ? "/push" : "")
      << " n=" << plan.nranks << " count=" << plan.count << ' ' << dataTypeName(plan.type);
  if (hasRoot(plan.collective)) out << " root=" << plan.root;
  out << (plan.inPlace ? " in-place" : " out-of-place");
  if (plan.chunkElements > 0) out << " chunk=" << plan.chunkElements;
  return out.str();
}

std::string describePlan(const Plan& plan) {
  std::ostringstream out;
  out << planName(plan) << ": " << plan.steps.size() << " steps, " << plan.chunks << " chunks per shard\n";
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const RankLayout& layout = plan.ranks[r];
    out << "  rank " << r << ": input " << layout.inputElements << ", output " << layout.outputElements << ", scratch "
        << layout.scratchElements;
    if (layout.hostStageElements > 0) out << ", host stage " << layout.hostStageElements;
    out << "; send " << rangeText(layout.send, layout.sendElements) << ", recv "
        << rangeText(layout.recv, layout.recvElements) << '\n';
  }
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    out << "  step " << s << ":\n";
    for (const Transfer& transfer : plan.steps[s].transfers) out << "    " << describeTransfer(transfer) << '\n';
  }
  return out.str();
}

int nodeOfRank(const Plan& plan, int rank) noexcept {
  return plan.ranksPerNode > 0 ? rank / plan.ranksPerNode : 0;
}

bool crossesNodes(const Plan& plan, const Transfer& transfer) noexcept {
  const int node = nodeOfRank(plan, transfer.executor);
  return nodeOfRank(plan, transfer.dst.rank) != node ||
         std::any_of(transfer.srcs.begin(), transfer.srcs.end(),
                     [&](const BufferRef& src) { return nodeOfRank(plan, src.rank) != node; });
}

std::vector<std::size_t> remoteReadElements(const Plan& plan) {
  std::vector<std::size_t> reads(static_cast<std::size_t>(plan.nranks), 0);
  for (const Step& step : plan.steps) {
    for (const Transfer& transfer : step.transfers) {
      for (const BufferRef& src : transfer.srcs) {
        if (src.rank != transfer.executor) reads[static_cast<std::size_t>(transfer.executor)] += transfer.count;
      }
    }
  }
  return reads;
}

std::vector<std::size_t> remoteWriteElements(const Plan& plan) {
  std::vector<std::size_t> writes(static_cast<std::size_t>(plan.nranks), 0);
  for (const Step& step : plan.steps) {
    for (const Transfer& transfer : step.transfers) {
      if (transfer.dst.rank != transfer.executor) writes[static_cast<std::size_t>(transfer.executor)] += transfer.count;
    }
  }
  return writes;
}

}  // namespace peerlink::coll
