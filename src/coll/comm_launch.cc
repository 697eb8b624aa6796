// Kernel launches for matched calls (comm_launch.hpp).
#include "coll/comm_launch.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "coll/choice_rules.hpp"
#include "coll/comm_launch_copy_engine.hpp"
#include "coll/comm_launch_large.hpp"
#include "coll/comm_launch_p2p_ll.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/partition.hpp"
#include "core/log.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

using kernels::CollCopyArgs;
using kernels::CollCopyJob;
using kernels::CollLlArgs;
using kernels::CollReduceArgs;
using kernels::CollSyncArgs;
using kernels::kCollMaxJobs;
using kernels::kCollMaxRanks;

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

void addJob(CollCopyArgs& args, const void* src, void* dst, std::size_t bytes) {
  if (bytes == 0 || src == dst) return;
  CollCopyJob& job = args.jobs[args.njobs++];
  job.src = src;
  job.dst[0] = dst;
  job.ndst = 1;
  job.bytes = bytes;
}

// Rank `call.rank`'s LL arguments: what it sends each rank (null: a token), where what it hears goes; the
// LL or the LL128 scratch areas.
CollLlArgs llArgs(const CommState& state, const CallArgs& call, std::size_t bytes, bool ll128) {
  CollLlArgs args;
  const int n = state.nranks;
  const int rank = call.rank;
  const unsigned int peers = allRanks(state) & ~(1u << rank);
  args.sync = syncArgs(state, rank, call.collective, false, allRanks(state));
  for (int p = 0; p < kCollMaxRanks; ++p) {
    args.scratch[p] = ll128 ? state.tableOf(rank).ll128Scratch[p] : state.tableOf(rank).scratch[p];
  }
  args.bytes = bytes;
  switch (call.collective) {
    case Collective::AllReduce:
      args.reduce = true;
      for (int p = 0; p < n; ++p) args.toRank[p] = call.send;
      args.out = call.recv;
      break;
    case Collective::Reduce:  // the root hears every rank's input; it sends tokens, the others tokens too
      args.reduce = true;
      args.toRank[rank] = call.send;
      if (rank == call.root) {
        args.out = call.recv;
      } else {
        args.toRank[call.root] = call.send;
        args.tokenMask = peers;
      }
      break;
    case Collective::ReduceScatter:
      args.reduce = true;
      for (int p = 0; p < n; ++p) args.toRank[p] = blockOf(call.send, bytes, p);
      args.out = call.recv;
      break;
    case Collective::AllGather:
      for (int p = 0; p < n; ++p) {
        args.toRank[p] = call.send;
        args.fromRank[p] = blockOf(call.recv, bytes, p);
      }
      break;
    case Collective::AllToAll:
      for (int p = 0; p < n; ++p) {
        args.toRank[p] = blockOf(call.send, bytes, p);
        args.fromRank[p] = blockOf(call.recv, bytes, p);
      }
      break;
    case Collective::Broadcast:
      args.fromRank[call.root] = call.recv;
      if (rank == call.root) {
        for (int p = 0; p < n; ++p) args.toRank[p] = call.send;
        args.tokenMask = peers;
      } else {
        args.tokenMask = peers & ~(1u << call.root);
      }
      break;
    case Collective::SendRecv: break;
  }
  return args;
}

void launchLlSet(const CommState& state, const std::vector<CallArgs>& set, std::size_t bytes, bool ll128,
                 bool capturing) {
  const int blocks =
      ll128 ? kernels::collLl128Blocks(bytes, state.maxBlocks) : kernels::collLlBlocks(bytes, state.maxBlocks);
  const auto launch = ll128 ? kernels::launchCollLl128 : kernels::launchCollLl;
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const CollLlArgs args = llArgs(state, call, bytes, ll128);
    launch(args, collType(call.type), collOp(call.op), blocks, call.stream, launchOf(state, r, capturing));
  });
}

