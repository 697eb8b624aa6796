// The direct collective kernels' arguments for one rank (kernel_args.hpp).
#include "coll/kernel_args.hpp"

#include <algorithm>

#include "coll/choice_rules.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/partition.hpp"

namespace peerlink::coll {

using kernels::CollCopyArgs;
using kernels::CollCopyJob;
using kernels::CollLlArgs;
using kernels::CollReduceArgs;
using kernels::kCollMaxRanks;

kernels::CollSyncArgs syncArgs(const RankView& view, Collective collective, bool p2p, unsigned int peerMask) {
  kernels::CollSyncArgs sync;
  for (int r = 0; r < kCollMaxRanks; ++r) sync.flags[r] = view.table->flags[r];
  sync.sync = view.sync;
  sync.failure = view.failure;
  sync.abort = view.abort;
  sync.timeoutNs = view.timeoutNs;
  sync.rank = view.rank;
  sync.nranks = view.nranks;
  sync.collective = static_cast<int>(collective);
  sync.peerMask = peerMask;
  sync.p2p = p2p;
  return sync;
}

void addCopyJob(CollCopyArgs& args, const void* src, void* dst, std::size_t bytes) {
  if (bytes == 0 || src == dst) return;
  CollCopyJob& job = args.jobs[args.njobs++];
  job.src = src;
  job.dst[0] = dst;
  job.ndst = 1;
  job.bytes = bytes;
}

// Rank `call.rank`'s LL arguments: what it sends each rank (null: a token), where what it hears goes; the
// LL or the LL128 scratch areas.
CollLlArgs llArgs(const RankView& view, const CallArgs& call, std::size_t bytes, bool ll128) {
  CollLlArgs args;
  const int n = view.nranks;
  const int rank = call.rank;
  const unsigned int peers = everyRank(n) & ~(1u << rank);
  args.sync = syncArgs(view, call.collective, false, everyRank(n));
  for (int p = 0; p < kCollMaxRanks; ++p)
    args.scratch[p] = ll128 ? view.table->ll128Scratch[p] : view.table->scratch[p];
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

ReductionLaunch reductionArgs(const RankView& view, const PeerPointerTable& table, const CallArgs& call,
                              const CollectiveChoice& choice, std::size_t bytes) {
  const std::size_t size = dataTypeSize(call.type);
  const int n = view.nranks;
  const int r = call.rank;
  const bool reduce = call.collective == Collective::Reduce;
  CollReduceArgs args;
  args.sync = syncArgs(view, call.collective, false, everyRank(n));
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
      if (!reduce || r == call.root) {
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
      if (r != call.root) {
        const ElementRange shard = nonRootShardOf(call, n);
        args.begin = shard.begin;
        args.end = shard.begin + shard.count;
        args.dst[0] = table.recv[call.root];
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
      args.dst[0] = table.recv[call.root];
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
  int blocks = kernels::collReduceBlocks(workBytes, view.maxBlocks);
  if (reduce && choice.kernel != Kernel::OneShotReduce) {
    if (const int cap = rootedTwoShotBlocks(Collective::Reduce, bytes, n); cap > 0) blocks = std::min(blocks, cap);
  }
  return {args, blocks};
}

// Rank r's part `part` of a push reduction: the shards (all-reduce: partitionRange's; reduce-scatter: the count
// elements of each rank's block), each cut in parts of one stage slot (`slotCount` elements; part k: elements
// [k * slotCount, (k + 1) * slotCount) of every shard, as many as it has), its input for each, and where its
// own shard's result goes.
kernels::CollPushReduceArgs pushReduceArgs(const RankView& view, const PeerPointerTable& table, const CallArgs& call,
                                           std::size_t slotCount, std::size_t part) {
  kernels::CollPushReduceArgs args;
  const int n = view.nranks;
  const int r = call.rank;
  const std::size_t size = dataTypeSize(call.type);
  const bool allReduce = call.collective == Collective::AllReduce;
  args.sync = syncArgs(view, call.collective, false, everyRank(n));
  args.sync.peersStore = allReduce;  // the end barrier releases the result's stores into the peers' outputs
  args.endBarrier = allReduce;
  std::size_t ownBegin = 0;
  for (int p = 0; p < n; ++p) {
    args.stage[p] = view.table->stage[p];
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
std::size_t longestPushShard(const CallArgs& call, int nranks) {
  if (call.collective != Collective::AllReduce) return call.count;
  std::size_t longest = 0;
  for (int p = 0; p < nranks; ++p) longest = std::max(longest, shardOf(call, nranks, p).count);
  return longest;
}

namespace {

// Broadcast, two-shot: the count is cut among the n-1 ranks other than the root (partitionRange(count, n - 1, k)
// with k = (rank - root - 1) mod n); each pulls its shard from the root once and stores it into every
// non-root rank's output, so the root sends every byte once. The root copies locally when out of place.
CollCopyArgs broadcastJobs(const PeerPointerTable& table, const CallArgs& call, int n, Algorithm algorithm) {
  CollCopyArgs args;
  const std::size_t size = dataTypeSize(call.type);
  const std::size_t bytes = call.count * size;
  if (call.rank == call.root || algorithm != Algorithm::TwoShot) {  // direct: every rank reads the root's buffer
    addCopyJob(args, table.send[call.root], table.recv[call.rank], bytes);
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
CollCopyArgs pushJobs(const PeerPointerTable& table, const CallArgs& call, int n, std::size_t bytes) {
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
  const std::size_t pitch = table.sendPitch[r] > 0 ? table.sendPitch[r] : bytes;
  for (int p = 1; p <= n; ++p) {  // all-to-all
    const int to = (r + p) % n;
    addCopyJob(args, blockOf(table.send[r], pitch, to), blockOf(table.recv[to], bytes, r), bytes);
  }
  return args;
}

}  // namespace

CollCopyArgs copyArgs(const RankView& view, const PeerPointerTable& table, const CallArgs& call,
                      const CollectiveChoice& choice, std::size_t bytes) {
  const int n = view.nranks;
  CollCopyArgs args = call.collective == Collective::Broadcast ? broadcastJobs(table, call, n, choice.algorithm)
                                                               : pushJobs(table, call, n, bytes);
  args.sync = syncArgs(view, call.collective, false, everyRank(n));
  args.sync.peersStore = storesIntoPeers(choice);
  // The bytes a rank's kernel reads: all-gather's one job is read once, whatever its destinations.
  const std::size_t work = call.collective == Collective::AllToAll ? bytes * n : bytes;
  args.chunkBytes = kernels::collCopyChunkBytes(work, view.maxBlocks);
  return args;
}

int copyBlocks(const RankView& view, const CallArgs& call, const CollectiveChoice& choice, std::size_t bytes) {
  const int n = view.nranks;
  const std::size_t work = call.collective == Collective::AllToAll ? bytes * n : bytes;
  int blocks = kernels::collCopyBlocks(work, view.maxBlocks);
  if (call.collective == Collective::Broadcast && choice.algorithm == Algorithm::TwoShot) {
    if (const int cap = rootedTwoShotBlocks(Collective::Broadcast, bytes, n); cap > 0) blocks = std::min(blocks, cap);
  }
  return blocks;
}

}  // namespace peerlink::coll
