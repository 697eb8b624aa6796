// The host ring's schedule and protocol (kernels/host_ring.cuh) and its calls (coll/host_ring_call.hpp): every
// rank's blocks run on the host (host_ring_world.hpp) exactly as the kernel's loops run them -- slice by slice,
// action by action, waiting on the ready and free words through the header's functions, each slot stamped with the
// call and fill that stored it -- interleaved as a round-robin sweep gives, for 2-8 ranks, rings in and out of rank
// order, every collective the ring serves (broadcast and reduce from every root), counts from 1 element to several
// slices a block, in place and out of place, against the closed form; calls of different shapes one after another on
// the same areas; and a rank late past the deadline, after which the next calls must run through. A schedule that
// would stall fails the sweep; a block that takes a slot of another call or fill, or overwrites a fill still needed,
// fails the test.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/comm_launch_plan.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/partition.hpp"
#include "host_ring_world.hpp"
#include "kernels/host_ring.cuh"
#include "peerlink/collective_choice.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {
namespace {

using hostring::RingWorld;
using hostring::Value;
using kernels::HostRingAction;
using kernels::HostRingArgs;
using kernels::kHostRingMaxBlocks;
using kernels::kHostRingSlots;

// A small shape for the exhaustive cases: the schedule is the same at any shape, and small slots reach several
// slices a block with small counts.
const HostRingShape kSmallShape{4, 1024};

Value sendValue(int rank, std::size_t i) {
  return static_cast<Value>(rank + 1) * 1000003 + static_cast<Value>(i);
}

// One call of every rank: its buffers (inputs[r], outputs[r]; in place the input) and how it was made.
struct CallCase {
  Collective collective = Collective::AllReduce;
  std::size_t count = 0;
  int root = 0;
  bool inPlace = false;
  HostRingShape shape;
  std::vector<std::vector<Value>> inputs;
  std::vector<std::vector<Value>> outputs;

