// The algorithms, one builder each (plan_builder.hpp). Every builder runs with nranks >= 2 and the layout
// filled in (send/recv already point into Output or Input for in place). Each comment states why the plan
// is race-free under the step model of plan.hpp; the host executor checks it anyway. Reductions always list
// their sources in rank order where every rank computes the same value, so all ranks get bitwise-identical
// results.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "coll/choice_rules.hpp"
#include "coll/plan_builder.hpp"

namespace peerlink::coll {
namespace {

std::vector<BufferRef> sendsOf(const PlanBuilder& b, std::size_t offset) {
  std::vector<BufferRef> srcs;
  for (int q = 0; q < b.nranks(); ++q) srcs.push_back(b.send(q, offset));
  return srcs;
}

// Rank q pushes a block of its send buffer -- all of it (all-gather) or block r (all-to-all) -- into block q
// of every rank r's recv, as the kernels do (comm_launch.cc: both directions pushing beat both pulling on
// NVLink). All-gather in place has its own block there already.
void pushBlocks(PlanBuilder& b, bool perDestination) {
  const std::size_t block = b.count();
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    const auto at = [&](int blockIndex) { return static_cast<std::size_t>(blockIndex) * block + ch.begin; };
    for (int q = 0; q < b.nranks(); ++q) {
      for (int r = 0; r < b.nranks(); ++r) {
        if (q == r && b.inPlace()) continue;
        b.pushCopy(c, 0, q, b.recv(r, at(q)), b.send(q, perDestination ? at(r) : ch.begin), ch.count);
      }
    }
  }
  b.emit(false);
}

// Rank r's part of the count cut among the n-1 non-root ranks, k = (r - root - 1) mod n (the rooted two-shot
// kernels, broadcast and reduce, cut it the same way: comm_launch.cc).
ElementRange nonRootShard(const PlanBuilder& b, int r) {
  return partitionRange(b.count(), b.nranks() - 1, b.wrap(r - b.root() - 1), b.alignElements());
}

// Chunks every non-root shard alike, from the largest.
void setNonRootChunks(PlanBuilder& b) {
  std::size_t largest = 0;
  for (int r = 0; r < b.nranks(); ++r) {
    if (r != b.root()) largest = std::max(largest, nonRootShard(b, r).count);
  }
  b.setChunks(largest);
}

// The ring reduce's hops for chunk `ch` (its chain ends at rank `end`): position i = (rank - end - 1) mod n
// runs hop i at phase i; position 0 stores its input's chunk into position 1's scratch, position i combines
// the partial in its scratch with its input into position i + 1's scratch, and `end`, last, combines its
// scratch with its input into `out` and finishes. Scratch holds the inputs' size, the chunk at its offsets.
void reduceAlongChain(PlanBuilder& b, std::size_t c, ElementRange ch, int end, BufferRef out) {
  const int n = b.nranks();
  for (int i = 0; i < n; ++i) {
    const int r = b.wrap(end + 1 + i);
    if (i == n - 1) {
      b.reduce(c, i, out, {b.scratch(r, ch.begin), b.send(r, ch.begin)}, ch.count, true);
    } else if (i == 0) {
      b.pushCopy(c, i, r, b.scratch(b.wrap(r + 1), ch.begin), b.send(r, ch.begin), ch.count);
    } else {
      b.pushReduce(c, i, r, b.scratch(b.wrap(r + 1), ch.begin), {b.scratch(r, ch.begin), b.send(r, ch.begin)}, ch.count,
                   false);
    }
  }
}

// The ring broadcast's hops for chunk `ch` from rank `start`: hop h (phase firstPhase + h) has rank start + h
// store the chunk into the next rank's output, `start` from `src`, the others from their own output where
// the hop before put it.
void passAlongChain(PlanBuilder& b, std::size_t c, ElementRange ch, int start, BufferRef src, int firstPhase) {
  for (int hop = 0; hop + 1 < b.nranks(); ++hop) {
    const int from = b.wrap(start + hop);
    b.pushCopy(c, firstPhase + hop, from, b.recv(b.wrap(from + 1), ch.begin), hop == 0 ? src : b.recv(from, ch.begin),
               ch.count);
  }
}

}  // namespace

// Each rank reads every rank's whole buffer and reduces locally. In place a rank would overwrite data its
// peers are still reading, so every rank first stages its data in its scratch (phase 0).
void buildAllReduceOneShot(PlanBuilder& b) {
  const ElementRange all{0, b.count()};
  b.setChunks(all.count);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk(all, c);
    for (int r = 0; r < b.nranks(); ++r) {
      if (!b.inPlace()) {
        b.reduce(c, 0, b.recv(r, ch.begin), sendsOf(b, ch.begin), ch.count, true);
        continue;
      }
      b.setScratch(r, b.count());
      b.copy(c, 0, b.scratch(r, ch.begin), b.send(r, ch.begin), ch.count);
      std::vector<BufferRef> srcs;
      for (int q = 0; q < b.nranks(); ++q) srcs.push_back(b.scratch(q, ch.begin));
      b.reduce(c, 1, b.recv(r, ch.begin), srcs, ch.count, true);
    }
  }
  b.emit(b.inPlace());
}

