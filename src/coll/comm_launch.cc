// Kernel launches for matched calls (comm_launch.hpp).
#include "coll/comm_launch.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "coll/comm_launch_copy_engine.hpp"
#include "coll/comm_launch_large.hpp"
#include "coll/comm_launch_p2p_ll.hpp"
#include "coll/comm_launch_plan.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/kernel_args.hpp"
#include "core/log.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

using kernels::CollCopyArgs;
using kernels::CollCopyJob;
using kernels::CollLlArgs;
using kernels::kCollMaxJobs;

// Whether (collective, kernel) is logged for the first time in `logged`, which it marks.
bool firstTime(std::array<bool, 7 * kKernelCount>& logged, Collective collective, Kernel kernel) {
  const std::size_t index = static_cast<std::size_t>(collective) * kKernelCount + static_cast<std::size_t>(kernel);
  if (index >= logged.size() || logged[index]) return false;
  logged[index] = true;
  return true;
}

// The COLL log's line for a choice, once per collective and kernel; where the kernel stepped aside for another,
// once per collective and the kernel that stepped aside, the reason (the last).
void logOnce(CommState& state, Collective collective, const CollectiveChoice& choice, std::size_t bytes) {
  if (choice.kernel != choice.wanted && firstTime(state.steppedAside, collective, choice.wanted)) {
    logInfo(LogSubsys::Coll, "{} of {} bytes per rank: {}", collectiveName(collective), bytes, choice.reasons.back());
  }
  if (firstTime(state.logged, collective, choice.kernel)) {
    logInfo(LogSubsys::Coll, "{} of {} bytes per rank: {} ({})", collectiveName(collective), bytes,
            algorithmName(choice.algorithm), reasonText(choice));
  }
}

void launchLlSet(const CommState& state, const std::vector<CallArgs>& set, std::size_t bytes, bool ll128,
                 bool capturing) {
  const int blocks =
      ll128 ? kernels::collLl128Blocks(bytes, state.maxBlocks) : kernels::collLlBlocks(bytes, state.maxBlocks);
  const auto launch = ll128 ? kernels::launchCollLl128 : kernels::launchCollLl;
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const CollLlArgs args = llArgs(rankView(state, r), call, bytes, ll128);
    launch(args, collType(call.type), collOp(call.op), blocks, call.stream, launchOf(state, r, capturing));
  });
}

void launchReductionSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                        const CollectiveChoice& choice, bool capturing) {
  const CallArgs& first = set.front();
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const ReductionLaunch launch = reductionArgs(rankView(state, r), pointers.of(r), call, choice, bytes);
    kernels::launchCollReduce(launch.args, collType(call.type), collOp(call.op), launch.blocks, call.stream,
                              launchOf(state, r, capturing));
  });
}

// The two-phase push kernel once per part of one stage slot of every shard (a message whose shards fit one
// slot -- every one AUTO pushes -- is one part), the parts one after another: each launch meets every peer at
// its start, as consecutive calls do, before it stores into their stages again.
void launchPushSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers, bool capturing) {
  const CallArgs& first = set.front();
  const std::size_t size = dataTypeSize(first.type);
  const std::size_t slotCount = kernels::kCollPushSlotBytes / size;
  const std::size_t longest = longestPushShard(first, state.nranks);
  const std::size_t parts = kernels::collPushParts(longest * size);
  const int blocks = kernels::collReduceBlocks(std::min(longest, slotCount) * size, state.maxBlocks);
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    for (std::size_t part = 0; part < parts; ++part) {
      kernels::launchCollPushPhased(pushReduceArgs(rankView(state, r), pointers.of(r), call, slotCount, part),
                                    collType(call.type), collOp(call.op), blocks, call.stream,
                                    launchOf(state, r, capturing));
    }
  });
}

void launchCopySet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                   const CollectiveChoice& choice, bool capturing) {
  const CallArgs& first = set.front();
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  const int blocks = copyBlocks(rankView(state, first.rank), first, choice, bytes);
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    kernels::launchCollCopy(copyArgs(rankView(state, r), pointers.of(r), call, choice, bytes), blocks, call.stream,
                            launchOf(state, r, capturing));
  });
}

