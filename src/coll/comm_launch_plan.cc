// Calls through the staged plans (comm_launch_plan.hpp).
#include "coll/comm_launch_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "coll/comm_launch_support.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/kernel_args.hpp"
#include "coll/plan_executor.hpp"
#include "coll/plan_program.hpp"
#include "coll/plan_staged.hpp"
#include "coll/planned_calls.hpp"
#include "coll/segment_plans.hpp"
#include "coll/staged_p2p.hpp"
#include "core/cuda_check.hpp"
#include "core/stream_wait.hpp"
#include "kernels/host_ring.cuh"
#include "kernels/plan_barrier.cuh"
#include "kernels/plan_p2p.cuh"
#include "kernels/plan_run.cuh"

namespace peerlink::coll {
namespace {

// Rank r's part of a plan run: its host stage (every rank's is reachable); for a rank of this process also its
// GPU, stream and scratch. Input and Output are the caller's to fill.
PlanRank planRank(const CommState& state, int r, cudaStream_t stream, std::size_t elementSize) {
  const PlannedWays& ways = *state.planned;
  const auto i = static_cast<std::size_t>(r);
  PlanRank rank;
  rank.extents[static_cast<std::size_t>(BufferKind::HostStage)] =
      wholeBuffer(ways.stage[i], kPlanStageBytes / elementSize);
  if (!state.world.isLocal(r)) return rank;
  rank.device = state.devices[i];
  rank.stream = stream;
  rank.lanes = ways.lanes[i]->lanes();
  rank.reduceBlocks = state.maxBlocks;
  rank.extents[static_cast<std::size_t>(BufferKind::Scratch)] =
      wholeBuffer(ways.scratch[i].data(), kPlanStageBytes / elementSize);
  return rank;
}

std::vector<BufferExtent>& extentsOf(PlanRank& rank, BufferKind buffer) {
  return rank.extents[static_cast<std::size_t>(buffer)];
}

// A rank's counters on its GPU: [0] its step barriers (plan_barrier.cuh), then staged send/recv's chunks sent to
// and taken from each peer (plan_p2p.cuh), then the plan-run kernel's two words (plan_run.cuh), then the host ring's
// blocks' states (host_ring.cuh).
constexpr std::size_t kPlanRunGridWords = 2;
constexpr std::size_t kPlanRunWords = 1 + 2 * kernels::kCollMaxRanks;  // where the plan-run kernel's words start
constexpr std::size_t kHostRingWords = kPlanRunWords + kPlanRunGridWords;
constexpr std::size_t kPlanCounters = kHostRingWords + kernels::kHostRingStateWords;

unsigned long long* countersOf(const PlannedWays& ways, int rank) {
  return static_cast<unsigned long long*>(ways.counters[static_cast<std::size_t>(rank)].data());
}

// What a rank called, as the first step barrier of each plan run compares it (0 is "nothing to compare"): ranks
// whose calls differ would run plans over different data.
unsigned long long callSignature(const CallArgs& call, std::size_t segment) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the call's shape
  for (const std::uint64_t word : {static_cast<std::uint64_t>(call.collective), static_cast<std::uint64_t>(call.type),
                                   static_cast<std::uint64_t>(call.op), static_cast<std::uint64_t>(call.root),
                                   static_cast<std::uint64_t>(call.count), static_cast<std::uint64_t>(segment)}) {
    hash = (hash ^ word) * 1099511628211ull;
  }
  return hash == 0 ? 1 : hash;
}

// The streams meet at plan_barrier's kernel on the ranks' flags in host memory, in one process and across
// processes alike (events could not join streams captured into separate graphs, as NCCL's users capture them).
StepBarrier stepBarrierOf(const CommState& state, Collective collective, unsigned long long signature) {
  return [&state, collective, signature](const std::vector<PlanRank>& ranks, bool first) {
    const PlannedWays& ways = *state.planned;
    kernels::PlanBarrierArgs args;
    for (int p = 0; p < state.nranks; ++p) args.flags[p] = ways.flags[static_cast<std::size_t>(p)];
    args.signature = first ? signature : 0;
    args.abort = state.abortWord;
    args.timeoutNs = state.timeoutNs;
    args.nranks = state.nranks;
    args.collective = static_cast<int>(collective);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (!ranks[r].runsHere()) continue;
      args.rank = static_cast<int>(r);
      args.count = countersOf(ways, static_cast<int>(r));
      args.failure = state.failure(static_cast<int>(r));
      DeviceGuard guard(ranks[r].device);
      kernels::launchPlanBarrier(args, ranks[r].stream);
    }
  };
}

