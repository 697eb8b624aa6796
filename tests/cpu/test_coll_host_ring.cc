// The host ring's schedule (kernels/host_ring.cuh) and its calls (coll/host_ring_call.hpp): every rank's blocks run
// on the host here exactly as the kernel's loops run them -- slice by slice, action by action, each block's slots a
// queue of kHostRingSlots between a rank and the next -- interleaved as a round-robin sweep gives, for
// 2-8 ranks, rings in and out of rank order, every collective the ring serves (broadcast and reduce from every
// root), counts from 1 element to several slices a block, in place and out of place, against the closed form. A
// schedule that would stall (a block waiting on a slot that never comes, or on a full queue that never drains) fails
// the sweep.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/comm_launch_plan.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/partition.hpp"
#include "kernels/host_ring.cuh"

namespace peerlink::coll {
namespace {

using kernels::HostRingAction;
using kernels::HostRingArgs;
using kernels::kHostRingBlocks;
using kernels::kHostRingSlots;

using Value = std::int64_t;  // sums of distinct values: exact
constexpr std::size_t kSliceElements = kernels::kHostRingSlotBytes / sizeof(Value);

// One block of one rank, as the kernel's loops run it.
struct BlockRun {
  std::size_t slices = 0;
  std::size_t slice = 0;
  int action = 0;
  std::size_t filled = 0;  // slots it filled and emptied
  std::size_t emptied = 0;
  std::vector<ElementRange> parts;
};

struct RankRun {
  HostRingArgs args;
  std::vector<Value>* input = nullptr;
  std::vector<Value>* output = nullptr;
  std::vector<BlockRun> blocks;
  std::vector<std::deque<std::vector<Value>>> slots;  // [block]: what this rank filled and the next has not emptied
};

// Runs the ring; inputs[r] and outputs[r] are rank r's buffers (the same vector in place). Returns "" or what
// went wrong.
std::string runRing(Collective collective, std::size_t count, int root, const std::vector<int>& order,
                    std::vector<std::vector<Value>>& inputs, std::vector<std::vector<Value>>& outputs, bool inPlace) {
  const int n = static_cast<int>(order.size());
  std::vector<RankRun> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    RankRun& run = ranks[static_cast<std::size_t>(r)];
    run.args = hostRingCallArgs(collective, count, DataType::I64, order, r, root);
    run.input = &inputs[static_cast<std::size_t>(r)];
    run.output = inPlace ? run.input : &outputs[static_cast<std::size_t>(r)];
    run.slots.resize(kHostRingBlocks);
    for (int b = 0; b < kHostRingBlocks; ++b) {
      BlockRun block;
      for (int c = 0; c < n; ++c) {
        block.parts.push_back(partitionRange(run.args.chunkCount[c], kHostRingBlocks, b, run.args.alignElements));
        block.slices = std::max(block.slices, (block.parts.back().count + kSliceElements - 1) / kSliceElements);
      }
      block.action = kernels::hostRingFirstAction(run.args.collective, n);
      run.blocks.push_back(block);
    }
  }
  const int first = kernels::hostRingFirstAction(ranks[0].args.collective, n);
  const int last = kernels::hostRingLastAction(ranks[0].args.collective, n);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      RankRun& run = ranks[static_cast<std::size_t>(r)];
      RankRun& prev = ranks[static_cast<std::size_t>(run.args.prev)];
      for (int b = 0; b < kHostRingBlocks; ++b) {
        BlockRun& block = run.blocks[static_cast<std::size_t>(b)];
        std::deque<std::vector<Value>>& own = run.slots[static_cast<std::size_t>(b)];
        std::deque<std::vector<Value>>& from = prev.slots[static_cast<std::size_t>(b)];
        while (block.slice < block.slices) {
          const HostRingAction action =
              kernels::hostRingAction(run.args.collective, n, run.args.position, run.args.rootPosition, block.action);
          if ((action.receives && from.empty()) || (action.sends && own.size() >= kHostRingSlots)) break;
          const ElementRange piece =
              slotPartOf(block.parts[static_cast<std::size_t>(action.chunk)], kSliceElements, block.slice);
          std::vector<Value> got;
          if (action.receives) {
            got = from.front();
            from.pop_front();
            if (got.size() != piece.count) {
              return "rank " + std::to_string(r) + " block " + std::to_string(b) + " received " +
                     std::to_string(got.size()) + " elements where its piece has " + std::to_string(piece.count);
            }
          }
          std::vector<Value> value(piece.count);
          for (std::size_t i = 0; i < piece.count; ++i) {
            // The kernel reads the rank's input only where it sends it or reduces with it (a broadcast's other
            // ranks have none).
            const bool reads = !action.receives || action.reduces;
            const Value mine = reads ? run.input->at(run.args.inBegin[action.chunk] + piece.begin + i) : 0;
            value[i] = !action.receives ? mine : (action.reduces ? got[i] + mine : got[i]);
          }
          if (action.stores) {
            for (std::size_t i = 0; i < piece.count; ++i) {
              run.output->at(run.args.outBegin[action.chunk] + piece.begin + i) = value[i];
            }
          }
          if (action.sends) own.push_back(value);
          block.filled += action.sends ? 1 : 0;
          block.emptied += action.receives ? 1 : 0;
          progress = true;
          if (++block.action > last) {
            block.action = first;
            ++block.slice;
          }
        }
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    const RankRun& run = ranks[static_cast<std::size_t>(r)];
    for (int b = 0; b < kHostRingBlocks; ++b) {
      if (run.blocks[static_cast<std::size_t>(b)].slice < run.blocks[static_cast<std::size_t>(b)].slices) {
        return "stalled: rank " + std::to_string(r) + " block " + std::to_string(b) + " at slice " +
               std::to_string(run.blocks[static_cast<std::size_t>(b)].slice);
      }
      if (!run.slots[static_cast<std::size_t>(b)].empty()) {
        return "rank " + std::to_string(r) + " block " + std::to_string(b) + " left slots unread";
      }
      // The kernel advances its counts by these at its end, whether or not the call ran through: they must be what
      // the blocks moved, or the next call would read slots before they are filled.
      const BlockRun& block = run.blocks[static_cast<std::size_t>(b)];
      const kernels::HostRingSlots perSlice =
          kernels::hostRingSlotsPerSlice(run.args.collective, n, run.args.position, run.args.rootPosition);
      if (block.filled != block.slices * static_cast<std::size_t>(perSlice.sends) ||
          block.emptied != block.slices * static_cast<std::size_t>(perSlice.receives)) {
        return "rank " + std::to_string(r) + " block " + std::to_string(b) + " filled " + std::to_string(block.filled) +
               " and emptied " + std::to_string(block.emptied) + " slots where hostRingSlotsPerSlice counts " +
               std::to_string(perSlice.sends) + " and " + std::to_string(perSlice.receives) + " a slice";
      }
    }
  }
  return "";
}

Value sendValue(int rank, std::size_t i) {
  return static_cast<Value>(rank + 1) * 1000003 + static_cast<Value>(i);
}

// Runs one case against the closed form (a broadcast's and a reduce's root `root`).
void checkCase(Collective collective, std::size_t count, const std::vector<int>& order, bool inPlace, int root = 0) {
  const int n = static_cast<int>(order.size());
  SCOPED_TRACE(std::string(collectiveName(collective)) + ", " + std::to_string(n) + " ranks, count " +
               std::to_string(count) + ", root " + std::to_string(root) + (inPlace ? ", in place" : ""));
  const std::size_t inCount = collective == Collective::ReduceScatter ? count * static_cast<std::size_t>(n) : count;
  const std::size_t outCount = collective == Collective::AllGather ? count * static_cast<std::size_t>(n) : count;
  std::vector<std::vector<Value>> inputs(static_cast<std::size_t>(n));
  std::vector<std::vector<Value>> outputs(static_cast<std::size_t>(n), std::vector<Value>(outCount, -1));
  for (int r = 0; r < n; ++r) {
    // A broadcast's other ranks pass no input: the run reading one would fail (vector::at), out of place.
    if (collective == Collective::Broadcast && r != root && !inPlace) continue;
    inputs[static_cast<std::size_t>(r)].resize(inCount);
    for (std::size_t i = 0; i < inCount; ++i) inputs[static_cast<std::size_t>(r)][i] = sendValue(r, i);
  }
  // In place the ring's buffers are one (the all-reduce's, broadcast's, reduce's; the others' in-place forms are
  // offsets into the output, which hostRingCallArgs does not see).
  ASSERT_EQ(runRing(collective, count, root, order, inputs, outputs, inPlace), "");
  for (int r = 0; r < n; ++r) {
    if (collective == Collective::Reduce && r != root) continue;  // only the root's output is defined
    const std::vector<Value>& got =
        inPlace ? inputs[static_cast<std::size_t>(r)] : outputs[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < outCount; ++i) {
      Value want = 0;
      switch (collective) {
        case Collective::AllReduce:
        case Collective::Reduce:
          for (int q = 0; q < n; ++q) want += sendValue(q, i);
          break;
        case Collective::ReduceScatter:
          for (int q = 0; q < n; ++q) want += sendValue(q, static_cast<std::size_t>(r) * count + i);
          break;
        case Collective::Broadcast: want = sendValue(root, i); break;
        default: want = sendValue(static_cast<int>(i / count), i % count); break;
      }
      ASSERT_EQ(got[i], want) << "rank " << r << " element " << i;
    }
  }
}

std::vector<int> scrambled(int n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::reverse(order.begin() + 1, order.end());  // 0, n-1, ..., 1
  if (n >= 4) std::swap(order[1], order[2]);
  return order;
}

TEST(HostRing, EveryCollectiveMatchesTheClosedForm) {
  // A block's part spans several slices from count * (n or 1) > kHostRingBlocks * kSliceElements.
  const std::size_t severalSlices = 3 * kHostRingBlocks * kSliceElements + 5;
  for (int n = 2; n <= 8; ++n) {
    std::vector<int> inOrder(static_cast<std::size_t>(n));
    std::iota(inOrder.begin(), inOrder.end(), 0);
    for (const std::vector<int>& order : {inOrder, scrambled(n)}) {
      for (Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather}) {
        for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1001}, severalSlices / 3,
                                  n <= 4 ? severalSlices : std::size_t{0}}) {
          if (count == 0) continue;
          checkCase(collective, count, order, false);
          if (collective == Collective::AllReduce) checkCase(collective, count, order, true);
        }
      }
      // The chains from and to every root, in place and not.
      for (Collective collective : {Collective::Broadcast, Collective::Reduce}) {
        for (int root = 0; root < n; ++root) {
          for (std::size_t count : {std::size_t{1}, std::size_t{1001}, n <= 3 ? severalSlices : std::size_t{0}}) {
            if (count == 0) continue;
            checkCase(collective, count, order, root % 2 == 1, root);
          }
        }
      }
    }
  }
}