void launchReductionSet(CommState& state, const std::vector<CallArgs>& set, const CollectiveChoice& choice,
                        bool capturing) {
  const CallArgs& first = set.front();
  const std::size_t size = dataTypeSize(first.type);
  const std::size_t bytes = first.count * size;
  const PeerPointerTable table = peerPointers(state, set);
  const int n = state.nranks;
  const bool reduce = first.collective == Collective::Reduce;
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    CollReduceArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.sync.peersStore = storesIntoPeers(choice);
    std::size_t workBytes = bytes;
    if (choice.kernel == Kernel::ShardReduce) {
      const std::size_t segment = bytes * static_cast<std::size_t>(r);  // count is the per-rank recvCount
      for (int p = 0; p < n; ++p) args.src[p] = offsetBy(table.send[p], segment);
      args.dst[0] = table.recv[r];
      args.ndst = 1;
      args.begin = 0;
      args.end = call.count;
    } else {
      for (int p = 0; p < n; ++p) args.src[p] = table.send[p];
      if (choice.kernel == Kernel::OneShotReduce) {
        // All-reduce: every rank reduces everything into its own output; reduce: the root alone works,
        // the others only meet it at the barriers (their inputs must stay until it has read them).
        if (!reduce || r == first.root) {
          args.dst[0] = table.recv[r];
          args.ndst = 1;
          args.begin = 0;
          args.end = call.count;
        }
      } else if (reduce && !reduceTwoShotSharesRoot(bytes, n)) {
        // Two-shot reduce: the count is cut among the n-1 non-root ranks; each reduces its shard into the
        // root's output, so the root's links carry the data once each way (its input read, the results
        // stored) instead of 2(n-1)/n of it coming in (on 4xH200, 512 MiB: 2.29 ms with the root reducing a
        // shard too). The root only meets the others at the barriers.
        if (r != first.root) {
          const ElementRange shard = nonRootShardOf(call, n);
          args.begin = shard.begin;
          args.end = shard.begin + shard.count;
          args.dst[0] = table.recv[first.root];
          args.ndst = 1;
        }
        const std::size_t parts = static_cast<std::size_t>(n - 1);
        workBytes = (call.count + parts - 1) / parts * size;
      } else if (reduce) {
        // Two-shot reduce of a smaller message: every rank, the root too, reduces shard r of every input into
        // the root's output.
        const ElementRange shard = shardOf(call, n, r);
        args.begin = shard.begin;
        args.end = shard.begin + shard.count;
        args.dst[0] = table.recv[first.root];
        args.ndst = 1;
        workBytes = (call.count + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n) * size;
      } else {  // two-shot all-reduce: its shard, into every output
        const ElementRange shard = shardOf(call, n, r);
        args.begin = shard.begin;
        args.end = shard.begin + shard.count;
        for (int p = 0; p < n; ++p) args.dst[p] = table.recv[(r + 1 + p) % n];  // own output last
        args.ndst = n;
        workBytes = (call.count + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n) * size;
      }
    }
    int blocks = kernels::collReduceBlocks(workBytes, state.maxBlocks);
    if (reduce && choice.kernel != Kernel::OneShotReduce) {
      if (const int cap = rootedTwoShotBlocks(Collective::Reduce, bytes, n); cap > 0) blocks = std::min(blocks, cap);
    }
    kernels::launchCollReduce(args, collType(call.type), collOp(call.op), blocks, call.stream,
                              launchOf(state, r, capturing));
  });
}