// Phase 0 (reduce-scatter): rank r reduces its shard s_r from every rank into its recv. Phase 1
// (all-gather): rank r copies every other shard from its owner's recv. Rank r writes only s_r in phase 0
// while peers read their own shards, so in place needs no staging.
void buildAllReduceTwoShot(PlanBuilder& b) {
  b.setChunks(b.shard(b.count(), 0).count);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    for (int r = 0; r < b.nranks(); ++r) {
      const ElementRange own = b.chunk(b.shard(b.count(), r), c);
      b.reduce(c, 0, b.recv(r, own.begin), sendsOf(b, own.begin), own.count, true);
      for (int q = 0; q < b.nranks(); ++q) {
        if (q == r) continue;
        const ElementRange theirs = b.chunk(b.shard(b.count(), q), c);
        b.copy(c, 1, b.recv(r, theirs.begin), b.recv(q, theirs.begin), theirs.count);
      }
    }
  }
  b.emit(true);
}

// The push kernel's flow (coll_push_phased.cu): phase 0, rank q stores chunk c of its send data's shard r
// into slot q of rank r's scratch; phase 1, rank r reduces its own send data and the slots in rank order
// into its recv; phase 2, rank r stores that result into every other rank's recv. No rank reads a peer.
// In place, rank q's shard r is read in phase 0 of a chunk and overwritten by rank r in phase 2 of the same
// chunk, two steps later.
void buildAllReduceTwoShotPush(PlanBuilder& b) {
  const int n = b.nranks();
  const std::size_t slot = b.shard(b.count(), 0).count;  // the longest shard
  for (int r = 0; r < n; ++r) b.setScratch(r, slot * static_cast<std::size_t>(n));
  b.setChunks(slot);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    for (int r = 0; r < n; ++r) {
      const ElementRange shard = b.shard(b.count(), r);
      const ElementRange own = b.chunk(shard, c);
      const std::size_t at = own.begin - shard.begin;  // within a slot
      std::vector<BufferRef> srcs;
      for (int q = 0; q < n; ++q) {
        const BufferRef stage = b.scratch(r, static_cast<std::size_t>(q) * slot + at);
        if (q != r) b.pushCopy(c, 0, q, stage, b.send(q, own.begin), own.count);
        srcs.push_back(q == r ? b.send(r, own.begin) : stage);
      }
      b.reduce(c, 1, b.recv(r, own.begin), srcs, own.count, true);
      for (int q = 0; q < n; ++q) {
        if (q != r) b.pushCopy(c, 2, r, b.recv(q, own.begin), b.recv(r, own.begin), own.count);
      }
    }
  }
  b.emit(true);
}

// What the ring all-reduce kernels do (launchRingAllReduceSet in comm_launch_large.cc): segment j (the
// count cut as shard(count, j)) is reduced along the chain that ends at rank j, into its output, as the ring
// reduce with root j (reduceAlongChain), and then passed on from rank j along the chain that starts there, as
// the ring broadcast (passAlongChain); the n segments side by side. The broadcast hops come after every
// reduce hop of their chunk (the kernel: a second launch), so in place a rank's input segment is read before
// the broadcast overwrites it; the scratch ranges of the segments are disjoint (the kernel: each chain's
// blocks own their stage slots).
void buildAllReduceRing(PlanBuilder& b) {
  const int n = b.nranks();
  for (int r = 0; r < n; ++r) b.setScratch(r, b.count());
  b.setChunks(b.shard(b.count(), 0).count);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    for (int j = 0; j < n; ++j) {
      const ElementRange ch = b.chunk(b.shard(b.count(), j), c);
      reduceAlongChain(b, c, ch, j, b.recv(j, ch.begin));
      passAlongChain(b, c, ch, j, b.recv(j, ch.begin), n);
    }
  }
  b.emit(true);
}

// Rank r reduces block r of every rank's send buffer. In place, rank r writes its own block r, which only
// it reads (as the same range).
void buildReduceScatterDirect(PlanBuilder& b) {
  const std::size_t block = b.count();
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    for (int r = 0; r < b.nranks(); ++r) {
      const std::size_t at = static_cast<std::size_t>(r) * block + ch.begin;
      b.reduce(c, 0, b.recv(r, ch.begin), sendsOf(b, at), ch.count, true);
    }
  }
  b.emit(false);
}