TEST(HostRing, EveryActionMovesTheChunkTheNextRankExpects) {
  for (int n = 2; n <= 8; ++n) {
    for (int collective : {kernels::kHostRingAllReduce, kernels::kHostRingReduceScatter, kernels::kHostRingAllGather}) {
      const int first = kernels::hostRingFirstAction(collective, n);
      const int last = kernels::hostRingLastAction(collective, n);
      int sends = 0;
      int receives = 0;
      for (int p = 0; p < n; ++p) {
        for (int a = first; a <= last; ++a) {
          const HostRingAction action = kernels::hostRingAction(collective, n, p, 0, a);
          sends += action.sends ? 1 : 0;
          receives += action.receives ? 1 : 0;
          if (!action.sends) continue;
          // What position p sends at action a, position p + 1 receives at a + 1.
          const HostRingAction next = kernels::hostRingAction(collective, n, (p + 1) % n, 0, a + 1);
          EXPECT_TRUE(next.receives) << n << " ranks, position " << p << ", action " << a;
          EXPECT_EQ(next.chunk, action.chunk) << n << " ranks, position " << p << ", action " << a;
        }
        // The rank stores its own chunk finished (reductions) and every chunk (all-reduce, all-gather).
        const HostRingAction own = kernels::hostRingAction(collective, n, p, 0, n - 1);
        EXPECT_EQ(own.chunk, p);
        EXPECT_TRUE(own.stores);
        EXPECT_EQ(own.finishes, collective != kernels::kHostRingAllGather);
      }
      EXPECT_EQ(sends, receives);
      EXPECT_EQ(sends, n * (last - first));
    }
  }
}