// Rank r's part `part` of a push reduction: the shards (all-reduce: partitionRange's; reduce-scatter: the count
// elements of each rank's block), each cut in parts of one stage slot (`slotCount` elements; part k: elements
// [k * slotCount, (k + 1) * slotCount) of every shard, as many as it has), its input for each, and where its
// own shard's result goes.
kernels::CollPushReduceArgs pushReduceArgs(const CommState& state, const PeerPointerTable& table, const CallArgs& call,
                                           std::size_t slotCount, std::size_t part) {
  kernels::CollPushReduceArgs args;
  const int n = state.nranks;
  const int r = call.rank;
  const std::size_t size = dataTypeSize(call.type);
  const bool allReduce = call.collective == Collective::AllReduce;
  args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
  args.sync.peersStore = allReduce;  // the end barrier releases the result's stores into the peers' outputs
  args.endBarrier = allReduce;
  std::size_t ownBegin = 0;
  for (int p = 0; p < n; ++p) {
    args.stage[p] = state.tableOf(r).stage[p];
    const ElementRange shard =
        allReduce ? shardOf(call, n, p) : ElementRange{call.count * static_cast<std::size_t>(p), call.count};
    const ElementRange piece = slotPartOf(shard, slotCount, part);
    args.shardInput[p] = offsetBy(table.send[r], piece.begin * size);
    args.shardCount[p] = piece.count;
    if (p == r) ownBegin = allReduce ? piece.begin : piece.begin - shard.begin;  // reduce-scatter: in its recv
  }
  if (allReduce) {
    for (int p = 1; p <= n; ++p)
      args.dst[args.ndst++] = offsetBy(table.recv[(r + p) % n], ownBegin * size);  // own last
  } else {
    args.dst[args.ndst++] = offsetBy(table.recv[r], ownBegin * size);
  }
  return args;
}

// The longest shard of a push reduction, in elements (reduce-scatter: every shard is count elements).
std::size_t longestPushShard(const CallArgs& first, int n) {
  if (first.collective != Collective::AllReduce) return first.count;
  std::size_t longest = 0;
  for (int p = 0; p < n; ++p) longest = std::max(longest, shardOf(first, n, p).count);
  return longest;
}

// The two-phase push kernel once per part of one stage slot of every shard (a message whose shards fit one
// slot -- every one AUTO pushes -- is one part), the parts one after another: each launch meets every peer at
// its start, as consecutive calls do, before it stores into their stages again.
void launchPushSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const CallArgs& first = set.front();
  const PeerPointerTable table = peerPointers(state, set);
  const std::size_t size = dataTypeSize(first.type);
  const std::size_t slotCount = kernels::kCollPushSlotBytes / size;
  const std::size_t longest = longestPushShard(first, state.nranks);
  const std::size_t parts = kernels::collPushParts(longest * size);
  const int blocks = kernels::collReduceBlocks(std::min(longest, slotCount) * size, state.maxBlocks);
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    for (std::size_t part = 0; part < parts; ++part) {
      kernels::launchCollPushPhased(pushReduceArgs(state, table, call, slotCount, part), collType(call.type),
                                    collOp(call.op), blocks, call.stream, launchOf(state, r, capturing));
    }
  });
}

// Broadcast, two-shot: the count is cut among the n-1 ranks other than the root (partitionRange(count, n - 1, k)
// with k = (rank - root - 1) mod n); each pulls its shard from the root once and stores it into every
// non-root rank's output, so the root sends every byte once. The root copies locally when out of place.
CollCopyArgs broadcastArgs(const CommState& state, const PeerPointerTable& table, const CallArgs& call,
                           Algorithm algorithm) {
  CollCopyArgs args;
  const int n = state.nranks;
  const std::size_t size = dataTypeSize(call.type);
  const std::size_t bytes = call.count * size;
  if (call.rank == call.root || algorithm != Algorithm::TwoShot) {  // direct: every rank reads the root's buffer
    addJob(args, table.send[call.root], table.recv[call.rank], bytes);
    return args;
  }
  const ElementRange shard = nonRootShardOf(call, n);
  if (shard.count == 0) return args;
  CollCopyJob& job = args.jobs[args.njobs++];
  job.src = offsetBy(table.send[call.root], shard.begin * size);
  job.bytes = shard.count * size;
  for (int p = 1; p < n; ++p) {
    const int to = (call.rank + p) % n;  // own output last
    if (to != call.root) job.dst[job.ndst++] = offsetBy(table.recv[to], shard.begin * size);
  }
  job.dst[job.ndst++] = offsetBy(table.recv[call.rank], shard.begin * size);
  return args;
}