// Whether every buffer of the set that the call touches starts on a 16-byte boundary: every rank's send and
// recv, but a broadcast's send off the root and a reduce's recv off the root, which the API ignores.
bool buffersAligned(const std::vector<CallArgs>& set) {
  std::uintptr_t bits = 0;
  for (const CallArgs& call : set) {
    const bool offRoot = call.rank != call.root;
    if (call.collective != Collective::Broadcast || !offRoot) bits |= reinterpret_cast<std::uintptr_t>(call.send);
    if (call.collective != Collective::Reduce || !offRoot) bits |= reinterpret_cast<std::uintptr_t>(call.recv);
  }
  return bits % 16 == 0;
}

}  // namespace

const CollectiveChoice& callChoice(CommState& state, Collective collective, std::size_t bytes, Fact inPlace,
                                   Fact aligned) {
  ChoiceMemos& memos = state.choices[static_cast<std::size_t>(collective)];
  for (const ChoiceMemo& memo : memos.entries) {
    if (memo.valid && memo.bytes == bytes && memo.inPlace == inPlace && memo.aligned == aligned) return memo.choice;
  }
  ChoiceMemo& memo = memos.entries[memos.next];
  memos.next = (memos.next + 1) % memos.entries.size();
  ChoiceResources resources;
  resources.pushStages = state.layout.hasStage;
  resources.llMaxBytes = kernels::kCollLlMaxBytes;
  resources.maxBlocks = state.maxBlocks;
  resources.ringChunkBytes = state.ringChunkBytes;
  resources.ringReduceBlocks = state.ringReduceBlocks;
  memo.choice =
      chooseCollective({collective, bytes, state.nranks, inPlace, aligned}, state.fabric, resources, state.settings);
  memo.bytes = bytes;
  memo.inPlace = inPlace;
  memo.aligned = aligned;
  memo.valid = true;
  return memo.choice;
}

SetPointers::SetPointers(const std::vector<CallArgs>& set) {
  for (std::size_t r = 0; r < set.size(); ++r) {
    everyRank_.send[r] = set[r].send;
    everyRank_.recv[r] = set[r].recv;
  }
}

Fact setInPlace(const std::vector<CallArgs>& set, SetReach reach) {
  if (reach == SetReach::LocalBuffers) return Fact::Unknown;
  bool inPlace = false;
  for (const CallArgs& call : set) inPlace = inPlace || (call.send == call.recv && call.send != nullptr);
  return inPlace ? Fact::Yes : Fact::No;
}

Fact setAligned(const std::vector<CallArgs>& set, SetReach reach) {
  if (reach == SetReach::LocalBuffers) return Fact::Unknown;
  return buffersAligned(set) ? Fact::Yes : Fact::No;
}

namespace {

// The set's kernel, chosen from its facts, launched on every local rank with its table of `pointers`.
void launchChosen(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers, bool capturing,
                  SetReach reach) {
  const CallArgs& first = set.front();
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  if (bytes == 0) return;  // no rank launches, so the counters stay in step
  const CollectiveChoice& choice =
      callChoice(state, first.collective, bytes, setInPlace(set, reach), setAligned(set, reach));
  logOnce(state, first.collective, choice, bytes);
  if (reach == SetReach::LocalBuffers && kernelInfo(choice.kernel).flow != DataFlow::ThroughStages) {
    throw Error(ErrorCode::Internal, fmt::format("{}: {} would touch the buffers of ranks in other processes",
                                                 collectiveName(first.collective), kernelName(choice.kernel)));
  }
  switch (choice.kernel) {
    case Kernel::LlOneShot: launchLlSet(state, set, bytes, false, capturing); break;
    case Kernel::Ll128OneShot: launchLlSet(state, set, bytes, true, capturing); break;
    case Kernel::OneShotReduce:
    case Kernel::TwoShot:
    case Kernel::ShardReduce: launchReductionSet(state, set, pointers, choice, capturing); break;
    case Kernel::Copy: launchCopySet(state, set, pointers, choice, capturing); break;
    case Kernel::PushReduce: launchPushSet(state, set, pointers, capturing); break;
    case Kernel::RingBroadcast: launchRingBroadcastSet(state, set, pointers, capturing); break;
    case Kernel::SplitTwoShot: launchSplitTwoShotSet(state, set, pointers, capturing); break;
    case Kernel::RingReduce: launchRingReduceSet(state, set, pointers, capturing); break;
    case Kernel::RingAllReduce: launchRingAllReduceSet(state, set, pointers, capturing); break;
    case Kernel::RingReduceScatter: launchRingReduceScatterSet(state, set, pointers, capturing); break;
    case Kernel::CeCopy: launchCeCopySet(state, set, pointers, capturing); break;
    case Kernel::CeTwoShot: launchCeTwoShotSet(state, set, pointers, capturing); break;
    case Kernel::CeRingAllReduce: launchCeRingAllReduceSet(state, set, pointers, capturing); break;
    case Kernel::LlPairs:
      throw Error(ErrorCode::Internal, fmt::format("{}: the send/recv kernel was chosen for a collective",
                                                   collectiveName(first.collective)));
  }
  ++state.sets;
}

}  // namespace