TEST(HostRing, ChainsPassOneSliceAlongTheRingFromOrToTheRoot) {
  for (int n = 2; n <= 8; ++n) {
    for (int root = 0; root < n; ++root) {
      for (int collective : {kernels::kHostRingBroadcast, kernels::kHostRingReduce}) {
        int stores = 0;
        for (int p = 0; p < n; ++p) {
          const HostRingAction action = kernels::hostRingAction(collective, n, p, root, 0);
          const HostRingAction next = kernels::hostRingAction(collective, n, (p + 1) % n, root, 0);
          EXPECT_EQ(action.sends, next.receives) << n << " ranks, root " << root << ", position " << p;
          EXPECT_EQ(action.chunk, 0);
          stores += action.stores ? 1 : 0;
          // The broadcast starts at its root; the reduce ends there, finished.
          if (collective == kernels::kHostRingBroadcast) {
            EXPECT_EQ(action.receives, p != root);
          } else {
            EXPECT_EQ(action.finishes, p == root);
            EXPECT_EQ(action.sends, p != root);
          }
        }
        EXPECT_EQ(stores, collective == kernels::kHostRingBroadcast ? n : 1);
      }
    }
  }
}

TEST(HostRing, TakesTheCallsBetweenTheLinesAndItsLimit) {
  const std::size_t lines = kPlanLlMaxBytes / 4;  // f32 elements of the largest LL message
  EXPECT_FALSE(runsAsHostRing(Collective::AllReduce, lines, DataType::F32, 2, 16u << 20));
  EXPECT_TRUE(runsAsHostRing(Collective::AllReduce, lines + 1, DataType::F32, 2, 16u << 20));
  EXPECT_TRUE(runsAsHostRing(Collective::AllReduce, (16u << 20) / 4, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllReduce, (16u << 20) / 4 + 1, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllReduce, lines + 1, DataType::F32, 2, 0));  // off
  // The all-gather and reduce-scatter count their whole buffer: 4 ranks of 4 MiB + 4 bytes pass 16 MiB.
  EXPECT_TRUE(runsAsHostRing(Collective::AllGather, (4u << 20) / 4, DataType::F32, 4, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllGather, (4u << 20) / 4 + 1, DataType::F32, 4, 16u << 20));
  EXPECT_TRUE(runsAsHostRing(Collective::ReduceScatter, (4u << 20) / 4, DataType::F32, 4, 16u << 20));
  for (Collective chain : {Collective::Broadcast, Collective::Reduce}) {
    EXPECT_TRUE(runsAsHostRing(chain, (1u << 20) / 4, DataType::F32, 4, 16u << 20)) << collectiveName(chain);
    // A chain goes on to kHostRingChainFactor times the limit.
    EXPECT_TRUE(runsAsHostRing(chain, (128u << 20) / 4, DataType::F32, 4, 16u << 20)) << collectiveName(chain);
    EXPECT_FALSE(runsAsHostRing(chain, (128u << 20) / 4 + 1, DataType::F32, 4, 16u << 20)) << collectiveName(chain);
    EXPECT_FALSE(runsAsHostRing(chain, (1u << 20) / 4, DataType::F32, 4, 0)) << collectiveName(chain);
  }
  for (Collective other : {Collective::AllToAll, Collective::SendRecv}) {
    EXPECT_FALSE(runsAsHostRing(other, (1u << 20) / 4, DataType::F32, 2, 16u << 20)) << collectiveName(other);
  }
  EXPECT_EQ(hostRingCallBytes(Collective::AllGather, 10, DataType::F16, 4), 80u);
  EXPECT_EQ(hostRingLimitBytes(Collective::AllReduce, 1000), 1000u);
  EXPECT_EQ(hostRingLimitBytes(Collective::Broadcast, 1000), 1000u * kHostRingChainFactor);
  EXPECT_EQ(hostRingLimitBytes(Collective::SendRecv, 1000), 0u);
}