  std::string name() const {
    return std::string(collectiveName(collective)) + ", count " + std::to_string(count) + ", root " +
           std::to_string(root) + (inPlace ? ", in place" : "") + ", " + std::to_string(shape.blocks) + " blocks of " +
           std::to_string(shape.slotBytes) + "-byte slots";
  }
};

// A call of n ranks, rank r's input sendValue(r, i) (a broadcast's other ranks have none out of place).
CallCase makeCall(Collective collective, std::size_t count, int n, int root, bool inPlace, const HostRingShape& shape) {
  CallCase call{collective, count, root, inPlace, shape, {}, {}};
  const bool toAll = collective == Collective::AllToAll;
  const std::size_t inCount =
      collective == Collective::ReduceScatter || toAll ? count * static_cast<std::size_t>(n) : count;
  const std::size_t outCount =
      collective == Collective::AllGather || toAll ? count * static_cast<std::size_t>(n) : count;
  call.inputs.resize(static_cast<std::size_t>(n));
  call.outputs.assign(static_cast<std::size_t>(n), std::vector<Value>(outCount, -1));
  for (int r = 0; r < n; ++r) {
    // A broadcast's other ranks pass no input: the run reading one would fail (vector::at), out of place.
    if (collective == Collective::Broadcast && r != root && !inPlace) continue;
    call.inputs[static_cast<std::size_t>(r)].resize(inCount);
    for (std::size_t i = 0; i < inCount; ++i) call.inputs[static_cast<std::size_t>(r)][i] = sendValue(r, i);
  }
  return call;
}

// What the launcher copies on a rank's stream before its ring kernel (hostRingOwnCopy): the all-to-all's own block.
void copyOwnBlock(CallCase& call, int r) {
  const HostRingOwnCopy own = hostRingOwnCopy(call.collective, call.count, r);
  std::vector<Value>& input = call.inputs[static_cast<std::size_t>(r)];
  std::vector<Value>& output = call.inPlace ? input : call.outputs[static_cast<std::size_t>(r)];
  for (std::size_t i = 0; i < own.count; ++i) output.at(own.outBegin + i) = input.at(own.inBegin + i);
}

// Queues the call on every rank of `world` around the ring `order`. In place the ring's buffers are one (the
// all-reduce's, broadcast's, reduce's, all-to-all's; the others' in-place forms are offsets into the output, which
// hostRingCallArgs does not see).
void enqueueCall(RingWorld& world, CallCase& call, const std::vector<int>& order) {
  for (int r = 0; r < world.size(); ++r) {
    copyOwnBlock(call, r);
    world.enqueue(
        r, hostRingCallArgs(call.collective, call.count, DataType::I64, order, r, call.root, call.shape),
        &call.inputs[static_cast<std::size_t>(r)],
        call.inPlace ? &call.inputs[static_cast<std::size_t>(r)] : &call.outputs[static_cast<std::size_t>(r)]);
  }
}

// The call's outputs against the closed form.
void expectClosedForm(const CallCase& call) {
  SCOPED_TRACE(call.name());
  const int n = static_cast<int>(call.inputs.size());
  for (int r = 0; r < n; ++r) {
    if (call.collective == Collective::Reduce && r != call.root) continue;  // only the root's output is defined
    const std::vector<Value>& got =
        call.inPlace ? call.inputs[static_cast<std::size_t>(r)] : call.outputs[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < got.size(); ++i) {
      Value want = 0;
      switch (call.collective) {
        case Collective::AllReduce:
        case Collective::Reduce:
          for (int q = 0; q < n; ++q) want += sendValue(q, i);
          break;
        case Collective::ReduceScatter:
          for (int q = 0; q < n; ++q) want += sendValue(q, static_cast<std::size_t>(r) * call.count + i);
          break;
        case Collective::Broadcast: want = sendValue(call.root, i); break;
        case Collective::SendRecv: want = sendValue(1 - r, i); break;  // the exchange: the other rank's message
        case Collective::AllToAll:                                     // block q from rank q: its input's block r
          want = sendValue(static_cast<int>(i / call.count), static_cast<std::size_t>(r) * call.count + i % call.count);
          break;
        default: want = sendValue(static_cast<int>(i / call.count), i % call.count); break;
      }
      ASSERT_EQ(got[i], want) << "rank " << r << " element " << i;
    }
  }
}

// Runs one call on `world` (every rank at once) and checks it against the closed form.
void checkCall(RingWorld& world, Collective collective, std::size_t count, const std::vector<int>& order, bool inPlace,
               int root, const HostRingShape& shape) {
  CallCase call = makeCall(collective, count, static_cast<int>(order.size()), root, inPlace, shape);
  SCOPED_TRACE(std::to_string(order.size()) + " ranks");
  enqueueCall(world, call, order);
  world.sweep();
  ASSERT_EQ(world.stillRunning(), "") << call.name();
  expectClosedForm(call);
}

// One call on a fresh world.
void checkCase(Collective collective, std::size_t count, const std::vector<int>& order, bool inPlace, int root = 0,
               const HostRingShape& shape = kSmallShape) {
  RingWorld world(static_cast<int>(order.size()));
  checkCall(world, collective, count, order, inPlace, root, shape);
}

// Elements of a call whose block parts span three slices and a bit of the shape's (of each rank's part, for the
// all-gather and reduce-scatter).
std::size_t severalSlices(const HostRingShape& shape) {
  return 3 * static_cast<std::size_t>(shape.blocks) * (shape.slotBytes / sizeof(Value)) + 5;
}

std::vector<int> scrambled(int n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::reverse(order.begin() + 1, order.end());  // 0, n-1, ..., 1
  if (n >= 4) std::swap(order[1], order[2]);
  return order;
}

TEST(HostRing, EveryCollectiveMatchesTheClosedForm) {
  const std::size_t several = severalSlices(kSmallShape);
  for (int n = 2; n <= 8; ++n) {
    std::vector<int> inOrder(static_cast<std::size_t>(n));
    std::iota(inOrder.begin(), inOrder.end(), 0);
    for (const std::vector<int>& order : {inOrder, scrambled(n)}) {
      for (Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather}) {
        for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1001}, several / 3, several}) {
          checkCase(collective, count, order, false);
          if (collective == Collective::AllReduce) checkCase(collective, count, order, true);
        }
      }
      // The all-to-all of two ranks (the exchange), in place and not, and their send/recv exchange.
      if (n == 2) {
        for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1001}, several / 3, several}) {
          checkCase(Collective::AllToAll, count, order, false);
          checkCase(Collective::AllToAll, count, order, true);
          checkCase(Collective::SendRecv, count, order, false);
        }
      }
      // The chains from and to every root, in place and not.
      for (Collective collective : {Collective::Broadcast, Collective::Reduce}) {
        for (int root = 0; root < n; ++root) {
          for (std::size_t count : {std::size_t{1}, std::size_t{1001}, several}) {
            checkCase(collective, count, order, root % 2 == 1, root);
          }
        }
      }
    }
  }
}

