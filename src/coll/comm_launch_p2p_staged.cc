// Send/recv groups across processes (comm_launch_p2p_staged.hpp).
#include "coll/comm_launch_p2p_staged.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include <fmt/format.h>

#include "coll/comm_launch_plan.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/comm_validation.hpp"
#include "coll/p2p_plan.hpp"
#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// One local rank's part of the group: its calls in order, and the stream they all use.
struct RankGroup {
  std::vector<const CallArgs*> calls;
  cudaStream_t stream = nullptr;
};

std::vector<RankGroup> byRank(const CommState& state, const std::vector<CallArgs>& calls) {
  std::vector<RankGroup> ranks(static_cast<std::size_t>(state.nranks));
  for (const CallArgs& call : calls) {
    RankGroup& group = ranks[static_cast<std::size_t>(call.rank)];
    if (!group.calls.empty() && group.stream != call.stream) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: rank {} gave two different streams to the send/recv calls of one group; use one "
                              "stream per rank in a group",
                              callLabel(state, call), call.rank));
    }
    group.stream = call.stream;
    group.calls.push_back(&call);
  }
  return ranks;
}

bool groupCapturing(const CommState& state, const std::vector<RankGroup>& ranks) {
  const CallArgs* first = nullptr;
  bool capturing = false;
  for (const RankGroup& group : ranks) {
    if (group.calls.empty()) continue;
    const bool mine = streamCapturing(group.stream);
    if (first == nullptr) {
      first = group.calls.front();
      capturing = mine;
    } else if (mine != capturing) {
      throw Error(
          ErrorCode::InvalidUsage,
          fmt::format("{}: its stream is {}being captured into a graph while rank {}'s is {}; capture the "
                      "streams of every rank in a send/recv group or none; nothing of the group was launched",
                      callLabel(state, *group.calls.front()), mine ? "" : "not ", first->rank, capturing ? "" : "not"));
    }
  }
  return capturing;
}

std::size_t bytesOf(const CallArgs& call) {
  return call.count * dataTypeSize(call.type);
}

void launchRank(CommState& state, int rank, const RankGroup& group, const P2pPlan& plan, bool capturing) {
  const cudaStream_t stream = group.stream;
  const SymmetricTable& table = state.tableOf(rank);
  const std::size_t slot = p2pSlotBytes(state.nranks, state.layout.windowBytes);
  const auto callAt = [&](std::size_t index) -> const CallArgs& { return *group.calls[index]; };
  for (const auto& [send, recv] : plan.selfCopies) {
    PEERLINK_CUDA_CHECK(
        cudaMemcpyAsync(callAt(recv).recv, callAt(send).send, bytesOf(callAt(send)), cudaMemcpyDeviceToDevice, stream));
  }
  if (plan.llMask != 0) {
    kernels::CollP2pLlArgs args;
    args.sync = syncArgs(state, rank, Collective::SendRecv, true, plan.llMask);
    for (int p = 0; p < state.nranks; ++p) args.scratch[p] = table.p2pScratch[p];
    std::size_t largest = 0;
    const auto jobOf = [&](const P2pLlMessage& message) {
      kernels::CollP2pLlJob job;
      job.bytes = message.bytes;
      job.lineOffset = message.lineOffset;
      job.peer = message.peer;
      largest = std::max(largest, message.bytes);
      return job;
    };
    for (const P2pLlMessage& message : plan.llSends) {
      kernels::CollP2pLlJob& job = args.sends[args.nsends++] = jobOf(message);
      job.src = callAt(message.call).send;
    }
    for (const P2pLlMessage& message : plan.llRecvs) {
      kernels::CollP2pLlJob& job = args.recvs[args.nrecvs++] = jobOf(message);
      job.dst = callAt(message.call).recv;
    }
    kernels::launchCollP2pLl(args, kernels::collLlBlocks(largest, state.maxBlocks), stream,
                             launchOf(state, rank, capturing));
  }
  for (const P2pRound& round : plan.rounds) {
    for (const P2pPiece& piece : round.sends) {
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(offsetBy(table.window[rank], p2pSlotOffset(piece.peer, slot)),
                                          offsetBy(callAt(piece.call).send, piece.offset), piece.bytes,
                                          cudaMemcpyDeviceToDevice, stream));
    }
    kernels::CollCopyArgs args;
    args.sync = syncArgs(state, rank, Collective::SendRecv, true, round.mask);
    args.sync.peersStore = false;  // the receivers pull
    for (const P2pPiece& piece : round.recvs) {
      kernels::CollCopyJob& job = args.jobs[args.njobs++];
      job.src = offsetBy(table.window[piece.peer], p2pSlotOffset(rank, slot));
      job.dst[0] = offsetBy(callAt(piece.call).recv, piece.offset);
      job.ndst = 1;
      job.bytes = piece.bytes;
    }
    kernels::launchCollCopy(args, p2pCopyBlocks(state), stream, launchOf(state, rank, capturing));
  }
}

}  // namespace

void launchCrossProcessGroup(CommState& state, const std::vector<CallArgs>& calls) {
  const std::vector<RankGroup> ranks = byRank(state, calls);
  const bool capturing = groupCapturing(state, ranks);
  if (state.planned) {  // as a two-rank exchange, else through the host stages, pair by pair (staged_p2p.hpp)
    for (const int r : state.localRanks()) {
      const RankGroup& group = ranks[static_cast<std::size_t>(r)];
      if (group.calls.empty()) continue;
      DeviceGuard guard(state.devices[static_cast<std::size_t>(r)]);
      if (!launchedAsTwoRankExchange(state, r, group.calls, group.stream, capturing)) {
        launchPlannedPointToPoint(state, r, group.calls, group.stream);
      }
    }
    return;
  }
  const std::size_t slot = p2pSlotBytes(state.nranks, state.layout.windowBytes);
  const bool llAllowed = state.settings.protocol != Protocol::Simple;
  std::vector<P2pPlan> plans(static_cast<std::size_t>(state.nranks));
  for (const int r : state.localRanks()) {
    const RankGroup& group = ranks[static_cast<std::size_t>(r)];
    std::vector<P2pCall> mine;
    for (const CallArgs* call : group.calls) mine.push_back({call->isSend, call->peer, bytesOf(*call)});
    plans[static_cast<std::size_t>(r)] = planPointToPoint(r, state.nranks, mine, slot, llAllowed);
  }
  forEachRank(state, capturing, [&](int r) {
    const RankGroup& group = ranks[static_cast<std::size_t>(r)];
    if (!group.calls.empty()) launchRank(state, r, group, plans[static_cast<std::size_t>(r)], capturing);
  });
}

}  // namespace peerlink::coll