// The plan as one plan-run kernel per rank of this process (plan_run.cuh) where the call is small enough for that to
// pay (runsAsOneKernel) and every such rank's part fits one; false, launching nothing, otherwise. Its meetings are the
// step barrier's, numbered alike, so its peers may run the plan step by step.
bool runPlanAsKernels(const CommState& state, const Plan& plan, ReduceOp op, Collective collective,
                      const std::vector<PlanRank>& ranks, unsigned long long signature, std::size_t callBytes) {
  PlannedWays& ways = *state.planned;
  if (!runsAsOneKernel(callBytes, ways.oneKernel)) return false;
  std::vector<std::pair<std::size_t, kernels::PlanRunArgs>> programs;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].runsHere()) continue;
    std::optional<kernels::PlanRunArgs> program = planRunProgram(plan, static_cast<int>(r), ranks);
    if (!program) return false;
    kernels::PlanBarrierArgs& barrier = program->barrier;
    for (int p = 0; p < state.nranks; ++p) barrier.flags[p] = ways.flags[static_cast<std::size_t>(p)];
    barrier.signature = signature;
    barrier.count = countersOf(ways, static_cast<int>(r));
    barrier.failure = state.failure(static_cast<int>(r));
    barrier.abort = state.abortWord;
    barrier.timeoutNs = state.timeoutNs;
    barrier.rank = static_cast<int>(r);
    barrier.nranks = state.nranks;
    barrier.collective = static_cast<int>(collective);
    program->grid = countersOf(ways, static_cast<int>(r)) + kPlanRunWords;
    programs.emplace_back(r, *program);
  }
  for (const auto& [r, program] : programs) {
    DeviceGuard guard(ranks[r].device);
    // After a kernel of this rank recorded a failure, a block of a failed run may have arrived after block 0 gave
    // up and reset the arrivals: the grid's two words start again from zero, behind that run on the stream.
    std::vector<unsigned long long>& zeroedAt = ways.gridZeroedAt;
    if (zeroedAt.size() < ranks.size()) zeroedAt.resize(ranks.size(), 0);
    const unsigned long long failedAt =
        *static_cast<const volatile unsigned long long*>(&state.failure(static_cast<int>(r))->launch);
    if (failedAt != zeroedAt[r]) {
      PEERLINK_CUDA_CHECK(
          cudaMemsetAsync(program.grid, 0, kPlanRunGridWords * sizeof(unsigned long long), ranks[r].stream));
      zeroedAt[r] = failedAt;
    }
    kernels::launchPlanRun(program, collType(plan.type), collOp(op), std::min(state.maxBlocks, kPlanRunBlocks),
                           ranks[r].stream);
  }
  return true;
}

// A small call: every rank's message for every peer in LL lines into that peer's LL area in host memory, which the
// peer polls (coll_ll.cu: no barrier, the lines carry the call's flag; the calls' sequence numbers count only these
// kernels, alike on every rank, as no other collective kernel runs on such a communicator).
void launchPlannedLines(const CommState& state, const std::vector<CallArgs>& set, std::size_t bytes, bool capturing) {
  const PlannedWays& ways = *state.planned;
  const int blocks = kernels::collLlBlocks(bytes, state.maxBlocks);
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    kernels::CollLlArgs args = llArgs(rankView(state, r), call, bytes, false);
    for (int p = 0; p < state.nranks; ++p) args.scratch[p] = ways.lines[static_cast<std::size_t>(p)];
    args.slotShift = kPlanLlSlotShift;
    kernels::launchCollLl(args, collType(call.type), collOp(call.op), blocks, call.stream,
                          launchOf(state, r, capturing));
  });
}