// The push kernel's flow: rank q stores chunk c of its block r into slot q of rank r's scratch (phase 0);
// rank r reduces its own block r and the slots in rank order into its recv (phase 1).
void buildReduceScatterPush(PlanBuilder& b) {
  const int n = b.nranks();
  const std::size_t block = b.count();
  for (int r = 0; r < n; ++r) b.setScratch(r, block * static_cast<std::size_t>(n));
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    for (int r = 0; r < n; ++r) {
      const std::size_t at = static_cast<std::size_t>(r) * block + ch.begin;
      std::vector<BufferRef> srcs;
      for (int q = 0; q < n; ++q) {
        const BufferRef stage = b.scratch(r, static_cast<std::size_t>(q) * block + ch.begin);
        if (q != r) b.pushCopy(c, 0, q, stage, b.send(q, at), ch.count);
        srcs.push_back(q == r ? b.send(r, at) : stage);
      }
      b.reduce(c, 1, b.recv(r, ch.begin), srcs, ch.count, true);
    }
  }
  b.emit(true);
}

// What the ring reduce-scatter kernel does (launchRingReduceScatterSet in comm_launch_large.cc): block j of
// every send buffer is reduced along the chain that ends at rank j (reduceAlongChain) into rank j's recv;
// the n blocks side by side, their scratch ranges disjoint. In place rank j's recv is its own send block j,
// which only rank j reads, in the hop that writes it.
void buildReduceScatterRing(PlanBuilder& b) {
  const int n = b.nranks();
  const std::size_t block = b.count();
  for (int r = 0; r < n; ++r) b.setScratch(r, static_cast<std::size_t>(n) * block);
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    for (int j = 0; j < n; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * block;
      reduceAlongChain(b, c, {at + ch.begin, ch.count}, j, b.recv(j, ch.begin));
    }
  }
  b.emit(true);
}

void buildAllGatherDirect(PlanBuilder& b) {
  pushBlocks(b, false);
}

// Round k (0..n-2): rank r copies block j = r-k-1 from rank r-1 (its send buffer at k = 0, its recv
// after). Rank r writes block j while rank r+1 reads block j+1. Out of place, rank r also copies its own
// block locally in round 0, which rank r+1 does not read (it reads rank r's send buffer then).
void buildAllGatherRing(PlanBuilder& b) {
  const int n = b.nranks();
  const std::size_t block = b.count();
  b.setChunks(block);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, block}, c);
    for (int r = 0; r < n; ++r) {
      if (!b.inPlace()) {
        b.copy(c, 0, b.recv(r, static_cast<std::size_t>(r) * block + ch.begin), b.send(r, ch.begin), ch.count);
      }
      for (int k = 0; k < n - 1; ++k) {
        const int prev = b.wrap(r - 1);
        const std::size_t at = static_cast<std::size_t>(b.wrap(r - k - 1)) * block + ch.begin;
        const BufferRef src = k == 0 ? b.send(prev, ch.begin) : b.recv(prev, at);
        b.copy(c, k, b.recv(r, at), src, ch.count);
      }
    }
  }
  b.emit(true);
}

// Every rank reads the root's whole buffer: the root's links carry (n-1) * count.
void buildBroadcastDirect(PlanBuilder& b) {
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    for (int r = 0; r < b.nranks(); ++r) {
      if (r == b.root() && b.inPlace()) continue;
      b.copy(c, 0, b.recv(r, ch.begin), b.send(b.root(), ch.begin), ch.count);
    }
  }
  b.emit(false);
}

// What the kernel does (broadcastArgs in comm_launch.cc), in one step: the count is cut among the n-1
// non-root ranks, rank r owning shard k = (r - root - 1) mod n of partitionRange(count, n - 1, k, align).
// Rank r reads its shard from the root's send buffer and stores it into every non-root rank's output,
// peers from rank r+1 on, its own last; out of place the root copies its buffer locally. These are the
// plans' only pushes (executor r, dst another rank). The kernel reads the shard once and stores it n-1
// times; a Transfer has one dst, so the plan lists one copy per destination, each naming the root as
// source (remoteReadElements counts the shard n-1 times). The root sends every element once. Race-free
// in one step: the shards are disjoint, every rank's output is written once per element, and the root's
// send buffer (its output in place, which nobody writes then) is only read.
void buildBroadcastTwoShot(PlanBuilder& b) {
  const int n = b.nranks();
  const int root = b.root();
  setNonRootChunks(b);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    if (!b.inPlace()) {
      const ElementRange all = b.chunk({0, b.count()}, c);
      b.copy(c, 0, b.recv(root, all.begin), b.send(root, all.begin), all.count);
    }
    for (int r = 0; r < n; ++r) {
      if (r == root) continue;
      const ElementRange ch = b.chunk(nonRootShard(b, r), c);
      for (int p = 1; p <= n; ++p) {
        const int to = b.wrap(r + p);  // p = n is r itself: its own output last
        if (to != root) b.pushCopy(c, 0, r, b.recv(to, ch.begin), b.send(root, ch.begin), ch.count);
      }
    }
  }
  b.emit(false);
}