TEST(HostRing, ChunksFollowTheRingOrder) {
  const std::vector<int> order = {0, 2, 1, 3};
  const HostRingArgs args = hostRingCallArgs(Collective::ReduceScatter, 100, DataType::F32, order, 1, 0);
  EXPECT_EQ(args.position, 2);
  EXPECT_EQ(args.prev, 2);
  EXPECT_EQ(args.next, 3);
  // Chunk c is the block of the rank at position c.
  EXPECT_EQ(args.inBegin[1], 200u);
  EXPECT_EQ(args.inBegin[2], 100u);
  EXPECT_EQ(args.outBegin[2], 0u);
  const HostRingArgs gather = hostRingCallArgs(Collective::AllGather, 100, DataType::F32, order, 3, 0);
  EXPECT_EQ(gather.outBegin[1], 200u);
  EXPECT_EQ(gather.position, 3);
  EXPECT_EQ(gather.next, 0);
  const HostRingArgs reduce = hostRingCallArgs(Collective::AllReduce, 1001, DataType::F32, order, 0, 0);
  std::size_t covered = 0;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(reduce.inBegin[c], covered);
    EXPECT_EQ(reduce.inBegin[c] % 4, 0u);  // 16-byte boundaries
    covered += reduce.chunkCount[c];
  }
  EXPECT_EQ(covered, 1001u);
  const HostRingArgs broadcast = hostRingCallArgs(Collective::Broadcast, 1001, DataType::F32, order, 3, 1);
  EXPECT_EQ(broadcast.rootPosition, 2);
  EXPECT_EQ(broadcast.chunkCount[0], 1001u);
  EXPECT_EQ(broadcast.chunkCount[1], 0u);
  EXPECT_THROW(hostRingCallArgs(Collective::AllReduce, 10, DataType::F32, {0}, 0, 0), Error);
  EXPECT_THROW(hostRingCallArgs(Collective::AllToAll, 10, DataType::F32, order, 0, 0), Error);
  EXPECT_THROW(hostRingCallArgs(Collective::Broadcast, 10, DataType::F32, order, 0, 7), Error);  // no such root
}

}  // namespace
}  // namespace peerlink::coll