// Rank r's part of a send/recv group as LL lines (plannedPairLines), with its GPU current: its kernel sends every
// peer its message or a token and hears every peer's, as launchPlannedLines' calls do, on the same areas and call
// numbers.
void launchPairLinesRank(const CommState& state, const PairLines& lines, int r, DataType type, cudaStream_t stream,
                         bool capturing) {
  const PlannedWays& ways = *state.planned;
  const PairLines::Rank& mine = lines.ranks[static_cast<std::size_t>(r)];
  kernels::CollLlArgs args;
  args.sync = syncArgs(state, r, Collective::SendRecv, false, allRanks(state));
  for (int p = 0; p < state.nranks; ++p) {
    const auto peer = static_cast<std::size_t>(p);
    args.scratch[p] = ways.lines[peer];
    args.toRank[p] = mine.to[peer];
    args.fromRank[p] = mine.from[peer];
  }
  args.tokenMask = mine.tokens;
  args.bytes = lines.bytes;
  args.slotShift = kPlanLlSlotShift;
  kernels::launchCollLl(args, collType(type), collOp(ReduceOp::Sum),
                        kernels::collLlBlocks(lines.bytes, state.maxBlocks), stream, launchOf(state, r, capturing));
}

// A send/recv group of one process as LL lines: one kernel a rank.
void launchPlannedPairLines(const CommState& state, const PairLines& lines, DataType type,
                            const std::vector<cudaStream_t>& streams, bool capturing) {
  forEachRank(state, capturing, [&](int r) {
    launchPairLinesRank(state, lines, r, type, streams[static_cast<std::size_t>(r)], capturing);
  });
}

// Rank r's part of a call the host ring takes (host_ring.cuh), with its GPU current: one kernel, its slots in the
// ranks' ring areas, and beside it a copy of its own block where the ring does not carry it (hostRingOwnCopy).
void launchHostRingRank(const CommState& state, const CallArgs& call, int r, bool capturing) {
  const PlannedWays& ways = *state.planned;
  kernels::HostRingArgs args = hostRingCallArgs(call.collective, call.count, call.type, ways.ringOrder, r, call.root,
                                                hostRingShape(call.collective, ways.hostRingShape, state.maxBlocks));
  args.ownArea = ways.ring[static_cast<std::size_t>(r)];
  args.prevArea = ways.ring[static_cast<std::size_t>(args.prev)];
  args.state = reinterpret_cast<kernels::HostRingBlockState*>(countersOf(ways, r) + kHostRingWords);
  args.failure = state.failure(r);
  args.abort = state.abortWord;
  args.timeoutNs = state.timeoutNs;
  // The own block on a copy lane of the staged plans'.
  const CopyLanes lanes = ways.lanes[static_cast<std::size_t>(r)]->lanes();
  launchRingCall(args, call, r, lanes.toHost, lanes.forked, lanes.toHostDone, launchOf(state, r, capturing));
}

// A collective as the host ring: one kernel a rank of this process.
void launchHostRingSet(const CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  forEachRank(state, capturing,
              [&](int r) { launchHostRingRank(state, set[static_cast<std::size_t>(r)], r, capturing); });
}

std::vector<ExchangeSide> exchangeSides(const std::vector<const CallArgs*>& calls) {
  std::vector<ExchangeSide> sides;
  for (const CallArgs* call : calls) sides.push_back({call->isSend, call->peer, call->count, call->type});
  return sides;
}

}  // namespace

