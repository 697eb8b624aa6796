// The ways between a communicator's ranks (coll/rank_transport.hpp): each GPU pair's way carried to the ranks on
// it, ranks sharing a GPU, relays through the rank on the relay GPU, and the pairs PEERLINK_COLL_HOST_STAGED forces
// through host memory -- with what each pair's reason says, and bad settings refused.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/plan_staged.hpp"
#include "coll/rank_transport.hpp"
#include "peerlink/error.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

using peerlink::testing::loadTopologyFixture;

Params with(const std::map<std::string, std::string>& settings = {}) {
  Params params;
  for (const auto& [name, value] : settings) params.set(name, value);
  return params;
}

// "D" direct, "R" relay, "S" host-staged per ordered pair of ranks, rows by source, "." on the diagonal.
std::string ways(const RankLinks& links) {
  std::string text;
  for (int s = 0; s < links.nranks; ++s) {
    for (int d = 0; d < links.nranks; ++d) {
      const PairWay way = links.way(s, d);
      text += s == d ? '.' : way == PairWay::Direct ? 'D' : way == PairWay::Relay ? 'R' : 'S';
    }
    text += s + 1 < links.nranks ? "/" : "";
  }
  return text;
}

RankTransport choose(const std::string& fixture, const std::vector<int>& devices, const Params& params = with(),
                     const PeerVerdicts* verdicts = nullptr) {
  return chooseRankTransport(loadTopologyFixture(fixture), devices, params, verdicts);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RankTransport, ForcedPairsParse) {
  EXPECT_TRUE(forcedHostStagedPairs("", 4).empty());
  EXPECT_EQ(forcedHostStagedPairs("all", 3), (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(forcedHostStagedPairs("0-2,3-1", 4), (std::vector<std::pair<int, int>>{{0, 2}, {3, 1}}));
  for (const char* bad : {"0-0", "0-4", "x", "0-", "-1", "0-1,", "1-2-3", " 0-1"}) {
    try {
      forcedHostStagedPairs(bad, 4);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage) << bad;
      EXPECT_TRUE(contains(error.what(), "PEERLINK_COLL_HOST_STAGED")) << error.what();
    }
  }
}

TEST(RankTransport, NvSwitchIsDirectUnlessForced) {
  const RankTransport direct = choose("h200x4_vm", {0, 1, 2, 3});
  EXPECT_EQ(ways(direct.links), ".DDD/D.DD/DD.D/DDD.");
  EXPECT_FALSE(needsStagedPlans(direct.links));
  EXPECT_TRUE(direct.reasons.empty());
  const RankTransport forced = choose("h200x4_vm", {0, 1, 2, 3}, with({{"PEERLINK_COLL_HOST_STAGED", "0-2"}}));
  EXPECT_EQ(ways(forced.links), ".DSD/D.DD/SD.D/DDD.");
  ASSERT_EQ(forced.reasons.size(), 2u);
  EXPECT_EQ(forced.reasons[0], "rank 0 (GPU 0) -> rank 2 (GPU 2): host-staged: forced by PEERLINK_COLL_HOST_STAGED");
}

TEST(RankTransport, RanksOnOneGpuShareItsMemory) {
  EXPECT_EQ(ways(choose("h200x4_vm", {0, 0, 1, 1}).links), ".DDD/D.DD/DD.D/DDD.");
  const RankTransport one = choose("h200x4_vm", {3, 3, 3});
  EXPECT_EQ(ways(one.links), ".DD/D.D/DD.");
  EXPECT_EQ(one.verdicts, "one GPU: every rank shares its memory");
  EXPECT_EQ(ways(choose("h200x4_vm", {3, 3, 3}, with({{"PEERLINK_COLL_HOST_STAGED", "all"}})).links), ".SS/S.S/SS.");
}

TEST(RankTransport, GpusWithoutP2pAreHostStaged) {
  const RankTransport consumer = choose("rtx4090x2", {0, 1, 1});
  EXPECT_EQ(ways(consumer.links), ".SS/S.D/SD.");
  EXPECT_TRUE(needsStagedPlans(consumer.links));
  ASSERT_EQ(consumer.reasons.size(), 4u);
  EXPECT_TRUE(contains(consumer.reasons[0], "rank 0 (GPU 0) -> rank 1 (GPU 1): host-staged: ")) << consumer.reasons[0];
  // The GPU pair's own reason, as pair_transport gives it.
  EXPECT_TRUE(contains(consumer.reasons[0], "P2P")) << consumer.reasons[0];
}

TEST(RankTransport, RelaysGoThroughTheRankOnTheRelayGpu) {
  std::vector<PairVerdict> pairs;
  for (int s = 0; s < 4; ++s) {
    for (int d = 0; d < 4; ++d) {
      if (s != d) pairs.push_back({s, d, s == 0 && d == 2 ? Verdict::Broken : Verdict::Ok, {}});
    }
  }
  const PeerVerdicts verdicts{pairs, "synthetic verdicts", ""};
  // Ranks 0, 1, 2 on GPUs 0, 2, 1: GPU 0 -> GPU 2 (rank 0 -> rank 1) relays through GPU 1, rank 2.
  const RankTransport relayed = choose("h200x4_vm", {0, 2, 1}, with(), &verdicts);
  EXPECT_EQ(ways(relayed.links), ".RD/D.D/DD.");
  EXPECT_EQ(relayed.links.relay(0, 1), 2);
  ASSERT_EQ(relayed.reasons.size(), 1u);
  EXPECT_TRUE(contains(relayed.reasons[0],
                       "rank 0 (GPU 0) -> rank 1 (GPU 2): relay through rank 2: no usable P2P: "
                       "the doctor found GPU 0 -> GPU 2 BROKEN"))
      << relayed.reasons[0];
  EXPECT_TRUE(contains(relayed.verdicts, "1 BROKEN")) << relayed.verdicts;
  // The relay's first hop forced through host memory: the relayed pair cannot relay and is host-staged too.
  const RankTransport staged = choose("h200x4_vm", {0, 2, 1}, with({{"PEERLINK_COLL_HOST_STAGED", "0-2"}}), &verdicts);
  EXPECT_EQ(ways(staged.links), ".SS/D.D/SD.");
  EXPECT_TRUE(contains(staged.reasons[0], "its relay, rank 2, is reached through host memory")) << staged.reasons[0];
}

TEST(RankTransport, AcrossProcessesEveryPairMeetsInTheHostStages) {
  // Two processes of two ranks each; no pair forced: the kernels run, nothing is staged.
  const std::vector<std::int64_t> processes = {10, 10, 20, 20};
  const RankTransport direct =
      chooseRankTransport(loadTopologyFixture("h200x4_vm"), {0, 1, 2, 3}, with(), nullptr, processes);
  EXPECT_FALSE(needsStagedPlans(direct.links));
  // One pair forced: the pairs of one process keep peer access, every pair across processes is host-staged.
  const RankTransport staged = chooseRankTransport(loadTopologyFixture("h200x4_vm"), {0, 1, 2, 3},
                                                   with({{"PEERLINK_COLL_HOST_STAGED", "0-1"}}), nullptr, processes);
  EXPECT_EQ(ways(staged.links), ".SSS/S.SS/SS.D/SSD.");
  EXPECT_TRUE(contains(staged.reasons[1], "rank 0 (GPU 0) -> rank 2 (GPU 2): host-staged: in another process"))
      << staged.reasons[1];
  // A broken pair across processes never relays: host-staged.
  Topology machine = loadTopologyFixture("h200x4_vm");
  machine.pair(0, 2).canAccessPeer = false;
  machine.pair(2, 0).canAccessPeer = false;
  const RankTransport noPeer = chooseRankTransport(machine, {0, 1, 2}, with(), nullptr, {1, 2, 3});
  EXPECT_EQ(noPeer.links.way(0, 2), PairWay::HostStaged);
  ASSERT_EQ(noPeer.reasons.size(), 6u);
  EXPECT_TRUE(contains(noPeer.reasons[1], "rank 0 (GPU 0) -> rank 2 (GPU 2): host-staged: no usable P2P"))
      << noPeer.reasons[1];
  EXPECT_TRUE(contains(noPeer.reasons[0], "rank 0 (GPU 0) -> rank 1 (GPU 1): host-staged: in another process"))
      << noPeer.reasons[0];
}

TEST(RankTransport, PairsHiddenFromEveryProcessAreTrustedAsDirect) {
  // Each process sees its own GPU only (CUDA_VISIBLE_DEVICES): the world's topology has no pairs at all.
  Topology hidden = loadTopologyFixture("h200x4_vm");
  hidden.pairs.clear();
  EXPECT_FALSE(needsStagedPlans(chooseRankTransport(hidden, {0, 1, 2}, with(), nullptr, {1, 2, 3}).links));
  // One direction known without peer access: the hidden one follows it.
  Topology half = loadTopologyFixture("h200x4_vm");
  half.pairs.erase(std::remove_if(half.pairs.begin(), half.pairs.end(),
                                  [](const GpuPair& pair) { return pair.src == 1 && pair.dst == 0; }),
                   half.pairs.end());
  half.pair(0, 1).canAccessPeer = false;
  const RankTransport oneWay = chooseRankTransport(half, {0, 1}, with(), nullptr, {1, 2});
  EXPECT_EQ(oneWay.links.way(1, 0), PairWay::HostStaged);
}

TEST(RankTransport, BadSettingsAndDevicesAreRefused) {
  EXPECT_THROW(choose("h200x4_vm", {0, 1}, with({{"PEERLINK_COLL_HOST_STAGED", "0-2"}})), Error);
  EXPECT_THROW(choose("h200x4_vm", {0, 7}), Error);
}

}  // namespace
}  // namespace peerlink::coll
