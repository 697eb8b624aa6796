// Launchers of the large-message kernels (comm_launch_large.hpp).
#include "coll/comm_launch_large.hpp"

#include <cstdint>

#include "coll/comm_launch.hpp"
#include "coll/comm_launch_support.hpp"

namespace peerlink::coll {

using kernels::CollCopyArgs;
using kernels::CollCopyJob;
using kernels::CollReduceArgs;

namespace {

// The two-shot grids' size: a shard of ceil(count / n) elements.
std::size_t twoShotShardBytes(const CallArgs& first, int n) {
  return (first.count + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n) * dataTypeSize(first.type);
}

}  // namespace

// The first kernel of a two-shot all-reduce of large messages: a direct-read reduce-scatter of each rank's
// shard (partitionRange's, as the fused kernel and the plan cut it) into its own output. Its start barrier
// finds every input ready.
void launchShardReduceScatter(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                              bool capturing) {
  const int n = state.nranks;
  const int reduceBlocks = kernels::collReduceBlocks(twoShotShardBytes(set.front(), n), state.maxBlocks);
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const ElementRange shard = shardOf(call, n, r);
    CollReduceArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.sync.peersStore = false;  // it only loads from the peers
    for (int p = 0; p < n; ++p) args.src[p] = table.send[p];
    args.begin = shard.begin;
    args.end = shard.begin + shard.count;
    args.dst[0] = table.recv[r];
    args.ndst = 1;
    kernels::launchCollReduce(args, collType(call.type), collOp(call.op), reduceBlocks, call.stream,
                              launchOf(state, r, capturing));
  });
}

// Two-shot all-reduce of large messages as two kernels per rank (Kernel::SplitTwoShot): the reduce-scatter
// above, then an all-gather kernel that stores each rank's shard into every peer's output. It writes only
// shards their owners have finished (each rank's own shard, after its own reduce-scatter on its stream), and
// its end barrier, which releases the pushes, also tells every rank that all reads of its input are done. In
// place, rank r's all-gather writes shard r of a peer's buffer, which only rank r's reduce-scatter read.
void launchSplitTwoShotSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                           bool capturing) {
  launchShardReduceScatter(state, set, pointers, capturing);
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const std::size_t size = dataTypeSize(first.type);
  const std::size_t shardBytes = twoShotShardBytes(first, n);
  const int copyBlocks = kernels::collCopyBlocks(shardBytes, state.maxBlocks);
  const std::size_t chunkBytes = kernels::collCopyChunkBytes(shardBytes, state.maxBlocks);
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const ElementRange shard = shardOf(call, n, r);
    CollCopyArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.chunkBytes = chunkBytes;
    if (shard.count > 0) {
      CollCopyJob& job = args.jobs[args.njobs++];
      job.src = offsetBy(table.recv[r], shard.begin * size);
      job.bytes = shard.count * size;
      for (int p = 1; p < n; ++p) job.dst[job.ndst++] = offsetBy(table.recv[(r + p) % n], shard.begin * size);
    }
    kernels::launchCollCopy(args, copyBlocks, call.stream, launchOf(state, r, capturing));
  });
}

namespace {

// Rank r's part of the chain that starts at rank `start` and ends at start - 1 (mod n), over bytes
// [offset, offset + bytes): its predecessor and successor, -1 at the ends.
kernels::CollRingChain chainAt(int r, int start, int n, std::size_t offset, std::size_t bytes) {
  kernels::CollRingChain chain;
  chain.offset = offset;
  chain.bytes = bytes;
  chain.outOffset = offset;
  const int position = ((r - start) % n + n) % n;
  if (position > 0) chain.prev = (r - 1 + n) % n;
  if (position < n - 1) chain.next = (r + 1) % n;
  chain.head = ((start % n) + n) % n;
  return chain;
}

}  // namespace

// Ring broadcast: position i = (rank - root) mod n takes each chunk from position i - 1 and passes it to
// position i + 1 (plan: buildBroadcastRing).
void launchRingBroadcastSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                            bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const int root = first.root;
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  const int blocks = kernels::collRingBroadcastBlocks(bytes, state.maxBlocks, state.ringChunkBytes);
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    kernels::CollRingArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.chain[0] = chainAt(r, root, n, 0, bytes);
    args.chunkBytes = kernels::collRingBroadcastChunkBytes(bytes, state.maxBlocks, state.ringChunkBytes);
    args.src = r == root ? table.send[root] : table.recv[r];
    args.nextDst = table.recv[(r + 1) % n];
    if (r == root && table.send[root] != table.recv[root]) args.localDst = table.recv[root];
    kernels::launchCollRingBroadcast(args, blocks, call.stream, launchOf(state, r, capturing));
  });
}