std::unique_ptr<PlannedWays> makePlannedWays(const CommState& state, RankLinks links, WorldExchange& exchange) {
  auto ways = std::make_unique<PlannedWays>();
  ways->links = std::move(links);
  ways->chunkBytes = stagedChunkBytes(state.params);
  ways->oneKernel = state.params.getBool("PEERLINK_COLL_STAGED_KERNEL");
  ways->hostRingMaxBytes = static_cast<std::size_t>(state.params.getInt("PEERLINK_COLL_HOST_RING"));
  ways->hostRingShape = hostRingShapeNamed(state.params.getString("PEERLINK_COLL_HOST_RING_SHAPE"));
  ways->ringOrder = chooseRing(ways->links);
  const auto n = static_cast<std::size_t>(state.nranks);
  ways->scratch.resize(n);
  ways->counters.resize(n);
  ways->lanes.resize(n);
  for (const int r : state.localRanks()) {
    const int device = state.devices[static_cast<std::size_t>(r)];
    DeviceGuard guard(device);
    ways->lanes[static_cast<std::size_t>(r)] = std::make_unique<OwnedCopyLanes>(device);
    ways->scratch[static_cast<std::size_t>(r)] = DeviceBuffer(device, kPlanStageBytes);
    DeviceBuffer count(device, kPlanCounters * sizeof(unsigned long long));
    // On the rank's own stream, awaited: not the whole device, where another communicator's kernel may be stalled.
    const cudaStream_t own = state.ranks[static_cast<std::size_t>(r)].copyStream.get();
    PEERLINK_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, count.size(), own));
    waitForStream(own, std::chrono::milliseconds(state.timeoutNs / 1000000u),
                  fmt::format("zeroing the staged plans' counters on GPU {}", device), "PEERLINK_TIMEOUT_MS");
    ways->counters[static_cast<std::size_t>(r)] = std::move(count);
  }
  // Each rank's LL area, then its host ring area.
  const std::size_t llBytes = planLlAreaBytes(state.nranks);
  const std::size_t linesBytes = llBytes + kernels::kHostRingAreaBytes;
  if (state.world.spansProcesses) {
    ways->shared = std::make_unique<SharedPlanStages>(state.world, exchange, linesBytes, kPlanStageBytes);
    for (int r = 0; r < state.nranks; ++r) {
      ways->flags.push_back(ways->shared->flags(r));
      ways->lines.push_back(ways->shared->lines(r));
      ways->ring.push_back(static_cast<unsigned char*>(ways->shared->lines(r)) + llBytes);
      ways->stage.push_back(ways->shared->stage(r));
    }
    return ways;
  }
  for (int r = 0; r < state.nranks; ++r) {
    ways->pinned.emplace_back(kPlanFlagBytes + linesBytes + kPlanStageBytes,
                              cudaHostAllocMapped | cudaHostAllocPortable);
    auto* base = static_cast<unsigned char*>(ways->pinned.back().data());
    std::memset(base, 0, kPlanFlagBytes + linesBytes);  // an LL line's flag is never 0
    ways->flags.push_back(reinterpret_cast<unsigned long long*>(base));
    ways->lines.push_back(base + kPlanFlagBytes);
    ways->ring.push_back(base + kPlanFlagBytes + llBytes);
    ways->stage.push_back(base + kPlanFlagBytes + linesBytes);
  }
  return ways;
}