TEST(HostRing, TheChosenShapesCarryEveryCollective) {
  const std::vector<int> order = scrambled(3);
  for (Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                                Collective::Broadcast, Collective::Reduce}) {
    const HostRingShape shape = hostRingShape(collective, std::nullopt, kernels::kHostRingMaxBlocks);
    checkCase(collective, severalSlices(shape), order, false, 1, shape);
  }
  const HostRingShape exchange = hostRingShape(Collective::AllToAll, std::nullopt, kernels::kHostRingMaxBlocks);
  checkCase(Collective::AllToAll, severalSlices(exchange), {1, 0}, false, 0, exchange);
}

// One world, calls one after another of every collective, root and shape: a fill waits for the next rank to have
// emptied what its slot held, from this call or an earlier one, or, after a change of slot size, for the next rank
// to be done with the call before; the blocks a smaller grid leaves out keep their states in step.
TEST(HostRing, CallsOfEveryShapeFollowEachOtherOnTheSameAreas) {
  for (int n : {2, 3, 5}) {
    for (unsigned seed : {0u, 1u, 2u, 3u}) {
      SCOPED_TRACE(std::to_string(n) + " ranks, seed " + std::to_string(seed));
      RingWorld world(n);
      const std::vector<int> order = scrambled(n);
      std::deque<CallCase> calls;  // every call queued on every rank at once: a rank runs ahead into the next
      int root = 0;
      for (const HostRingShape& shape : {HostRingShape{4, 1024}, HostRingShape{7, 2048}, HostRingShape{2, 1024},
                                         HostRingShape{kHostRingMaxBlocks, 1024}, HostRingShape{3, 4096}}) {
        for (Collective collective :
             {Collective::AllReduce, Collective::Broadcast, Collective::AllGather, Collective::Reduce,
              Collective::ReduceScatter, Collective::AllToAll, Collective::SendRecv}) {
          const bool exchange = collective == Collective::AllToAll || collective == Collective::SendRecv;
          if (exchange && n != 2) continue;  // the exchange is of two ranks
          for (std::size_t count : {std::size_t{33}, severalSlices(shape)}) {
            calls.push_back(makeCall(collective, count, n, root, false, shape));
            enqueueCall(world, calls.back(), order);
            root = (root + 1) % n;
          }
        }
      }
      world.sweep(seed);
      ASSERT_EQ(world.stillRunning(), "");
      for (const CallCase& call : calls) expectClosedForm(call);
    }
  }
}