// All-gather and all-to-all push: rank r stores its own data into every peer's output (H200 NVLink carries
// 365 GB/s each way when both directions push, 335 when both pull: docs/performance.md, both ways at once).
// All-gather is one job, read once and stored to every rank's block r (own last, none in place);
// all-to-all one job per destination, the next rank first so ranks start on different links.
CollCopyArgs pushArgs(const PeerPointerTable& table, const CallArgs& call, int n, std::size_t bytes) {
  CollCopyArgs args;
  const int r = call.rank;
  if (call.collective == Collective::AllGather) {
    CollCopyJob& job = args.jobs[args.njobs++];
    job.src = table.send[r];
    job.bytes = bytes;
    for (int p = 1; p <= n; ++p) {
      void* dst = blockOf(table.recv[(r + p) % n], bytes, r);
      if (dst != job.src) job.dst[job.ndst++] = dst;
    }
    if (job.ndst == 0) args.njobs = 0;
    return args;
  }
  for (int p = 1; p <= n; ++p) {  // all-to-all
    const int to = (r + p) % n;
    addJob(args, blockOf(table.send[r], bytes, to), blockOf(table.recv[to], bytes, r), bytes);
  }
  return args;
}

void launchCopySet(CommState& state, const std::vector<CallArgs>& set, const CollectiveChoice& choice, bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  const PeerPointerTable table = peerPointers(state, set);
  // The bytes a rank's kernel reads: all-gather's one job is read once, whatever its destinations.
  const std::size_t work = first.collective == Collective::AllToAll ? bytes * n : bytes;
  int blocks = kernels::collCopyBlocks(work, state.maxBlocks);
  if (first.collective == Collective::Broadcast && choice.algorithm == Algorithm::TwoShot) {
    if (const int cap = rootedTwoShotBlocks(Collective::Broadcast, bytes, n); cap > 0) blocks = std::min(blocks, cap);
  }
  const std::size_t chunkBytes = kernels::collCopyChunkBytes(work, state.maxBlocks);
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    CollCopyArgs args = call.collective == Collective::Broadcast ? broadcastArgs(state, table, call, choice.algorithm)
                                                                 : pushArgs(table, call, n, bytes);
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.sync.peersStore = storesIntoPeers(choice);
    args.chunkBytes = chunkBytes;
    kernels::launchCollCopy(args, blocks, call.stream, launchOf(state, r, capturing));
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
  ChoiceMemo& memo = state.choices[static_cast<std::size_t>(collective)];
  if (memo.valid && memo.bytes == bytes && memo.inPlace == inPlace && memo.aligned == aligned) return memo.choice;
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

PeerPointerTable peerPointers(const CommState& state, const std::vector<CallArgs>& set) {
  PeerPointerTable table;
  for (int r = 0; r < state.nranks; ++r) {
    table.send[r] = set[static_cast<std::size_t>(r)].send;
    table.recv[r] = set[static_cast<std::size_t>(r)].recv;
  }
  return table;
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

void launchCollectiveSet(CommState& state, const std::vector<CallArgs>& set, bool capturing, SetReach reach) {
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
    case Kernel::ShardReduce: launchReductionSet(state, set, choice, capturing); break;
    case Kernel::Copy: launchCopySet(state, set, choice, capturing); break;
    case Kernel::PushReduce: launchPushSet(state, set, capturing); break;
    case Kernel::RingBroadcast: launchRingBroadcastSet(state, set, capturing); break;
    case Kernel::SplitTwoShot: launchSplitTwoShotSet(state, set, capturing); break;
    case Kernel::RingReduce: launchRingReduceSet(state, set, capturing); break;
    case Kernel::RingAllReduce: launchRingAllReduceSet(state, set, capturing); break;
    case Kernel::RingReduceScatter: launchRingReduceScatterSet(state, set, capturing); break;
    case Kernel::CeCopy: launchCeCopySet(state, set, capturing); break;
    case Kernel::CeTwoShot: launchCeTwoShotSet(state, set, capturing); break;
    case Kernel::CeRingAllReduce: launchCeRingAllReduceSet(state, set, capturing); break;
    case Kernel::LlPairs:
      throw Error(ErrorCode::Internal, fmt::format("{}: the send/recv kernel was chosen for a collective",
                                                   collectiveName(first.collective)));
  }
  ++state.sets;
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
    addJob(receiver, pair.send.send, pair.recv.recv, bytes);
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