std::string describePlannedChoice(const CommState& state, Collective collective, std::size_t bytes) {
  const RankLinks& links = state.planned->links;
  // Every way but the plans' chunks depends on the bytes alone: the call's bytes as so many single bytes.
  const StagedWay way = stagedWayOf(collective, bytes, DataType::U8, state.nranks, state.planned->hostRingMaxBytes,
                                    state.planned->oneKernel, state.world.spansProcesses);
  const std::string how = collective == Collective::AllToAll || collective == Collective::SendRecv
                              ? std::string("pair by pair")
                              : fmt::format("ring {}", describeRing(links, state.planned->ringOrder));
  const std::string lines =
      collective == Collective::SendRecv
          ? fmt::format(
                "; groups in one process where every rank takes part and sends each peer one message at "
                "most, all of one size up to {} KiB, and two ranks' exchange of such a message across processes, "
                "in LL lines through host memory instead",
                kPlanLlMaxBytes >> 10)
          : fmt::format("; messages of up to {} KiB a rank in LL lines through host memory instead",
                        kPlanLlMaxBytes >> 10);
  const std::size_t ringBytes = hostRingLimitBytes(collective, state.planned->hostRingMaxBytes, state.nranks);
  const bool chain = collective == Collective::Broadcast || collective == Collective::Reduce;
  const bool exchange = collective == Collective::AllToAll || collective == Collective::SendRecv;
  const std::string ring =
      ringBytes > 0
          ? fmt::format("; calls of up to {} KiB in all as {} pipelined through host memory instead", ringBytes >> 10,
                        chain      ? "a chain along the ring"
                        : exchange ? "an exchange (a message each way of one size)"
                                   : "a ring")
          : std::string();
  return fmt::format(
      "staged plan ({}): {}; host-staged hops through each rank's pinned stage of {} MiB, chunks of up to {} KiB "
      "pipelined through its slots{}{} (some pair of ranks is not direct: PEERLINK_DEBUG_SUBSYS=P2P logs why)",
      stagedWayName(way), how, kPlanStageBytes >> 20, state.planned->chunkBytes >> 10, lines, ring);
}

// The staged plans are built out of place: a rank that calls in place has its Input and Output extents in the
// one buffer, and the plans read every element of a rank's send data before any store into the same element of its
// recv data (plan_staged.hpp's chains), so the aliasing is safe; the executor skips a copy onto itself.
void launchPlannedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const CallArgs& shape = set.front();
  const std::size_t size = dataTypeSize(shape.type);
  if (shape.count == 0) return;
  if (const std::size_t bytes = plannedLineBytes(shape.collective, shape.count, shape.type); bytes > 0) {
    launchPlannedLines(state, set, bytes, capturing);
    return;
  }
  PlannedWays& ways = *state.planned;
  if (runsAsHostRing(shape.collective, shape.count, shape.type, state.nranks, ways.hostRingMaxBytes)) {
    launchHostRingSet(state, set, capturing);
    return;
  }
  const auto segments = ways.recent.calls.get({shape.collective, shape.count, shape.root, shape.type}, [&] {
    return stagedSegments(shape.collective, state.nranks, shape.count, shape.root, shape.type, ways.links,
                          ways.chunkBytes, kPlanStageBytes);
  });
  std::size_t index = 0;
  for (const StagedSegment& staged : *segments) {
    const PlanSegment& segment = staged.segment;
    std::vector<PlanRank> ranks;
    for (const CallArgs& call : set) {
      PlanRank rank = planRank(state, call.rank, call.stream, size);
      if (rank.runsHere()) {  // a rank of another process is a stand-in without buffers
        extentsOf(rank, BufferKind::Input) =
            segmentExtents(shape.collective, BufferKind::Input, state.nranks, shape.count, segment, call.send, size);
        extentsOf(rank, BufferKind::Output) =
            segmentExtents(shape.collective, BufferKind::Output, state.nranks, shape.count, segment, call.recv, size);
      }
      ranks.push_back(std::move(rank));
    }
    const unsigned long long signature = callSignature(shape, index++);
    if (!runPlanAsKernels(state, staged.plan, shape.op, shape.collective, ranks, signature, shape.count * size)) {
      runPlanOnGpus(staged.plan, shape.op, ranks, stepBarrierOf(state, shape.collective, signature));
    }
  }
}

