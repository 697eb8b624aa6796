// The communicator's world from the ranks' cards: the cards' wire form, the checks between ranks, and the
// fabric facts every rank derives alike (src/coll/world.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/arena_address.hpp"
#include "coll/world.hpp"
#include "peerlink/collective_choice.hpp"
#include "peerlink/error.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

using testing::loadTopologyFixture;

// The cards of one process driving `devices` of a fixture, ranks in that order.
std::vector<RankCard> cardsOf(const Topology& topology, const std::vector<int>& devices,
                              const Params& params = Params()) {
  std::vector<RankCard> cards;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    cards.push_back(makeRankCard(static_cast<int>(r), static_cast<int>(devices.size()), topology, devices[r], params,
                                 42, "node-a", 1000));
  }
  return cards;
}

// The same ranks, each in its own process (pid 1000 + rank).
std::vector<RankCard> oneProcessEach(std::vector<RankCard> cards) {
  for (RankCard& card : cards) card.pid = 1000 + card.rank;
  return cards;
}

std::string errorOf(const std::vector<RankCard>& cards, bool shareGpus = false) {
  try {
    makeWorld(cards, {0}, shareGpus);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(RankCard, RoundTripsEveryField) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  Params params;
  params.set("PEERLINK_PROTO", "LL128");
  const RankCard card = makeRankCard(2, 4, topology, 2, params, 0x1234567890abcdefull, "node-a", 4242);
  const std::vector<std::uint8_t> bytes = encodeRankCard(card);
  ASSERT_EQ(bytes.size(), kRankCardBytes);
  const RankCard back = decodeRankCard(bytes.data(), bytes.size());
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.nranks, 4);
  EXPECT_EQ(back.hostId, 0x1234567890abcdefull);
  EXPECT_EQ(back.host, "node-a");
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.version, card.version);
  EXPECT_EQ(back.busId, topology.gpus[2].pciBusId);
  EXPECT_EQ(back.uuid, topology.gpus[2].uuid);
  EXPECT_EQ(back.smCount, topology.gpus[2].smCount);
  EXPECT_EQ(back.ccMajor, 9);
  EXPECT_EQ(back.settings, card.settings);
  ASSERT_EQ(back.links.size(), 3u);
  for (std::size_t i = 0; i < back.links.size(); ++i) {
    EXPECT_EQ(back.links[i].busId, card.links[i].busId);
    EXPECT_EQ(back.links[i].path, PathClass::NVL);
    EXPECT_EQ(back.links[i].nvlinks, card.links[i].nvlinks);
    EXPECT_TRUE(back.links[i].canAccessPeer);
  }
  bool protoFound = false;
  for (const auto& [name, value] : back.settings)
    protoFound = protoFound || (name == "PEERLINK_PROTO" && value == "LL128");
  EXPECT_TRUE(protoFound);
}

TEST(RankCard, GarbageTruncationAndLiesAreInputErrors) {
  const RankCard card = cardsOf(loadTopologyFixture("h200x4_vm"), {0, 1})[1];
  std::vector<std::uint8_t> bytes = encodeRankCard(card);
  EXPECT_THROW(decodeRankCard(bytes.data(), 3), Error);
  EXPECT_THROW(decodeRankCard(nullptr, 100), Error);
  std::vector<std::uint8_t> zeros(kRankCardBytes, 0);
  EXPECT_THROW(decodeRankCard(zeros.data(), zeros.size()), Error);
  // Every truncation of the meaningful part fails cleanly (the padding may go).
  const std::size_t meaningful = encodeRankCard(card).size();
  for (std::size_t cut = 0; cut < 200 && cut < meaningful; ++cut) {
    try {
      decodeRankCard(bytes.data(), cut);
      ADD_FAILURE() << "a card cut to " << cut << " bytes decoded";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidInput);
    }
  }
  // A rank outside its world.
  RankCard liar = card;
  liar.rank = 5;
  liar.nranks = 2;
  bytes = encodeRankCard(liar);
  try {
    decodeRankCard(bytes.data(), bytes.size());
    FAIL() << "rank 5 of 2 decoded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("rank"), std::string::npos) << error.what();
  }
  // A control character in a name.
  RankCard control = card;
  control.host = "node\x1b[31m";
  bytes = encodeRankCard(control);
  EXPECT_THROW(decodeRankCard(bytes.data(), bytes.size()), Error);
}

