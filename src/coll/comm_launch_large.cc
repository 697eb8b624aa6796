// Launchers of the large-message kernels (comm_launch_large.hpp).
#include "coll/comm_launch_large.hpp"

#include <cstdint>

#include "coll/comm_launch.hpp"
#include "coll/comm_launch_support.hpp"

namespace peerlink::coll {

using kernels::CollCopyArgs;
using kernels::CollCopyJob;
using kernels::CollReduceArgs;

// Two-shot all-reduce of large messages as two kernels per rank (Kernel::SplitTwoShot): a direct-read
// reduce-scatter of the rank's shard (partitionRange's, as the fused kernel and the plan cut it) into its own
// output, then an all-gather that stores that shard into every peer's output. The reduce-scatter kernel's
// start barrier finds every input ready; the all-gather writes only shards their owners have finished (each
// rank's own shard, after its own reduce-scatter on its stream), and its end barrier, which releases the
// pushes, also tells every rank that all reads of its input are done. In place, rank r's all-gather writes
// shard r of a peer's buffer, which only rank r's reduce-scatter read.
void launchSplitTwoShotSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const std::size_t size = dataTypeSize(first.type);
  const PeerPointerTable table = peerPointers(state, set);
  const std::size_t shardBytes = (first.count + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n) * size;
  const int reduceBlocks = kernels::collReduceBlocks(shardBytes, state.maxBlocks);
  const int copyBlocks = kernels::collCopyBlocks(shardBytes, state.maxBlocks);
  const std::size_t chunkBytes = kernels::collCopyChunkBytes(shardBytes, state.maxBlocks);
  for (int r = 0; r < n; ++r) {
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
    onRank(state, r, [&] {
      kernels::launchCollReduce(args, collType(call.type), collOp(call.op), reduceBlocks, call.stream,
                                eagerGraphOf(state, r, capturing));
    });
  }
  for (int r = 0; r < n; ++r) {
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
    onRank(state, r,
           [&] { kernels::launchCollCopy(args, copyBlocks, call.stream, eagerGraphOf(state, r, capturing)); });
  }
}

namespace {

// Whether `one` and each of `each[0..n)` are 16-byte aligned (the rings move 16-byte units).
template <typename Pointer>
bool aligned16(const void* one, const Pointer (&each)[kernels::kCollMaxRanks], int n) {
  std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(one);
  for (int r = 0; r < n; ++r) bits |= reinterpret_cast<std::uintptr_t>(each[r]);
  return bits % 16 == 0;
}

// Rank r's neighbours in the chain that starts at rank `start` and ends at start - 1 (mod n); -1 at the ends.
struct ChainLinks {
  int prev = -1;
  int next = -1;
};

ChainLinks chainLinks(int r, int start, int n) {
  const int position = ((r - start) % n + n) % n;
  ChainLinks links;
  if (position > 0) links.prev = (r - 1 + n) % n;
  if (position < n - 1) links.next = (r + 1) % n;
  return links;
}

}  // namespace

bool ringBroadcastRuns(const CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& first = set.front();
  const PeerPointerTable table = peerPointers(state, set);
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  return aligned16(table.send[first.root], table.recv, state.nranks) &&
         kernels::collRoundsFit(bytes, kernels::collRingBlocks(bytes, state.maxBlocks),
                                kernels::collRingChunkBytes(bytes, state.maxBlocks));
}

// Ring broadcast: position i = (rank - root) mod n takes each chunk from position i - 1 and passes it to
// position i + 1 (plan: buildBroadcastRing).
void launchRingBroadcastSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const int root = first.root;
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  const PeerPointerTable table = peerPointers(state, set);
  const int blocks = kernels::collRingBlocks(bytes, state.maxBlocks);
  for (int r = 0; r < n; ++r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const ChainLinks links = chainLinks(r, root, n);
    kernels::CollRingArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.bytes = bytes;
    args.chunkBytes = kernels::collRingChunkBytes(bytes, state.maxBlocks);
    args.src = r == root ? table.send[root] : table.recv[r];
    args.prev = links.prev;
    args.next = links.next;
    if (links.next >= 0) args.nextDst = table.recv[links.next];
    if (r == root && table.send[root] != table.recv[root]) args.localDst = table.recv[root];
    onRank(state, r,
           [&] { kernels::launchCollRingBroadcast(args, blocks, call.stream, eagerGraphOf(state, r, capturing)); });
  }
}

bool ringReduceRuns(const CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& first = set.front();
  const PeerPointerTable table = peerPointers(state, set);
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  return aligned16(table.recv[first.root], table.send, state.nranks) &&
         kernels::collRoundsFit(bytes, kernels::collRingReduceBlocks(bytes, state.maxBlocks),
                                kernels::collRingReduceChunkBytes(bytes, state.maxBlocks));
}

// Ring reduce: position i = (rank - root - 1) mod n combines each chunk from position i - 1's partial in its
// stage with its input and passes it to position i + 1's stage; the root, last, into its output (plan:
// buildReduceRing).
void launchRingReduceSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const CallArgs& first = set.front();
  const int n = state.nranks;
  const int root = first.root;
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  const PeerPointerTable table = peerPointers(state, set);
  const int blocks = kernels::collRingReduceBlocks(bytes, state.maxBlocks);
  const std::size_t chunkBytes = kernels::collRingReduceChunkBytes(bytes, state.maxBlocks);
  for (int r = 0; r < n; ++r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const ChainLinks links = chainLinks(r, root + 1, n);  // the chain ends at the root
    kernels::CollRingReduceArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    args.input = table.send[r];
    args.bytes = bytes;
    args.chunkBytes = chunkBytes;
    args.prev = links.prev;
    args.next = links.next;
    if (links.prev >= 0) args.stage = state.symmetric.ringStage[r];
    if (links.next >= 0) {
      args.nextStage = state.symmetric.ringStage[links.next];
    } else {
      args.out = table.recv[root];
    }
    onRank(state, r, [&] {
      kernels::launchCollRingReduce(args, collType(call.type), collOp(call.op), blocks, call.stream,
                                    eagerGraphOf(state, r, capturing));
    });
  }
}

}  // namespace peerlink::coll