// A rank late past the deadline: the others' blocks give up waiting for it and end the call, and go on into the
// next call as far as they can while it comes and runs the late call; whatever still waits then gives up too. No
// block ever takes bytes of another call or fill, nor overwrites a fill still needed (checked inside the run), and
// the calls after run through on every rank -- as they do after a rank aborted at the start of the call (its blocks
// end before moving anything).
TEST(HostRing, AStalledRankLeavesTheNextCallsRunnable) {
  for (int n : {2, 3, 4}) {
    for (Collective collective : {Collective::AllReduce, Collective::Reduce, Collective::AllGather}) {
      for (bool abortedAtStart : {false, true}) {
        for (unsigned seed : {0u, 1u, 2u}) {
          SCOPED_TRACE(std::to_string(n) + " ranks, " + collectiveName(collective) +
                       (abortedAtStart ? ", the late rank aborted at the start" : ", the late rank late") + ", seed " +
                       std::to_string(seed));
          RingWorld world(n);
          const std::vector<int> order = scrambled(n);
          const int late = order.back();
          const std::size_t count = severalSlices(kSmallShape);
          CallCase stalled = makeCall(collective, count, n, 0, false, kSmallShape);
          CallCase following = makeCall(collective, count, n, 0, false, kSmallShape);
          const auto enqueueOn = [&](int r, CallCase& call) {
            world.enqueue(r,
                          hostRingCallArgs(call.collective, call.count, DataType::I64, order, r, call.root, call.shape),
                          &call.inputs[static_cast<std::size_t>(r)], &call.outputs[static_cast<std::size_t>(r)]);
          };
          for (int r = 0; r < n; ++r) {
            if (r != late) enqueueOn(r, stalled);
          }
          world.sweep(seed);
          for (int r = 0; r < n; ++r) {
            if (r != late) world.stopWaiting(r);
          }
          // Someone waited for the late rank in vain (the late rank itself may run through later: a chain's first
          // rank fills slots that the stopped ranks have let go).
          bool othersStopped = false;
          for (int r = 0; r < n; ++r) othersStopped = othersStopped || (r != late && world.anyStopped(r));
          EXPECT_TRUE(othersStopped);
          for (int r = 0; r < n; ++r) {
            if (r != late) enqueueOn(r, following);
          }
          world.sweep(seed);  // the others into the next call, as far as it goes without the late rank
          if (abortedAtStart) {
            world.start(late, hostRingCallArgs(stalled.collective, count, DataType::I64, order, late, 0, kSmallShape),
                        &stalled.inputs[static_cast<std::size_t>(late)],
                        &stalled.outputs[static_cast<std::size_t>(late)]);
            world.stopWaiting(late);
          } else {
            enqueueOn(late, stalled);
          }
          enqueueOn(late, following);
          // Everything that waits for a call another rank has left gives up, until nothing runs.
          for (int round = 0; round < 8 && !world.stillRunning().empty(); ++round) {
            world.sweep(seed);
            for (int r = 0; r < n; ++r) world.stopWaiting(r);
          }
          ASSERT_EQ(world.stillRunning(), "");
          for (int call = 0; call < 3; ++call) {
            checkCall(world, call == 1 ? Collective::Broadcast : collective, count, order, false, call % n,
                      kSmallShape);
            for (int r = 0; r < n; ++r) EXPECT_FALSE(world.anyStopped(r)) << "rank " << r << ", call " << call;
          }
        }
      }
    }
  }
}