// The card travels in a fixed-size slot: what follows it must be the encoder's zeros, so no bytes pass unread.
TEST(RankCard, ABytePastTheCardIsAnInputError) {
  const RankCard card = cardsOf(loadTopologyFixture("h200x4_vm"), {0, 1})[1];
  std::vector<std::uint8_t> bytes = encodeRankCard(card);
  bytes[kRankCardBytes - 1] = 1;
  try {
    decodeRankCard(bytes.data(), bytes.size());
    FAIL() << "a card with a byte in its padding decoded";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidInput);
    EXPECT_NE(std::string(error.what()).find("padding"), std::string::npos) << error.what();
  }
}

TEST(ArenaAddress, RoundTripsAndRefusesWhatIsNotOne) {
  const std::vector<std::uint8_t> bytes = encodeArenaAddress({ShareKind::Cumem, "/run/user/1000/peerlink-1000/a.sock"});
  ASSERT_EQ(bytes.size(), kArenaAddressBytes);
  const ArenaAddress back = decodeArenaAddress(bytes.data(), bytes.size());
  EXPECT_EQ(back.kind, ShareKind::Cumem);
  EXPECT_EQ(back.socketPath, "/run/user/1000/peerlink-1000/a.sock");
  EXPECT_EQ(decodeArenaAddress(encodeArenaAddress({ShareKind::Ipc, "/tmp/x"}).data(), kArenaAddressBytes).kind,
            ShareKind::Ipc);
  const auto refused = [](std::vector<std::uint8_t> slot, const char* needle) {
    try {
      decodeArenaAddress(slot.data(), slot.size());
      ADD_FAILURE() << "decoded where '" << needle << "' was due";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidInput);
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  std::vector<std::uint8_t> padded = bytes;
  padded[kArenaAddressBytes - 1] = 7;
  refused(padded, "padding");
  refused(encodeArenaAddress({ShareKind::Cumem, "relative.sock"}), "not absolute");
  refused(std::vector<std::uint8_t>(kArenaAddressBytes, 0), "magic");
  std::vector<std::uint8_t> kind = bytes;
  kind[4] = 2;
  refused(kind, "kind");
  refused(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 10), "socket path");
}

TEST(RankCard, TooManyLinksDoNotFit) {
  RankCard card = cardsOf(loadTopologyFixture("h200x4_vm"), {0})[0];
  card.links.assign(2000, CardLink{"0000:00:06.0", PathClass::NVL, 18, true});
  EXPECT_THROW(encodeRankCard(card), Error);
}