void launchPlannedPairs(CommState& state, const std::vector<SendRecvPair>& pairs,
                        const std::vector<cudaStream_t>& streams, bool capturing) {
  std::vector<PairMessage> messages;
  for (const SendRecvPair& pair : pairs) {
    messages.push_back({pair.send.rank, pair.recv.rank, pair.send.send, pair.recv.recv,
                        pair.send.count * dataTypeSize(pair.send.type)});
  }
  if (state.settings.protocol != Protocol::Simple) {
    if (const PairLines lines = plannedPairLines(messages, state.nranks); lines.bytes > 0) {
      launchPlannedPairLines(state, lines, pairs.front().send.type, streams, capturing);
      return;
    }
  }
  std::vector<std::vector<const CallArgs*>> calls(static_cast<std::size_t>(state.nranks));
  for (const SendRecvPair& pair : pairs) {  // in the group's order, so the n-th send to a peer meets its n-th receive
    calls[static_cast<std::size_t>(pair.send.rank)].push_back(&pair.send);
    calls[static_cast<std::size_t>(pair.recv.rank)].push_back(&pair.recv);
  }
  const auto exchange = [&](int r) {
    return runsAsHostRingExchange(exchangeSides(calls[static_cast<std::size_t>(r)]), r, state.nranks,
                                  state.planned->hostRingMaxBytes);
  };
  if (state.nranks == 2 && exchange(0) && exchange(1)) {
    for (int r = 0; r < state.nranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      DeviceGuard guard(state.devices[i]);
      launchedAsTwoRankExchange(state, r, calls[i], streams[i], capturing);
    }
    return;
  }
  if (!everyRankTakesPart(messages, state.nranks)) {
    for (int r = 0; r < state.nranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (!calls[i].empty()) launchPlannedPointToPoint(state, r, calls[i], streams[i]);
    }
    return;
  }
  std::vector<PointToPoint> group;
  for (const SendRecvPair& pair : pairs) group.push_back({pair.send.rank, pair.recv.rank, pair.send.count});
  const DataType type = pairs.front().send.type;
  const std::size_t size = dataTypeSize(type);
  std::vector<const void*> sends;
  std::vector<const void*> recvs;
  for (const SendRecvPair& pair : pairs) {
    sends.push_back(pair.send.send);
    recvs.push_back(pair.recv.recv);
  }
  // What one rank sends at most, the group's size as runsAsOneKernel measures it.
  std::vector<std::size_t> sent(static_cast<std::size_t>(state.nranks), 0);
  for (const PointToPoint& pair : group) sent[static_cast<std::size_t>(pair.from)] += pair.count * size;
  const std::size_t groupBytes = *std::max_element(sent.begin(), sent.end());
  PlannedWays& ways = *state.planned;
  const auto pieces = ways.recent.groups.get({group, type}, [&] {
    return stagedPieces(group, state.nranks, type, ways.links, ways.chunkBytes, kPlanStageBytes);
  });
  for (const auto& [piece, plan] : *pieces) {
    const std::vector<RankExtents> extents = pieceExtents(piece, state.nranks, sends, recvs, size);
    std::vector<PlanRank> ranks;
    for (int r = 0; r < state.nranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      PlanRank rank = planRank(state, r, streams[i], size);
      extentsOf(rank, BufferKind::Input) = extents[i].input;
      extentsOf(rank, BufferKind::Output) = extents[i].output;
      ranks.push_back(std::move(rank));
    }
    if (!runPlanAsKernels(state, plan, pairs.front().send.op, Collective::SendRecv, ranks, 0, groupBytes)) {
      runPlanOnGpus(plan, pairs.front().send.op, ranks, stepBarrierOf(state, Collective::SendRecv, 0));
    }
  }
}