namespace {

// n chains side by side on one grid of each ring kernel: the longest chain's bytes set the grids (the ring
// all-reduce's segments and the reduce-scatter's blocks; partitionRange never makes the first shorter).
kernels::CollRingChainsShape ringChainsShape(const CommState& state, std::size_t longest) {
  return kernels::collRingChainsShape(longest, state.nranks, state.maxBlocks, state.ringChunkBytes);
}

std::size_t allReduceLongestBytes(const CallArgs& first, int n) {
  return shardOf(first, n, 0).count * dataTypeSize(first.type);
}

// Bytes [offset, offset + bytes) of every input, reduced along the chain that ends at rank `end` into its
// output at outOffset: one chain of a ring reduce kernel.
struct ReduceSegment {
  std::size_t offset = 0;
  std::size_t bytes = 0;
  std::size_t outOffset = 0;
  int end = 0;
};

// Every rank launches the ring reduce kernel with one chain per segment, on equal slices of its grid.
void launchRingReduceChains(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                            bool capturing, const std::vector<ReduceSegment>& segments, int blocks,
                            std::size_t chunkBytes) {
  const int n = state.nranks;
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    kernels::CollRingReduceArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.input = table.send[r];
    args.stage = state.tableOf(r).ringStage[r];
    args.nextStage = state.tableOf(r).ringStage[(r + 1) % n];
    args.out = table.recv[r];  // written only by the chains this rank ends
    args.chains = static_cast<int>(segments.size());
    for (int j = 0; j < args.chains; ++j) {
      const ReduceSegment& segment = segments[static_cast<std::size_t>(j)];
      args.chain[j] = chainAt(r, segment.end + 1, n, segment.offset, segment.bytes);
      args.chain[j].outOffset = segment.outOffset;
    }
    args.chunkBytes = chunkBytes;
    kernels::launchCollRingReduce(args, collType(call.type), collOp(call.op), blocks, call.stream,
                                  launchOf(state, r, capturing));
  });
}

// The reduce-scatter's blocks: block j of every input (count elements at j * count) into rank j's output.
std::vector<ReduceSegment> reduceScatterBlocks(const CallArgs& first, int n) {
  const std::size_t blockBytes = first.count * dataTypeSize(first.type);
  std::vector<ReduceSegment> blocks(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    blocks[static_cast<std::size_t>(j)] = {static_cast<std::size_t>(j) * blockBytes, blockBytes, 0, j};
  return blocks;
}

}  // namespace

// Ring reduce: position i = (rank - root - 1) mod n combines each chunk from position i - 1's partial in its
// stage with its input and passes it to position i + 1's stage; the root, last, into its output (plan:
// buildReduceRing).
void launchRingReduceSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                         bool capturing) {
  const CallArgs& first = set.front();
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  launchRingReduceChains(
      state, set, pointers, capturing, {ReduceSegment{0, bytes, 0, first.root}},
      kernels::collRingReduceBlocks(bytes, state.maxBlocks, state.ringChunkBytes, state.ringReduceBlocks),
      kernels::collRingReduceChunkBytes(bytes, state.maxBlocks, state.ringChunkBytes, state.ringReduceBlocks));
}

// The first kernel of the ring all-reduce: n chains side by side, segment j (the two-shot shards,
// partitionRange's) reduced along the chain that ends at rank j, into rank j's output. Rank j's segment is
// complete once its kernel has ended, and by then every rank has read its own input segment j.
void launchRingSegmentReduces(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                              bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const std::size_t size = dataTypeSize(first.type);
  const kernels::CollRingChainsShape shape = ringChainsShape(state, allReduceLongestBytes(first, n));
  std::vector<ReduceSegment> segments(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    const ElementRange segment = shardOf(first, n, j);
    segments[static_cast<std::size_t>(j)] = {segment.begin * size, segment.count * size, segment.begin * size, j};
  }
  launchRingReduceChains(state, set, pointers, capturing, segments, shape.reduceBlocks, shape.reduceChunk);
}

// Ring all-reduce: the segment reduces above, then n ring broadcasts side by side in a second kernel, segment
// j from rank j along the chain that starts there. Every link carries 2(n-1)/n of the data, as stores. In
// place, rank r's input segment j is read only by rank r, in the first kernel, and overwritten (by rank r - 1)
// only in the second, where rank r - 1 stores only after rank r has started it (neighborStart), so after rank
// r's first kernel.
void launchRingAllReduceSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                            bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const std::size_t size = dataTypeSize(first.type);
  const kernels::CollRingChainsShape shape = ringChainsShape(state, allReduceLongestBytes(first, n));
  launchRingSegmentReduces(state, set, pointers, capturing);
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    kernels::CollRingArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.src = table.recv[r];
    args.nextDst = table.recv[(r + 1) % n];
    args.chains = n;
    for (int j = 0; j < n; ++j) {
      const ElementRange segment = shardOf(call, n, j);
      args.chain[j] = chainAt(r, j, n, segment.begin * size, segment.count * size);
    }
    args.chunkBytes = shape.gatherChunk;
    kernels::launchCollRingBroadcast(args, shape.gatherBlocks, call.stream, launchOf(state, r, capturing));
  });
}

// Ring reduce-scatter: the ring all-reduce's first kernel over the blocks, block j of every input reduced
// along the chain that ends at rank j into its output (plan: buildReduceScatterRing). In place rank j's
// output is its own input block j, which only rank j reads, each element before writing it.
void launchRingReduceScatterSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                                bool capturing) {
  const CallArgs& first = set.front();
  const kernels::CollRingChainsShape shape = ringChainsShape(state, first.count * dataTypeSize(first.type));
  launchRingReduceChains(state, set, pointers, capturing, reduceScatterBlocks(first, state.nranks), shape.reduceBlocks,
                         shape.reduceChunk);
}

}  // namespace peerlink::coll