TEST(World, OneProcessOnAnNvlinkMesh) {
  const World world = makeWorld(cardsOf(loadTopologyFixture("h200x4_vm"), {0, 1, 2, 3}), {0, 1, 2, 3}, false);
  EXPECT_EQ(world.nranks, 4);
  EXPECT_FALSE(world.spansProcesses);
  const CollectiveFabric fabric = fabricOf(world.topology, world.gpu);
  EXPECT_TRUE(fabric.nvlinkMesh) << fabric.detail;
  EXPECT_TRUE(fabric.ll128Capable);
  EXPECT_FALSE(world.gpusShared);
  EXPECT_EQ(world.gpu, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(world.topology.pairs.size(), 12u);
  EXPECT_TRUE(world.isLocal(3));
  EXPECT_TRUE(world.sameProcess(0, 3));
}

TEST(World, OneProcessPerRank) {
  const World world =
      makeWorld(oneProcessEach(cardsOf(loadTopologyFixture("h100x8_nvswitch"), {0, 1, 2, 3, 4, 5, 6, 7})), {5}, false);
  EXPECT_TRUE(world.spansProcesses);
  EXPECT_TRUE(fabricOf(world.topology, world.gpu).nvlinkMesh);
  EXPECT_TRUE(world.isLocal(5));
  EXPECT_FALSE(world.isLocal(4));
  EXPECT_FALSE(world.sameProcess(4, 5));
  EXPECT_TRUE(world.sameHost(4, 5));
  EXPECT_NE(world.describe(5).find("pid 1005"), std::string::npos) << world.describe(5);
}

TEST(World, PcieIsNoMeshAndNamesThePair) {
  const World world = makeWorld(cardsOf(loadTopologyFixture("dual_socket_pcie"), {0, 1}), {0}, false);
  const CollectiveFabric fabric = fabricOf(world.topology, world.gpu);
  EXPECT_FALSE(fabric.nvlinkMesh);
  EXPECT_FALSE(fabric.ll128Capable);
  EXPECT_NE(fabric.detail.find("GPU 0 -> 1"), std::string::npos) << fabric.detail;
}

// Across processes too the pair is kept: the communicator carries it through the host stages (rank_transport.hpp).
TEST(World, APairWithoutPeerAccessAcrossProcessesIsKept) {
  std::vector<RankCard> cards = oneProcessEach(cardsOf(loadTopologyFixture("h200x4_vm"), {0, 1}));
  cards[1].links[0].canAccessPeer = false;
  const World world = makeWorld(cards, {0}, false);
  EXPECT_TRUE(world.spansProcesses);
  EXPECT_FALSE(world.topology.pair(1, 0).canAccessPeer);
}

// One process serves the pair through host memory (rank_transport.hpp): the world keeps it, without peer access.
TEST(World, APairWithoutPeerAccessInOneProcessIsKept) {
  std::vector<RankCard> cards = cardsOf(loadTopologyFixture("h200x4_vm"), {0, 1});
  cards[1].links[0].canAccessPeer = false;
  const World world = makeWorld(cards, {0, 1}, false);
  EXPECT_FALSE(world.spansProcesses);
  EXPECT_FALSE(world.topology.pair(1, 0).canAccessPeer);
  EXPECT_TRUE(world.topology.pair(0, 1).canAccessPeer);
}

TEST(World, AGpuHiddenFromOneProcessIsNoMesh) {
  std::vector<RankCard> cards = oneProcessEach(cardsOf(loadTopologyFixture("h200x4_vm"), {0, 1, 2, 3}));
  cards[2].links.clear();  // CUDA_VISIBLE_DEVICES=2 in rank 2's process
  const World world = makeWorld(cards, {0}, false);
  const CollectiveFabric fabric = fabricOf(world.topology, world.gpu);
  EXPECT_FALSE(fabric.nvlinkMesh);
  EXPECT_NE(fabric.detail.find("GPU 2 -> 0 unknown"), std::string::npos) << fabric.detail;
}

TEST(World, RanksThatDisagreeAreNamedWithTheDifference) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  std::vector<RankCard> cards = oneProcessEach(cardsOf(topology, {0, 1, 2}));
  // Another world size.
  std::vector<RankCard> sizes = cards;
  sizes[1].nranks = 4;
  EXPECT_NE(errorOf(sizes).find("same world size"), std::string::npos) << errorOf(sizes);
  // Another build.
  std::vector<RankCard> builds = cards;
  builds[2].version = "0.0.1+abc";
  EXPECT_NE(errorOf(builds).find("rank 2"), std::string::npos) << errorOf(builds);
  EXPECT_NE(errorOf(builds).find("0.0.1+abc"), std::string::npos) << errorOf(builds);
  // Another setting.
  Params ll;
  ll.set("PEERLINK_PROTO", "LL");
  std::vector<RankCard> settings = cards;
  settings[1].settings = settingsThatMustAgree(ll);
  const std::string message = errorOf(settings);
  EXPECT_NE(message.find("PEERLINK_PROTO=LL there, AUTO here"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
  // Another machine.
  std::vector<RankCard> hosts = cards;
  hosts[2].hostId = 7;
  hosts[2].host = "node-b";
  EXPECT_NE(errorOf(hosts).find("different machines"), std::string::npos) << errorOf(hosts);
  // A card out of its place.
  std::vector<RankCard> swapped = cards;
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(errorOf(swapped).find("place 0"), std::string::npos) << errorOf(swapped);
}

TEST(World, TwoRanksOnOneGpuOnlyWhenShared) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  std::vector<RankCard> cards = oneProcessEach(cardsOf(topology, {0, 1, 1}));
  const std::string message = errorOf(cards);
  EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 2"), std::string::npos) << message;
  EXPECT_NE(message.find("same GPU"), std::string::npos) << message;
  const World world = makeWorld(cards, {0}, true);
  EXPECT_TRUE(world.gpusShared);
  EXPECT_EQ(world.gpu, (std::vector<int>{0, 1, 1}));
  std::vector<int> smCounts;
  for (const RankCard& card : world.cards) smCounts.push_back(card.smCount);
  EXPECT_EQ(collGridCap(world.gpu, smCounts, 0), 66);  // two ranks split GPU 1's 132 SMs
  EXPECT_TRUE(fabricOf(world.topology, world.gpu).nvlinkMesh);
}

TEST(World, SettingsThatMustAgreeAreCanonical) {
  Params lower = Params::fromMap({{"PEERLINK_PROTO", "ll128"}});
  Params upper = Params::fromMap({{"PEERLINK_PROTO", "LL128"}});
  EXPECT_EQ(settingsThatMustAgree(lower), settingsThatMustAgree(upper));
  // Settings that only affect this process (logging, the deadline) are not among them.
  for (const auto& [name, value] : settingsThatMustAgree(Params())) {
    EXPECT_NE(name, "PEERLINK_DEBUG");
    EXPECT_NE(name, "PEERLINK_TIMEOUT_MS");
  }
}

}  // namespace
}  // namespace peerlink::coll
