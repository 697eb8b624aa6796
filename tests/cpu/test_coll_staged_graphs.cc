// Which staged calls replay a graph, capture one or run eagerly (staged_graphs.hpp).
#include "coll/staged_graphs.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace peerlink::coll {
namespace {

using Action = StagedGraphPolicy::Action;

// A call of `count` elements on one local rank whose buffers sit at addresses made from `buffers`.
StagedCallKey keyOf(std::size_t count, std::uintptr_t buffers = 0x1000) {
  StagedCallKey key;
  key.count = count;
  key.sends = {reinterpret_cast<const void*>(buffers)};
  key.recvs = {reinterpret_cast<void*>(buffers + 0x100000)};
  return key;
}

TEST(StagedGraphPolicy, ACallThatComesBackIsCapturedOnceThenReplayed) {
  StagedGraphPolicy policy;
  const StagedCallKey call = keyOf(1000);
  EXPECT_EQ(policy.decide(call).action, Action::Eager) << "the first time: it may never come back";
  const StagedGraphPolicy::Decision capture = policy.decide(call);
  ASSERT_EQ(capture.action, Action::Capture);
  for (int i = 0; i < 5; ++i) {
    const StagedGraphPolicy::Decision replay = policy.decide(call);
    EXPECT_EQ(replay.action, Action::Replay);
    EXPECT_EQ(replay.slot, capture.slot);
  }
}

TEST(StagedGraphPolicy, EveryFieldOfTheKeyMakesADifferentCall) {
  const StagedCallKey base = keyOf(1000);
  std::vector<StagedCallKey> others(7, base);
  others[0].collective = Collective::AllGather;
  others[1].count = 1001;
  others[2].type = DataType::BF16;
  others[3].op = ReduceOp::Max;
  others[4].root = 1;
  others[5].sends[0] = reinterpret_cast<const void*>(0x2000);
  others[6].recvs.push_back(nullptr);  // another local rank's buffers
  for (const StagedCallKey& other : others) {
    EXPECT_FALSE(other == base);
    StagedGraphPolicy policy;
    policy.decide(base);
    ASSERT_EQ(policy.decide(base).action, Action::Capture);
    EXPECT_EQ(policy.decide(other).action, Action::Eager) << "not the captured call's graph";
  }
}

TEST(StagedGraphPolicy, CallsAlternatingBetweenShapesEachGetTheirGraph) {
  StagedGraphPolicy policy;
  const StagedCallKey a = keyOf(1000);
  const StagedCallKey b = keyOf(2000, 0x9000);
  EXPECT_EQ(policy.decide(a).action, Action::Eager);
  EXPECT_EQ(policy.decide(b).action, Action::Eager);
  const StagedGraphPolicy::Decision captureA = policy.decide(a);
  const StagedGraphPolicy::Decision captureB = policy.decide(b);
  ASSERT_EQ(captureA.action, Action::Capture);
  ASSERT_EQ(captureB.action, Action::Capture);
  EXPECT_NE(captureA.slot, captureB.slot);
  EXPECT_EQ(policy.decide(a).slot, captureA.slot);
  EXPECT_EQ(policy.decide(b).slot, captureB.slot);
}

TEST(StagedGraphPolicy, ACallLongGoneRunsEagerlyAgain) {
  StagedGraphPolicy policy;
  const StagedCallKey once = keyOf(7);
  EXPECT_EQ(policy.decide(once).action, Action::Eager);
  for (std::size_t i = 0; i < StagedGraphPolicy::kRecentCalls; ++i) {
    EXPECT_EQ(policy.decide(keyOf(100 + i)).action, Action::Eager);
  }
  EXPECT_EQ(policy.decide(once).action, Action::Eager) << "forgotten after kRecentCalls other calls";
  EXPECT_EQ(policy.decide(once).action, Action::Capture);
}

TEST(StagedGraphPolicy, TheLeastRecentlyUsedGraphMakesRoom) {
  StagedGraphPolicy policy;
  constexpr std::size_t kCalls = StagedGraphPolicy::kSlots + 1;
  std::set<std::size_t> slots;
  for (std::size_t i = 0; i < StagedGraphPolicy::kSlots; ++i) {
    policy.decide(keyOf(i));
    const StagedGraphPolicy::Decision capture = policy.decide(keyOf(i));
    ASSERT_EQ(capture.action, Action::Capture) << i;
    slots.insert(capture.slot);
  }
  EXPECT_EQ(slots.size(), StagedGraphPolicy::kSlots) << "every slot used once before any is reused";
  // Every graph replayed, call 2's first: its graph is then the least recently used.
  std::size_t slotOfCall2 = 0;
  for (std::size_t k = 0; k < StagedGraphPolicy::kSlots; ++k) {
    const std::size_t i = (k + 2) % StagedGraphPolicy::kSlots;
    const StagedGraphPolicy::Decision replay = policy.decide(keyOf(i));
    ASSERT_EQ(replay.action, Action::Replay) << i;
    if (i == 2) slotOfCall2 = replay.slot;
  }
  EXPECT_EQ(policy.decide(keyOf(kCalls)).action, Action::Eager);
  const StagedGraphPolicy::Decision capture = policy.decide(keyOf(kCalls));
  ASSERT_EQ(capture.action, Action::Capture);
  EXPECT_EQ(capture.slot, slotOfCall2);
  for (std::size_t i = 0; i < StagedGraphPolicy::kSlots; ++i) {
    EXPECT_EQ(policy.decide(keyOf(i)).action, i == 2 ? Action::Eager : Action::Replay) << i;
  }
}

TEST(StagedGraphPolicy, AFailedCaptureLeavesItsSlotEmpty) {
  StagedGraphPolicy policy;
  const StagedCallKey call = keyOf(1000);
  policy.decide(call);
  const StagedGraphPolicy::Decision capture = policy.decide(call);
  ASSERT_EQ(capture.action, Action::Capture);
  policy.forget(capture.slot);
  EXPECT_EQ(policy.decide(call).action, Action::Eager) << "no graph to replay";
  EXPECT_EQ(policy.decide(call).action, Action::Capture);
}

}  // namespace
}  // namespace peerlink::coll
