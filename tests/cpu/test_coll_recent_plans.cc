// The staged plans kept for a communicator's latest call shapes (coll/recent_plans.hpp): a repeated shape reuses its
// plans, the shape asked for longest ago is dropped first, shapes that differ in any field are told apart, and the
// kept plans are the ones stagedSegments builds.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/recent_plans.hpp"

namespace peerlink::coll {
namespace {

TEST(RecentValues, ARepeatedKeyReturnsTheValueMadeOnce) {
  RecentValues<int, std::string> recent(2);
  int made = 0;
  const auto make = [&] {
    ++made;
    return std::string("value ") + std::to_string(made);
  };
  const auto first = recent.get(7, make);
  const auto again = recent.get(7, make);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(first.get(), again.get());
  EXPECT_EQ(*again, "value 1");
}

TEST(RecentValues, TheKeyAskedForLongestAgoIsDroppedFirst) {
  RecentValues<int, int> recent(2);
  int made = 0;
  const auto make = [&] { return ++made; };
  recent.get(1, make);
  recent.get(2, make);
  recent.get(1, make);  // 1 is now the most recent: 2 goes when 3 comes
  recent.get(3, make);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(recent.size(), 2u);
  EXPECT_EQ(*recent.get(1, make), 1);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(*recent.get(2, make), 4);  // made again
  EXPECT_EQ(made, 4);
}

TEST(RecentValues, AnEvictedValueLivesWhileHeld) {
  RecentValues<int, std::vector<int>> recent(1);
  const auto held = recent.get(1, [] { return std::vector<int>(1000, 5); });
  recent.get(2, [] { return std::vector<int>{}; });
  ASSERT_EQ(held->size(), 1000u);
  EXPECT_EQ(held->back(), 5);
}

TEST(RecentValues, CapacityZeroKeepsNothing) {
  RecentValues<int, int> recent(0);
  int made = 0;
  recent.get(1, [&] { return ++made; });
  recent.get(1, [&] { return ++made; });
  EXPECT_EQ(made, 2);
  EXPECT_EQ(recent.size(), 0u);
}

TEST(RecentPlans, ShapesThatDifferInAnyFieldAreToldApart) {
  const CallShapeKey base{Collective::AllReduce, 1000, 0, DataType::F32};
  EXPECT_EQ(base, base);
  CallShapeKey other = base;
  other.collective = Collective::ReduceScatter;
  EXPECT_FALSE(other == base);
  other = base;
  other.count = 1001;
  EXPECT_FALSE(other == base);
  other = base;
  other.root = 1;
  EXPECT_FALSE(other == base);
  other = base;
  other.type = DataType::BF16;
  EXPECT_FALSE(other == base);

  const GroupShapeKey group{{{0, 1, 10}, {1, 0, 10}}, DataType::F32};
  EXPECT_EQ(group, group);
  GroupShapeKey changed = group;
  changed.pairs[1].count = 11;
  EXPECT_FALSE(changed == group);
  changed = group;
  changed.pairs[0].to = 2;
  EXPECT_FALSE(changed == group);
  changed = group;
  changed.pairs[1].from = 2;
  EXPECT_FALSE(changed == group);
  changed = group;
  changed.pairs.pop_back();
  EXPECT_FALSE(changed == group);
  changed = group;
  changed.type = DataType::U8;
  EXPECT_FALSE(changed == group);
}

TEST(RecentPlans, TheKeptSegmentsAreTheBuiltOnes) {
  const RankLinks links = RankLinks::uniform(4, PairWay::HostStaged);
  RecentPlans recent;
  const CallShapeKey key{Collective::AllReduce, std::size_t{20} << 20, 0, DataType::F32};
  const auto build = [&] {
    return stagedSegments(key.collective, 4, key.count, key.root, key.type, links, std::size_t{4} << 20,
                          std::size_t{32} << 20);
  };
  const auto kept = recent.calls.get(key, build);
  const auto again = recent.calls.get(key, [&]() -> std::vector<StagedSegment> {
    ADD_FAILURE() << "a kept shape was built again";
    return {};
  });
  EXPECT_EQ(kept.get(), again.get());
  const std::vector<StagedSegment> fresh = build();
  ASSERT_EQ(kept->size(), fresh.size());
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    EXPECT_EQ((*kept)[i].segment.start, fresh[i].segment.start);
    EXPECT_EQ((*kept)[i].segment.count, fresh[i].segment.count);
    EXPECT_EQ((*kept)[i].plan.steps.size(), fresh[i].plan.steps.size());
  }
}

}  // namespace
}  // namespace peerlink::coll
