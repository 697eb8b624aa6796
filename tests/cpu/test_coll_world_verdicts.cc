// The doctor's verdicts across processes (coll/peer_verdicts.hpp): each process's reading of its verdict cache for
// the world's GPUs, merged so that every rank chooses the same ways -- the worst verdict of each pair, a pair one
// process knows BROKEN host-staged for the whole world -- and PEERLINK_VERIFY=off reading nothing.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "coll/peer_verdicts.hpp"
#include "coll/plan_staged.hpp"
#include "coll/rank_transport.hpp"
#include "doctor/verdict_cache.hpp"
#include "peerlink/error.hpp"
#include "scratch_dir.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

using peerlink::testing::loadTopologyFixture;

PeerVerdicts verdictsOf(std::vector<PairVerdict> pairs) {
  PeerVerdicts verdicts;
  verdicts.pairs = std::move(pairs);
  return verdicts;
}

std::vector<std::uint8_t> joined(const std::vector<std::vector<std::uint8_t>>& readings) {
  std::vector<std::uint8_t> all;
  for (const auto& reading : readings) all.insert(all.end(), reading.begin(), reading.end());
  return all;
}

TEST(WorldVerdicts, EachPairGetsTheWorstVerdictAnyProcessRead) {
  const std::vector<std::uint8_t> none = encodeVerdictReading({}, 3);
  const std::vector<std::uint8_t> okay = encodeVerdictReading(verdictsOf({{0, 1, Verdict::Ok, {}}}), 3);
  const std::vector<std::uint8_t> bad = encodeVerdictReading(
      verdictsOf({{0, 1, Verdict::Broken, {}}, {1, 0, Verdict::Degraded, {}}, {2, 1, Verdict::Unsupported, {}}}), 3);
  ASSERT_EQ(none.size(), 9u);
  const PeerVerdicts merged = mergeVerdictReadings(joined({none, okay, bad}), 3, "test", "nothing read");
  ASSERT_EQ(merged.pairs.size(), 3u);
  EXPECT_EQ(merged.source, "test");
  EXPECT_TRUE(merged.absence.empty());
  // In source-major order: 0 -> 1 (OK in one reading, BROKEN in another), 1 -> 0, 2 -> 1.
  const std::vector<std::tuple<int, int, Verdict>> want = {
      {0, 1, Verdict::Broken}, {1, 0, Verdict::Degraded}, {2, 1, Verdict::Unsupported}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::make_tuple(merged.pairs[i].src, merged.pairs[i].dst, merged.pairs[i].verdict), want[i]) << i;
  }
  // Nobody read anything: no pair, and why.
  const PeerVerdicts empty = mergeVerdictReadings(joined({none, none}), 3, "test", "nothing read");
  EXPECT_TRUE(empty.pairs.empty());
  EXPECT_EQ(empty.absence, "nothing read");
  // A reading of another size, or a byte that is no verdict, is refused.
  EXPECT_THROW(mergeVerdictReadings(std::vector<std::uint8_t>(10, 0), 3, "", ""), Error);
  std::vector<std::uint8_t> garbage = okay;
  garbage[5] = 9;
  EXPECT_THROW(mergeVerdictReadings(garbage, 3, "", ""), Error);
}

TEST(WorldVerdicts, APairBrokenInOneProcessesCacheStagesTheWorld) {
  // Two processes of two ranks each on four H200s; process 20's cache knows GPU 2 -> GPU 3 BROKEN, process 10's
  // knows nothing: every rank gets the same merged verdicts, and the world is host-staged between processes.
  const std::vector<std::uint8_t> first = encodeVerdictReading({}, 4);
  const std::vector<std::uint8_t> second = encodeVerdictReading(verdictsOf({{2, 3, Verdict::Broken, {"x"}}}), 4);
  const PeerVerdicts merged = mergeVerdictReadings(joined({first, first, second, second}), 4, "test", "");
  const RankTransport transport =
      chooseRankTransport(loadTopologyFixture("h200x4_vm"), {0, 1, 2, 3}, Params(), &merged, {10, 10, 20, 20});
  EXPECT_TRUE(needsStagedPlans(transport.links));
  EXPECT_EQ(transport.links.way(2, 3), PairWay::HostStaged);
  EXPECT_EQ(transport.links.way(0, 2), PairWay::HostStaged);
  EXPECT_EQ(transport.links.way(0, 1), PairWay::Direct);  // within process 10, nothing known against it
  EXPECT_NE(transport.verdicts.find("1 BROKEN"), std::string::npos) << transport.verdicts;
}

TEST(WorldVerdicts, EveryProcessReadsItsCacheForTheWorldsGpus) {
  const std::string bootId = readBootId();
  if (bootId.empty()) GTEST_SKIP() << "this machine's boot id is unreadable";
  const ScratchDir scratch;
  Topology machine = loadTopologyFixture("h200x4_vm");
  machine.driverVersion = "580.159.04";
  PairDecision decision;
  decision.verdict = PairVerdict{1, 2, Verdict::Broken, {"ce_write_dropped"}};
  const VerdictCache cache(scratch / "cache");
  ASSERT_TRUE(
      cache.store(makeVerdictCacheKey(machine, 1, 2, bootId, readKernelCommandLine(), "quick"), machine, decision));
  // The world's topology as its cards make it: the GPUs, no driver, and only the pairs some process saw (none).
  World world;
  world.nranks = 1;
  world.localRanks = {0};
  world.topology = loadTopologyFixture("h200x4_vm");
  world.topology.pairs.clear();
  LocalExchange exchange;
  Params params;
  params.set("PEERLINK_DOCTOR_CACHE_DIR", scratch / "cache");
  const PeerVerdicts found = gatherWorldVerdicts(world, machine.driverVersion, params, exchange);
  ASSERT_EQ(found.pairs.size(), 1u) << found.absence;
  EXPECT_EQ(found.pairs[0].src, 1);
  EXPECT_EQ(found.pairs[0].dst, 2);
  EXPECT_EQ(found.pairs[0].verdict, Verdict::Broken);
  // Another driver's entries do not apply; PEERLINK_VERIFY=off reads nothing.
  EXPECT_TRUE(gatherWorldVerdicts(world, "590.0", params, exchange).pairs.empty());
  params.set("PEERLINK_VERIFY", "off");
  const PeerVerdicts off = gatherWorldVerdicts(world, machine.driverVersion, params, exchange);
  EXPECT_TRUE(off.pairs.empty());
  EXPECT_EQ(off.absence, "PEERLINK_VERIFY=off");
}

}  // namespace
}  // namespace peerlink::coll