void launchPlannedPointToPoint(CommState& state, int rank, const std::vector<const CallArgs*>& calls,
                               cudaStream_t stream) {
  const PlannedWays& ways = *state.planned;
  const std::size_t slotBytes = kPlanStageBytes / (2 * static_cast<std::size_t>(state.nranks)) / 16 * 16;
  std::vector<P2pCall> mine;
  for (const CallArgs* call : calls) mine.push_back({call->isSend, call->peer, call->count * dataTypeSize(call->type)});
  kernels::PlanP2pArgs args;
  for (int p = 0; p < state.nranks; ++p) args.flags[p] = ways.flags[static_cast<std::size_t>(p)];
  args.counts = countersOf(ways, rank) + 1;
  args.failure = state.failure(rank);
  args.abort = state.abortWord;
  args.timeoutNs = state.timeoutNs;
  args.rank = rank;
  const auto signal = [&](kernels::PlanP2pAction action, const StagedP2pOp& op) {
    args.peer = op.peer;
    args.action = action;
    args.firstOfPair = op.firstOfPair ? 1 : 0;
    kernels::launchPlanP2p(args, stream);
  };
  DeviceGuard guard(state.devices[static_cast<std::size_t>(rank)]);
  for (const StagedP2pOp& op : stagedP2pOps(mine, rank, slotBytes)) {
    const CallArgs& call = *calls[op.call];
    switch (op.kind) {
      case StagedP2pOp::Kind::Copy:
        PEERLINK_CUDA_CHECK(cudaMemcpyAsync(call.recv, calls[op.from]->send, op.bytes, cudaMemcpyDefault, stream));
        break;
      case StagedP2pOp::Kind::Send:
        signal(kernels::kAwaitFree, op);
        PEERLINK_CUDA_CHECK(cudaMemcpyAsync(
            offsetBy(ways.stage[static_cast<std::size_t>(rank)], stagedP2pSlotOffset(op.peer, op.slot, slotBytes)),
            offsetBy(call.send, op.offset), op.bytes, cudaMemcpyDefault, stream));
        signal(kernels::kSignalReady, op);
        break;
      case StagedP2pOp::Kind::Recv:
        signal(kernels::kAwaitReady, op);
        PEERLINK_CUDA_CHECK(cudaMemcpyAsync(
            offsetBy(call.recv, op.offset),
            offsetBy(ways.stage[static_cast<std::size_t>(op.peer)], stagedP2pSlotOffset(rank, op.slot, slotBytes)),
            op.bytes, cudaMemcpyDefault, stream));
        signal(kernels::kSignalFree, op);
        break;
    }
  }
}

bool launchedAsTwoRankExchange(CommState& state, int r, const std::vector<const CallArgs*>& calls, cudaStream_t stream,
                               bool capturing) {
  const std::vector<ExchangeSide> sides = exchangeSides(calls);
  if (!isTwoRankExchange(sides, r, state.nranks)) return false;
  std::vector<const CallArgs*> selves;  // its sends to and receives from itself: copies of its own
  const CallArgs* send = nullptr;
  const CallArgs* recv = nullptr;
  for (const CallArgs* call : calls) {
    if (call->peer == r) {
      selves.push_back(call);
    } else {
      (call->isSend ? send : recv) = call;
    }
  }
  const PairLines lines = state.settings.protocol != Protocol::Simple
                              ? exchangePairLines(sides, r, state.nranks, send->send, recv->recv)
                              : PairLines{};
  if (lines.bytes == 0 && !runsAsHostRingExchange(sides, r, state.nranks, state.planned->hostRingMaxBytes)) {
    return false;
  }
  if (!selves.empty()) launchPlannedPointToPoint(state, r, selves, stream);
  if (lines.bytes > 0) {
    launchPairLinesRank(state, lines, r, send->type, stream, capturing);
    return true;
  }
  CallArgs exchange = *send;
  exchange.collective = Collective::SendRecv;
  exchange.recv = recv->recv;
  exchange.stream = stream;
  exchange.op = ReduceOp::Sum;
  exchange.root = 0;
  launchHostRingRank(state, exchange, r, capturing);
  return true;
}

}  // namespace peerlink::coll
