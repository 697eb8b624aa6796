// Which staged calls replay a graph, capture one or run eagerly (staged_graphs.hpp).
#include "coll/staged_graphs.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

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

// Fills every slot with calls 0..kSlots-1, each captured on its second call.
void fillEverySlot(StagedGraphPolicy& policy, std::set<std::size_t>* slots) {
  for (std::size_t i = 0; i < StagedGraphPolicy::kSlots; ++i) {
    policy.decide(keyOf(i));
    const StagedGraphPolicy::Decision capture = policy.decide(keyOf(i));
    ASSERT_EQ(capture.action, Action::Capture) << i;
    slots->insert(capture.slot);
  }
}

TEST(StagedGraphPolicy, AGraphLongUnusedMakesRoomTheLeastRecentlyUsedFirst) {
  StagedGraphPolicy policy;
  constexpr std::size_t kNewCall = StagedGraphPolicy::kSlots + 1;
  std::set<std::size_t> slots;
  fillEverySlot(policy, &slots);
  EXPECT_EQ(slots.size(), StagedGraphPolicy::kSlots) << "every slot used once before any is reused";
  EXPECT_EQ(policy.decide(keyOf(kNewCall)).action, Action::Eager);
  EXPECT_EQ(policy.decide(keyOf(kNewCall)).action, Action::Eager) << "every graph in use: none gives way";
  // Every graph replayed, then every one but call 2's until call 2's has not been used for kColdAfter calls.
  std::size_t slotOfCall2 = StagedGraphPolicy::kSlots;
  for (std::size_t i = 0; i < StagedGraphPolicy::kSlots; ++i) {
    const StagedGraphPolicy::Decision replay = policy.decide(keyOf(i));
    ASSERT_EQ(replay.action, Action::Replay) << i;
    if (i == 2) slotOfCall2 = replay.slot;
  }
  for (std::uint64_t since = StagedGraphPolicy::kSlots - 3; since <= StagedGraphPolicy::kColdAfter;) {
    for (std::size_t i = 0; i < StagedGraphPolicy::kSlots; ++i) {
      if (i == 2) continue;
      ASSERT_EQ(policy.decide(keyOf(i)).action, Action::Replay) << i;
      ++since;
    }
  }
  const StagedGraphPolicy::Decision capture = policy.decide(keyOf(kNewCall));
  ASSERT_EQ(capture.action, Action::Capture) << "the call kept among the recent ones takes the cold slot";
  EXPECT_EQ(capture.slot, slotOfCall2);
  for (std::size_t i = 0; i < StagedGraphPolicy::kSlots; ++i) {
    EXPECT_EQ(policy.decide(keyOf(i)).action, i == 2 ? Action::Eager : Action::Replay) << i;
  }
}

TEST(StagedGraphPolicy, CallsCyclingOverMoreBuffersThanSlotsKeepTheGraphsTheyHave) {
  StagedGraphPolicy policy;
  constexpr std::size_t kCycle = StagedGraphPolicy::kSlots + 4;  // a model's layers, each its own buffers
  std::size_t captures = 0;
  std::size_t replays = 0;
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = 0; i < kCycle; ++i) {
      const Action action = policy.decide(keyOf(i, 0x1000 * (i + 1))).action;
      captures += action == Action::Capture ? 1 : 0;
      replays += action == Action::Replay && round == 19 ? 1 : 0;
    }
  }
  EXPECT_EQ(captures, StagedGraphPolicy::kSlots) << "no graph captured twice";
  EXPECT_EQ(replays, StagedGraphPolicy::kSlots) << "the last round replays every graph kept";
}

// A training step's gradient buckets, each its own buffers, called in the same order every step: from the third step
// on every bucket replays its graph, up to as many buckets as there are slots (11: DDP's 25 MiB buckets of a 77
// M-parameter model).
TEST(StagedGraphPolicy, EveryBucketOfATrainingStepReplaysFromTheThirdStep) {
  for (const std::size_t buckets : {std::size_t{11}, StagedGraphPolicy::kSlots}) {
    SCOPED_TRACE(std::to_string(buckets) + " buckets a step");
    StagedGraphPolicy policy;
    for (int step = 0; step < 5; ++step) {
      for (std::size_t b = 0; b < buckets; ++b) {
        const Action action = policy.decide(keyOf(6553600, 0x10000000 * (b + 1))).action;
        const Action expected = step == 0 ? Action::Eager : step == 1 ? Action::Capture : Action::Replay;
        ASSERT_EQ(action, expected) << "step " << step << ", bucket " << b;
      }
    }
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