void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set, bool capturing, SetReach reach) {
  launchChosen(state, set, SetPointers(set), capturing, reach);
}

void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                         bool capturing) {
  launchChosen(state, set, pointers, capturing, SetReach::EveryBuffer);
}

void launchSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs) {
  const int n = state.nranks;
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(n), nullptr);
  std::vector<unsigned int> masks(static_cast<std::size_t>(n), 0u);
  std::vector<std::size_t> sent(static_cast<std::size_t>(n), 0);
  const auto join = [&](const CallArgs& call) {
    const auto r = static_cast<std::size_t>(call.rank);
    if (masks[r] != 0 && streams[r] != call.stream) {  // a rank takes part once its mask has a peer
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: rank {} gave two different streams to the send/recv calls of one group; use one "
                              "stream per rank in a group",
                              callLabel(state, call), call.rank));
    }
    streams[r] = call.stream;
    masks[r] |= 1u << call.peer;
  };
  for (const SendRecvPair& pair : pairs) {
    join(pair.send);
    join(pair.recv);
    sent[static_cast<std::size_t>(pair.send.rank)] += pair.send.count * dataTypeSize(pair.send.type);
  }
  // Eager groups launch like the collectives' sets, through each rank's KernelGraph from the launch threads
  // (on 4x H200 the direct launches one rank after another from this thread took 23-25 us a small group); a
  // captured group launches directly into the capture.
  const bool capturing = checkGroupCapture(state, pairs);
  if (state.planned) {
    launchPlannedPairs(state, pairs, streams, capturing);
    return;
  }
  // The group's kernel: by the most one rank sends (every rank of a group runs the same form, so the pair
  // counters stay in step).
  const std::size_t largest = *std::max_element(sent.begin(), sent.end());
  const CollectiveChoice& choice = callChoice(state, Collective::SendRecv, largest, Fact::No, Fact::Unknown);
  logOnce(state, Collective::SendRecv, choice, largest);
  if (choice.kernel == Kernel::CeCopy) {
    launchCeSendRecvPairs(state, pairs, streams, masks, capturing);
    return;
  }
  // LL lines, where every rank's messages fit them (else the copy form below).
  if (choice.kernel == Kernel::LlPairs && launchLlSendRecvPairs(state, pairs, streams, masks, capturing)) return;
  std::vector<CollCopyArgs> args(static_cast<std::size_t>(n));
  for (const SendRecvPair& pair : pairs) {
    CollCopyArgs& receiver = args[static_cast<std::size_t>(pair.recv.rank)];
    const std::size_t bytes = pair.recv.count * dataTypeSize(pair.recv.type);
    if (bytes == 0) continue;
    if (receiver.njobs == kCollMaxJobs) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: more than {} receives on one rank in one group; split the group",
                              callLabel(state, pair.recv), kCollMaxJobs));
    }
    addCopyJob(receiver, pair.send.send, pair.recv.recv, bytes);
  }
  const int blocks = p2pCopyBlocks(state);
  for (int r = 0; r < n; ++r) {
    const auto index = static_cast<std::size_t>(r);
    args[index].sync = syncArgs(state, r, Collective::SendRecv, true, masks[index]);
    args[index].sync.peersStore = storesIntoPeers(choice);  // receivers pull
  }
  forEachRank(state, capturing, [&](int r) {
    const auto index = static_cast<std::size_t>(r);
    if (masks[index] != 0) kernels::launchCollCopy(args[index], blocks, streams[index], launchOf(state, r, capturing));
  });
}

}  // namespace peerlink::coll