// What the ring kernel does (launchRingBroadcastSet in comm_launch_large.cc): position i = (rank - root)
// mod n stores each chunk into position i + 1's output, the root from its send buffer, the others from
// their own output where the chunk arrived the step before; out of place the root also copies its buffer
// locally. Hop i of chunk c runs at step c + i, so every link carries the data once and the chunks stream
// down the chain. Race-free: at a step, hop i reads chunk c of position i's output (written by hop i - 1 a
// step earlier) and writes chunk c of position i + 1's output, and no two hops of a step touch one chunk of
// one rank's output.
void buildBroadcastRing(PlanBuilder& b) {
  const int root = b.root();
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    if (!b.inPlace()) b.copy(c, 0, b.recv(root, ch.begin), b.send(root, ch.begin), ch.count);
    passAlongChain(b, c, ch, root, b.send(root, ch.begin), 0);
  }
  b.emit(true);
}

// The root reads every rank's whole buffer and reduces (in place it reads its own as the range it writes).
void buildReduceDirect(PlanBuilder& b) {
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    b.reduce(c, 0, b.recv(b.root(), ch.begin), sendsOf(b, ch.begin), ch.count, true);
  }
  b.emit(false);
}

// What the kernel does (launchReductionSet in comm_launch.cc), in one step: the count is cut among the n-1
// non-root ranks as broadcast two-shot cuts it, rank r owning shard k = (r - root - 1) mod n; rank r reduces
// its shard of every rank's send buffer in rank order and stores the result into the root's output (a
// push). The root only lends its input: its links carry the data once each way (its input read once, the
// results stored once), where reducing a shard itself as well would bring 2(n-1)/n of it in. Race-free in
// one step: the shards are disjoint, and in place each element of the root's buffer is read and then
// written by the one transfer that owns it.
void buildReduceTwoShot(PlanBuilder& b) {
  const int n = b.nranks();
  const int root = b.root();
  if (reduceTwoShotSharesRoot(b.bytes(), n)) {
    // A smaller message: every rank, the root too, reduces shard r of every send buffer into the root's
    // output (the root's own shard locally).
    b.setChunks(b.shard(b.count(), 0).count);
    for (std::size_t c = 0; c < b.chunks(); ++c) {
      for (int r = 0; r < n; ++r) {
        const ElementRange ch = b.chunk(b.shard(b.count(), r), c);
        if (r == root) {
          b.reduce(c, 0, b.recv(root, ch.begin), sendsOf(b, ch.begin), ch.count, true);
        } else {
          b.pushReduce(c, 0, r, b.recv(root, ch.begin), sendsOf(b, ch.begin), ch.count, true);
        }
      }
    }
    b.emit(false);
    return;
  }
  setNonRootChunks(b);
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    for (int r = 0; r < n; ++r) {
      if (r == root) continue;
      const ElementRange ch = b.chunk(nonRootShard(b, r), c);
      b.pushReduce(c, 0, r, b.recv(root, ch.begin), sendsOf(b, ch.begin), ch.count, true);
    }
  }
  b.emit(false);
}

// What the ring reduce kernel does (launchRingReduceSet in comm_launch_large.cc): position i = (rank - root - 1)
// mod n; position 0 stores its input's chunk into position 1's scratch (the kernel's stage), position i
// combines the partial in its scratch with its input into position i + 1's scratch, and the root, last,
// combines its scratch with its input into its output and finishes. Hop i of chunk c runs at step c + i.
// The scratch holds the whole count here; the kernel cycles four slots per block, the flags keeping a slot
// from being refilled before it is combined.
void buildReduceRing(PlanBuilder& b) {
  for (int r = 0; r < b.nranks(); ++r) b.setScratch(r, b.count());
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    reduceAlongChain(b, c, ch, b.root(), b.recv(b.root(), ch.begin));
  }
  b.emit(true);
}

void buildAllToAllDirect(PlanBuilder& b) {
  pushBlocks(b, true);
}

// Rank r receives rank r-1's buffer (nccl-tests' sendrecv pattern), read by the receiver.
void buildSendRecvShift(PlanBuilder& b) {
  b.setChunks(b.count());
  for (std::size_t c = 0; c < b.chunks(); ++c) {
    const ElementRange ch = b.chunk({0, b.count()}, c);
    for (int r = 0; r < b.nranks(); ++r) b.copy(c, 0, b.recv(r, ch.begin), b.send(b.wrap(r - 1), ch.begin), ch.count);
  }
  b.emit(false);
}

}  // namespace peerlink::coll