TEST(HostRing, EveryActionMovesTheChunkTheNextRankExpects) {
  for (int n = 2; n <= 8; ++n) {
    for (int collective : {kernels::kHostRingAllReduce, kernels::kHostRingReduceScatter, kernels::kHostRingAllGather,
                           kernels::kHostRingExchange}) {
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
        // The rank stores its own chunk finished (reductions) and every chunk (all-reduce, all-gather); the
        // exchange only the chunks it receives.
        const bool gathers = collective == kernels::kHostRingAllGather || collective == kernels::kHostRingExchange;
        const HostRingAction own = kernels::hostRingAction(collective, n, p, 0, n - 1);
        EXPECT_EQ(own.chunk, p);
        EXPECT_EQ(own.stores, collective != kernels::kHostRingExchange);
        EXPECT_EQ(own.finishes, !gathers);
        for (int a = first; a <= last; ++a) {
          const HostRingAction action = kernels::hostRingAction(collective, n, p, 0, a);
          if (collective == kernels::kHostRingExchange) {
            EXPECT_EQ(action.stores, action.receives);
          }
        }
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
  // The all-to-all of two ranks counts its whole buffer too (2 blocks); of more ranks it stays with the plans.
  EXPECT_TRUE(runsAsHostRing(Collective::AllToAll, (8u << 20) / 4, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllToAll, (8u << 20) / 4 + 1, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllToAll, lines + 1, DataType::F32, 2, 0));  // off
  EXPECT_FALSE(runsAsHostRing(Collective::AllToAll, (1u << 20) / 4, DataType::F32, 4, 16u << 20));
  // Send/recv: the exchange of two ranks, both messages counted.
  EXPECT_TRUE(runsAsHostRing(Collective::SendRecv, (8u << 20) / 4, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::SendRecv, (8u << 20) / 4 + 1, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::SendRecv, (1u << 20) / 4, DataType::F32, 3, 16u << 20));
  EXPECT_EQ(hostRingCallBytes(Collective::AllGather, 10, DataType::F16, 4), 80u);
  EXPECT_EQ(hostRingCallBytes(Collective::AllToAll, 10, DataType::F16, 2), 40u);
  EXPECT_EQ(hostRingLimitBytes(Collective::AllReduce, 1000, 4), 1000u);
  EXPECT_EQ(hostRingLimitBytes(Collective::Broadcast, 1000, 4), 1000u * kHostRingChainFactor);
  EXPECT_EQ(hostRingLimitBytes(Collective::AllToAll, 1000, 2), 1000u);
  EXPECT_EQ(hostRingLimitBytes(Collective::AllToAll, 1000, 3), 0u);
  EXPECT_EQ(hostRingLimitBytes(Collective::SendRecv, 1000, 2), 1000u);
  EXPECT_EQ(hostRingLimitBytes(Collective::SendRecv, 1000, 4), 0u);
}

TEST(HostRing, ASendRecvGroupIsAnExchangeOnlyWithAMessageEachWayAlike) {
  const std::size_t count = (1u << 20) / 4;
  const std::size_t limit = 16u << 20;
  const ExchangeSide send{true, 1, count, DataType::F32};
  const ExchangeSide recv{false, 1, count, DataType::F32};
  EXPECT_TRUE(runsAsHostRingExchange({send, recv}, 0, 2, limit));
  EXPECT_TRUE(runsAsHostRingExchange({recv, send}, 0, 2, limit));
  EXPECT_TRUE(runsAsHostRingExchange({{true, 0, count, DataType::F32}, {false, 0, count, DataType::F32}}, 1, 2, limit));
  EXPECT_FALSE(runsAsHostRingExchange({send}, 0, 2, limit));              // one way only
  EXPECT_FALSE(runsAsHostRingExchange({send, send}, 0, 2, limit));        // two sends
  EXPECT_FALSE(runsAsHostRingExchange({send, recv, send}, 0, 2, limit));  // more than one each way
  EXPECT_FALSE(runsAsHostRingExchange({send, {false, 1, count + 1, DataType::F32}}, 0, 2, limit));  // sizes differ
  EXPECT_FALSE(runsAsHostRingExchange({send, {false, 1, count, DataType::I32}}, 0, 2, limit));      // types differ
  EXPECT_FALSE(runsAsHostRingExchange({{true, 0, count, DataType::F32}, recv}, 0, 2, limit));       // to itself
  EXPECT_FALSE(runsAsHostRingExchange({send, recv}, 0, 3, limit));                                  // three ranks
  EXPECT_FALSE(runsAsHostRingExchange({send, recv}, 0, 2, 0));                                      // the ring off
  EXPECT_FALSE(
      runsAsHostRingExchange({{true, 1, 8 * count + 1, DataType::F32}, {false, 1, 8 * count + 1, DataType::F32}}, 0, 2,
                             limit));  // past the limit, both messages counted
  // A rank's messages to itself are its own copies: the exchange is judged on the other rank's, so a rank that also
  // sends itself decides as the other rank, which does not, decides (across processes each sees only its own calls).
  const ExchangeSide toSelf{true, 0, 3, DataType::I8};
  const ExchangeSide fromSelf{false, 0, 3, DataType::I8};
  EXPECT_TRUE(runsAsHostRingExchange({toSelf, send, fromSelf, recv}, 0, 2, limit));
  EXPECT_TRUE(isTwoRankExchange({toSelf, send, fromSelf, recv}, 0, 2));
  EXPECT_EQ(withOtherRanks({toSelf, send, fromSelf, recv}, 0).size(), 2u);
  EXPECT_FALSE(isTwoRankExchange({toSelf, fromSelf}, 0, 2));  // only copies of its own
}

TEST(HostRing, ChunksFollowTheRingOrder) {
  const std::vector<int> order = {0, 2, 1, 3};
  const HostRingArgs args = hostRingCallArgs(Collective::ReduceScatter, 100, DataType::F32, order, 1, 0, kSmallShape);
  EXPECT_EQ(args.position, 2);
  EXPECT_EQ(args.prev, 2);
  EXPECT_EQ(args.next, 3);
  // Chunk c is the block of the rank at position c.
  EXPECT_EQ(args.inBegin[1], 200u);
  EXPECT_EQ(args.inBegin[2], 100u);
  EXPECT_EQ(args.outBegin[2], 0u);
  const HostRingArgs gather = hostRingCallArgs(Collective::AllGather, 100, DataType::F32, order, 3, 0, kSmallShape);
  EXPECT_EQ(gather.outBegin[1], 200u);
  EXPECT_EQ(gather.position, 3);
  EXPECT_EQ(gather.next, 0);
  const HostRingArgs reduce = hostRingCallArgs(Collective::AllReduce, 1001, DataType::F32, order, 0, 0, kSmallShape);
  std::size_t covered = 0;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(reduce.inBegin[c], covered);
    EXPECT_EQ(reduce.inBegin[c] % 4, 0u);  // 16-byte boundaries
    covered += reduce.chunkCount[c];
  }
  EXPECT_EQ(covered, 1001u);
  const HostRingArgs broadcast = hostRingCallArgs(Collective::Broadcast, 1001, DataType::F32, order, 3, 1, kSmallShape);
  EXPECT_EQ(broadcast.rootPosition, 2);
  EXPECT_EQ(broadcast.chunkCount[0], 1001u);
  EXPECT_EQ(broadcast.chunkCount[1], 0u);
  EXPECT_EQ(broadcast.blocks, 4);
  EXPECT_EQ(broadcast.slotBytes, 1024u);
  EXPECT_THROW(hostRingCallArgs(Collective::AllReduce, 10, DataType::F32, {0}, 0, 0, kSmallShape), Error);
  // The exchange of two ranks: each sends its input's block for the other, stores the other's as that rank's block.
  const HostRingArgs exchange = hostRingCallArgs(Collective::AllToAll, 100, DataType::F32, {1, 0}, 0, 0, kSmallShape);
  EXPECT_EQ(exchange.collective, kernels::kHostRingExchange);
  EXPECT_EQ(exchange.position, 1);
  EXPECT_EQ(exchange.inBegin[1], 100u);   // rank 0 sends its block for rank 1
  EXPECT_EQ(exchange.outBegin[0], 100u);  // and stores rank 1's as its block 1
  EXPECT_EQ(exchange.chunkCount[0], 100u);
  EXPECT_EQ(exchange.chunkCount[1], 100u);
  const HostRingOwnCopy own = hostRingOwnCopy(Collective::AllToAll, 100, 1);
  EXPECT_EQ(own.inBegin, 100u);
  EXPECT_EQ(own.outBegin, 100u);
  EXPECT_EQ(own.count, 100u);
  EXPECT_EQ(hostRingOwnCopy(Collective::AllGather, 100, 1).count, 0u);
  EXPECT_THROW(hostRingCallArgs(Collective::AllToAll, 10, DataType::F32, order, 0, 0, kSmallShape), Error);  // 4
  const HostRingArgs messages = hostRingCallArgs(Collective::SendRecv, 100, DataType::F32, {0, 1}, 1, 0, kSmallShape);
  EXPECT_EQ(messages.collective, kernels::kHostRingExchange);
  EXPECT_EQ(messages.inBegin[1], 0u);
  EXPECT_EQ(messages.outBegin[0], 0u);
  EXPECT_EQ(messages.chunkCount[0], 100u);
  EXPECT_EQ(hostRingOwnCopy(Collective::SendRecv, 100, 1).count, 0u);
  EXPECT_THROW(hostRingCallArgs(Collective::SendRecv, 10, DataType::F32, order, 0, 0, kSmallShape), Error);  // 4
  EXPECT_THROW(hostRingCallArgs(Collective::Broadcast, 10, DataType::F32, order, 0, 7, kSmallShape),
               Error);  // no such root
}

TEST(HostRing, ShapesAreNamedBlocksBySlot) {
  const std::optional<HostRingShape> shape = hostRingShapeNamed("64x32K");
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->blocks, 64);
  EXPECT_EQ(shape->slotBytes, std::size_t{32} << 10);
  EXPECT_FALSE(hostRingShapeNamed("AUTO").has_value());
  for (const char* bad : {"", "64", "x32K", "64x", "64xK", "65x32K", "0x32K", "64x128K", "64x32", "ax32K"}) {
    EXPECT_THROW(hostRingShapeNamed(bad), Error) << bad;
  }
  // Every value PEERLINK_COLL_HOST_RING_SHAPE allows names a shape the ring areas hold.
  for (const std::string& name : paramSpec("PEERLINK_COLL_HOST_RING_SHAPE").allowed) {
    const std::optional<HostRingShape> named = hostRingShapeNamed(name);
    if (!named) continue;
    EXPECT_LE(named->blocks, kHostRingMaxBlocks) << name;
    EXPECT_LE(named->slotBytes * kHostRingSlots, kernels::kHostRingRegionBytes) << name;
    EXPECT_EQ(named->slotBytes % 16, 0u) << name;
  }
  // AUTO: the chains' larger shape, the rounds' smaller.
  const int any = kernels::kHostRingMaxBlocks;
  EXPECT_EQ(hostRingShape(Collective::Broadcast, std::nullopt, any).blocks, 64);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, std::nullopt, any).blocks, 32);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, std::nullopt, any).slotBytes, std::size_t{64} << 10);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, HostRingShape{8, 2048}, any).blocks, 8);
  // Never more blocks than the communicator's grid cap: 8 ranks on one 132-SM GPU get 16 each, whose ring kernels
  // then fit on the GPU at once (64 each did not: every rank waited for another until the deadline).
  const int shared = collGridCap(std::vector<int>(8, 0), std::vector<int>(8, 132), 0);
  EXPECT_EQ(shared, 16);
  EXPECT_EQ(hostRingShape(Collective::Broadcast, std::nullopt, shared).blocks, 16);
  EXPECT_EQ(hostRingShape(Collective::Reduce, HostRingShape{64, 4096}, shared).blocks, 16);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, std::nullopt, shared).blocks, 16);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, std::nullopt, 0).blocks, 1);
}

// The words: a later call's always above an earlier call's, whatever the slots.
TEST(HostRing, AWordOfALaterCallIsAboveEveryWordOfAnEarlierOne) {
  using kernels::hostRingFirstFreeNeed;
  using kernels::hostRingWord;
  EXPECT_GT(hostRingWord(1, 0), hostRingWord(0, 1000000));
  EXPECT_EQ(kernels::hostRingReadyNeed(5, 0), hostRingWord(5, 1));
  kernels::HostRingBlockState state;
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 2), 0u);  // the first call: nothing to wait for
  state.calls = 5;
  state.slotBytes = 1024;
  state.occupant[0] = hostRingWord(4, 5);
  state.occupant[1] = hostRingWord(2, 1);
  // A slot's occupant emptied, whichever call it came from ...
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 0), hostRingWord(4, 5));
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 1), hostRingWord(2, 1));
  // ... but after a call the block stopped in or whose slots were another size, the next rank done with it.
  EXPECT_EQ(hostRingFirstFreeNeed(state, 2048, 0), hostRingWord(5, 0));
  state.stopped = 1;
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 1), hostRingWord(5, 0));
}

}  // namespace
}  // namespace peerlink::coll
