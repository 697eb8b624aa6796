// The NCCL API where the launcher does not say whether the job spans machines: ncclGetUniqueId's id is peerlink's,
// its root may forward, and the real NCCL is not touched; creation tells the root whether this process can follow a
// forward and follows the rendezvous root's verdict -- peerlink for one host; for several, the real NCCL with the id
// the root asked it for then, once, or the root's refusal where a rank cannot follow (the root itself is tested in
// test_bootstrap_verdict). ncclCommInitRankScalable's ids on either path. Over a fake platform whose creation can end
// in the root's answer, and a fake real NCCL.
#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap/unique_id.hpp"
#include "nccl_fake_platform.hpp"
#include "nccl_fake_real.hpp"

namespace peerlink::nccl::testing {
namespace {

using Names = std::vector<std::string>;
constexpr const char* kTwoHosts = "ranks on 2 hosts: node-a (rank 0), node-b (rank 1)";

bool mayForward(const ncclUniqueId& id) {
  UniqueId peerlinkId;
  std::memcpy(peerlinkId.bytes, id.internal, kUniqueIdBytes);
  return bootstrap::decodeUniqueId(peerlinkId).mayForward;
}

bool sameId(const ncclUniqueId& a, const ncclUniqueId& b) {
  return std::memcmp(a.internal, b.internal, sizeof a.internal) == 0;
}

class NcclRendezvous : public ::testing::Test {
 protected:
  NcclRendezvous() : log_(std::make_shared<EventLog>()), shim_(partsWithReal(log_, &platform_)) {
    FakeReal::made = FakeReal::ncclLikeId();
  }

  std::shared_ptr<EventLog> log_;
  FakePlatform* platform_ = nullptr;
  Shim shim_;  // no launcher's variables (ShimParts' default LaunchEnvironment)
};

TEST_F(NcclRendezvous, WithoutALauncherTheIdMayForwardAndTheRealNcclIsNotAsked) {
  const ncclUniqueId id = newId(shim_);
  EXPECT_TRUE(mayForward(id));
  EXPECT_TRUE(FakeReal::calls.empty());  // no real id, so no real bootstrap root, until a root forwards
}

TEST_F(NcclRendezvous, OneHostIsServedByPeerlink) {
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.commInitRank(&comm, 2, id, 1, nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), Names{"createWorld r1"});
  EXPECT_EQ(platform_->toldRoots, std::vector<ForwardAbility>{ForwardAbility::Able});
  float data[2] = {};
  ASSERT_EQ(shim_.allReduce(data, data, 2, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commDestroy(comm), ncclSuccess);
  EXPECT_TRUE(FakeReal::calls.empty());  // nothing asked, created or called in the real NCCL
}

TEST_F(NcclRendezvous, SeveralHostsSendTheRankToTheRealNcclWithTheRootsIdAndConfig) {
  const ncclUniqueId id = newId(shim_);
  platform_->forwardVerdict = kTwoHosts;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.commName = "default_pg";
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.commInitRank(&comm, 2, id, 1, &config), ncclSuccess);
  ASSERT_EQ(FakeReal::inits.size(), 1u);
  EXPECT_TRUE(sameId(FakeReal::inits[0].id, FakeReal::made));
  EXPECT_EQ(FakeReal::inits[0].nranks, 2);
  EXPECT_EQ(FakeReal::inits[0].rank, 1);
  EXPECT_TRUE(FakeReal::inits[0].withConfig);
  EXPECT_EQ(FakeReal::inits[0].blocking, 1);
  EXPECT_EQ(FakeReal::inits[0].name, "default_pg");
  // The handle is the real NCCL's from here on: its calls go there.
  float data[2] = {};
  ASSERT_EQ(shim_.allReduce(data, data, 2, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commDestroy(comm), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, (Names{"getUniqueId", "commInitRankConfig", "allReduce", "commDestroy"}));
  // Without a config: ncclCommInitRank, with the id the root gave every rank (it asked the real NCCL once).
  ASSERT_EQ(shim_.commInitRank(&comm, 2, id, 0, nullptr), ncclSuccess);
  EXPECT_EQ(FakeReal::calls.back(), "commInitRank");
  EXPECT_FALSE(FakeReal::inits.back().withConfig);
  EXPECT_TRUE(sameId(FakeReal::inits.back().id, FakeReal::made));
  ASSERT_EQ(shim_.commDestroy(comm), ncclSuccess);
  EXPECT_EQ(std::count(FakeReal::calls.begin(), FakeReal::calls.end(), "getUniqueId"), 1);
}

TEST_F(NcclRendezvous, ThisProcesssRanksInAGroupGoTogetherInOneRealGroup) {
  const ncclUniqueId id = newId(shim_);
  platform_->forwardVerdict = "ranks on 2 hosts: node-a (ranks 0, 1), node-b (ranks 2, 3)";
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "tp";
  ncclComm_t comms[2] = {};
  FakeReal::currentDevice = [this] { return platform_->device; };
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  platform_->device = 2;
  ASSERT_EQ(shim_.commInitRank(&comms[0], 4, id, 0, &config), ncclSuccess);
  config.commName = "changed after the call";  // the config was taken at the call
  platform_->device = 3;
  ASSERT_EQ(shim_.commInitRank(&comms[1], 4, id, 1, nullptr), ncclSuccess);
  EXPECT_TRUE(FakeReal::calls.empty());  // created at the group's end
  platform_->device = 0;
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, (Names{"getUniqueId", "groupStart", "commInitRankConfig", "commInitRank", "groupEnd"}));
  ASSERT_EQ(FakeReal::inits.size(), 2u);
  EXPECT_EQ(FakeReal::inits[0].name, "tp");
  EXPECT_EQ(FakeReal::inits[1].rank, 1);
  // Each rank's creation on the GPU current when it was called, not at the group's end; the caller's device after.
  EXPECT_EQ(FakeReal::inits[0].device, 2);
  EXPECT_EQ(FakeReal::inits[1].device, 3);
  EXPECT_EQ(platform_->device, 0);
  for (ncclComm_t comm : comms) ASSERT_EQ(shim_.commDestroy(comm), ncclSuccess);
}

// One rank's creation fails in the real group: the communicator another got is aborted, none is kept.
TEST_F(NcclRendezvous, ARealGroupThatFailsPartlyKeepsNoCommunicator) {
  const ncclUniqueId id = newId(shim_);
  platform_->forwardVerdict = kTwoHosts;
  FakeReal::failing["commInitRankConfig"] = ncclInvalidUsage;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclComm_t comms[2] = {};
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[0], 4, id, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[1], 4, id, 1, &config), ncclSuccess);
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidUsage);
  EXPECT_EQ(FakeReal::calls,
            (Names{"getUniqueId", "groupStart", "commInitRank", "commInitRankConfig", "groupEnd", "commAbort"}));
  for (ncclComm_t comm : comms) EXPECT_EQ(shim_.commDestroy(comm), ncclSuccess);
  EXPECT_EQ(FakeReal::calls.back(), "commAbort");  // the failed handles' destroys reach nothing real
}

TEST_F(NcclRendezvous, TheRealNcclsFailureNamesTheVerdictAndLeavesNoHandle) {
  const ncclUniqueId id = newId(shim_);
  platform_->forwardVerdict = kTwoHosts;
  FakeReal::failing["commInitRank"] = ncclInvalidUsage;  // the root's getUniqueId succeeds, the creation fails
  ncclComm_t comm = nullptr;
  EXPECT_EQ(shim_.commInitRank(&comm, 2, id, 0, nullptr), ncclInvalidUsage);
  const std::string error = shim_.getLastError(nullptr);
  EXPECT_NE(error.find("the real NCCL failed it: fake NCCL: peer 3 unreachable"), std::string::npos) << error;
  EXPECT_NE(error.find(kTwoHosts), std::string::npos) << error;
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(shim_.liveHandles(), 0u);
  EXPECT_EQ(FakeReal::calls, (Names{"getUniqueId", "commInitRank"}));
}

TEST_F(NcclRendezvous, NoIdFromTheRealNcclFailsEveryRanksCreationNamingWhy) {
  const ncclUniqueId id = newId(shim_);
  platform_->forwardVerdict = kTwoHosts;
  FakeReal::failing["getUniqueId"] = ncclSystemError;
  for (const int rank : {0, 1}) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ncclComm_t comm = nullptr;
    EXPECT_EQ(shim_.commInitRank(&comm, 2, id, rank, nullptr), ncclSystemError);
    const std::string error = shim_.getLastError(nullptr);
    EXPECT_NE(error.find("has no id of the real NCCL for it: the real NCCL's ncclGetUniqueId failed: fake NCCL: "
                         "peer 3 unreachable"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(kTwoHosts), std::string::npos) << error;
    EXPECT_EQ(comm, nullptr);
    EXPECT_EQ(shim_.liveHandles(), 0u);
  }
  EXPECT_EQ(FakeReal::calls, Names{"getUniqueId"});  // the root asked once; nothing was created
}

// What the shim gives a root: the real NCCL's ncclGetUniqueId, kept past the RealNccl it was made from.
TEST(NcclRealIdSource, GivesTheRealNcclsWholeIdOrItsWordsWhy) {
  const auto source = realUniqueIdSource(*FakeReal::make());
  FakeReal::made = FakeReal::ncclLikeId();
  const std::vector<std::uint8_t> bytes = source();
  ASSERT_EQ(bytes.size(), sizeof(ncclUniqueId));
  EXPECT_EQ(std::memcmp(bytes.data(), FakeReal::made.internal, bytes.size()), 0);
  FakeReal::failing["getUniqueId"] = ncclInternalError;
  try {
    source();
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::SystemError);
    EXPECT_STREQ(error.what(), "the real NCCL's ncclGetUniqueId failed: fake NCCL: peer 3 unreachable");
  }
}

// Peerlink's ids: the first's root decides for every rank and asks the real NCCL for one id, which every rank then
// creates its rank with (as the real ncclCommInitRankScalable with that one id would); this process's roots of the
// others end.
TEST_F(NcclRendezvous, ScalableCreationFollowsTheFirstIdsRootWithOneRealId) {
  const ncclUniqueId ids[2] = {newId(shim_), newId(shim_)};
  UniqueId second;
  std::memcpy(second.bytes, ids[1].internal, kUniqueIdBytes);
  int serial = 0;  // the fake's count of ids, in the token
  std::memcpy(&serial, bootstrap::decodeUniqueId(second).token.data(), sizeof serial);
  const std::string retired = "retireId r" + std::to_string(serial);
  log_->take();
  platform_->forwardVerdict = kTwoHosts;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "pg:0";
  ncclComm_t comms[2] = {};
  ASSERT_EQ(shim_.commInitRankScalable(&comms[0], 2, 0, 2, ids, &config), ncclSuccess);
  ASSERT_EQ(shim_.commInitRankScalable(&comms[1], 2, 1, 2, ids, nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), (Names{retired, "createWorld r0", retired, "createWorld r1"}));
  EXPECT_EQ(FakeReal::calls, (Names{"getUniqueId", "commInitRankConfig", "commInitRank"}));
  ASSERT_EQ(FakeReal::inits.size(), 2u);
  for (const FakeReal::Init& init : FakeReal::inits) EXPECT_TRUE(sameId(init.id, FakeReal::made));
  EXPECT_EQ(FakeReal::inits[0].name, "pg:0");
  for (ncclComm_t comm : comms) ASSERT_EQ(shim_.commDestroy(comm), ncclSuccess);
}

// The real NCCL's ids (a launcher that says the job spans machines, or ALL): its own ncclCommInitRankScalable gets
// every one of them, in order, on every rank -- not the first alone, which left the roots of the others running.
TEST(NcclRendezvousScalable, TheRealNcclsIdsAllGoToItsOwnScalableCreation) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform, {{"PEERLINK_NCCL_FALLBACK", "ALL"}}));
  ncclUniqueId ids[3] = {};
  for (int i = 0; i < 3; ++i) {
    std::memset(&FakeReal::made, 0x51 + i, sizeof FakeReal::made);
    ids[i] = newId(shim);
  }
  FakeReal::calls.clear();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "dp";
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim.commInitRankScalable(&comm, 8, 5, 3, ids, &config), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, Names{"commInitRankScalable"});
  ASSERT_EQ(FakeReal::inits.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("id " + std::to_string(i));
    EXPECT_TRUE(sameId(FakeReal::inits[static_cast<std::size_t>(i)].id, ids[i]));
    EXPECT_EQ(FakeReal::inits[static_cast<std::size_t>(i)].rank, 5);
    EXPECT_EQ(FakeReal::inits[static_cast<std::size_t>(i)].nranks, 8);
    EXPECT_EQ(FakeReal::inits[static_cast<std::size_t>(i)].name, "dp");
  }
  EXPECT_TRUE(log->names().empty());  // nothing of peerlink's: no world, no root retired
  ASSERT_EQ(shim.commDestroy(comm), ncclSuccess);
  // One id alone is the real ncclCommInitRank's, as before; without a config too.
  ASSERT_EQ(shim.commInitRankScalable(&comm, 8, 5, 1, ids, nullptr), ncclSuccess);
  EXPECT_EQ(FakeReal::calls.back(), "commInitRank");
  ASSERT_EQ(shim.commDestroy(comm), ncclSuccess);
  ASSERT_EQ(shim.commInitRankScalable(&comm, 8, 5, 2, ids, nullptr), ncclSuccess);
  EXPECT_EQ(FakeReal::calls.back(), "commInitRankScalable");
  EXPECT_FALSE(FakeReal::inits.back().withConfig);
  ASSERT_EQ(shim.commDestroy(comm), ncclSuccess);
}

TEST(NcclRendezvousScalable, InsideAGroupTheRealScalableCreationIsInTheRealGroup) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform, {{"PEERLINK_NCCL_FALLBACK", "ALL"}}));
  const ncclUniqueId ids[2] = {newId(shim), newId(shim)};
  FakeReal::calls.clear();
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim.groupStart(), ncclSuccess);
  ASSERT_EQ(shim.commInitRankScalable(&comm, 2, 0, 2, ids, nullptr), ncclSuccess);
  ASSERT_EQ(shim.groupEnd(), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, (Names{"groupStart", "commInitRankScalable", "groupEnd"}));
  ASSERT_EQ(shim.commDestroy(comm), ncclSuccess);
}

TEST(NcclRendezvousScalable, AMixOfPeerlinksAndTheRealNcclsIdsIsRefusedBeforeAnythingStarts) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform));  // no launcher: its ids are peerlink's
  FakeReal::made = FakeReal::ncclLikeId();
  const ncclUniqueId ids[3] = {newId(shim), FakeReal::ncclLikeId(), newId(shim)};
  log->take();
  for (const bool realFirst : {false, true}) {
    SCOPED_TRACE(realFirst ? "the real NCCL's first" : "peerlink's first");
    ncclUniqueId order[3] = {ids[0], ids[1], ids[2]};
    if (realFirst) std::swap(order[0], order[1]);
    ncclComm_t comm = nullptr;
    EXPECT_EQ(shim.commInitRankScalable(&comm, 2, 0, 3, order, nullptr), ncclInvalidArgument);
    EXPECT_NE(std::string(shim.getLastError(nullptr)).find("unique id 1 is"), std::string::npos)
        << shim.getLastError(nullptr);
    EXPECT_EQ(comm, nullptr);
  }
  EXPECT_TRUE(log->names().empty());  // no world, no root retired
  EXPECT_TRUE(FakeReal::calls.empty());
  EXPECT_EQ(shim.liveHandles(), 0u);
}

TEST(NcclRendezvousScalable, ARealNcclWithoutScalableCreationRefusesSeveralIdsNamingIt) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  ShimParts parts = partsWithReal(log, &platform, {{"PEERLINK_NCCL_FALLBACK", "ALL"}});
  parts.real->commInitRankScalable = nullptr;  // NCCL before 2.23
  Shim shim(std::move(parts));
  const ncclUniqueId ids[2] = {newId(shim), newId(shim)};
  ncclComm_t comm = nullptr;
  EXPECT_EQ(shim.commInitRankScalable(&comm, 2, 0, 2, ids, nullptr), ncclInvalidUsage);
  EXPECT_NE(std::string(shim.getLastError(nullptr)).find("lacks (NCCL 2.23 and later have it)"), std::string::npos)
      << shim.getLastError(nullptr);
  EXPECT_EQ(shim.liveHandles(), 0u);
}

// A process that may not follow a forward tells the root so in its hellos; the root refuses a world across hosts
// for every rank -- none enters the real NCCL's creation, which has no deadline, to wait for this one -- and never
// asks the real NCCL for an id.
TEST(NcclRendezvousSettings, NoneMakesNoIdThatMayForwardAndRefusesAForward) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  // NONE never loads the real library: the parts have none.
  Shim none(fakeParts(log, &platform, {{"PEERLINK_NCCL_FALLBACK", "NONE"}}));
  EXPECT_FALSE(mayForward(newId(none)));
  // An id made by a process under AUTO reaches this one, whose root sends the world to the real NCCL: refused, with
  // what to set.
  auto otherLog = std::make_shared<EventLog>();
  FakePlatform* otherPlatform = nullptr;
  Shim maker(partsWithReal(otherLog, &otherPlatform));
  FakeReal::made = FakeReal::ncclLikeId();
  const ncclUniqueId id = newId(maker);
  platform->forwardVerdict = kTwoHosts;
  ncclComm_t comm = nullptr;
  EXPECT_EQ(none.commInitRank(&comm, 2, id, 1, nullptr), ncclInvalidUsage);
  EXPECT_EQ(platform->toldRoots, std::vector<ForwardAbility>{ForwardAbility::FallbackNone});
  const std::string error = none.getLastError(nullptr);
  EXPECT_NE(error.find("refuses the world: " + std::string(kTwoHosts)), std::string::npos) << error;
  EXPECT_NE(error.find("rank 1 has no real NCCL to forward to: PEERLINK_NCCL_FALLBACK=NONE"), std::string::npos)
      << error;
  EXPECT_EQ(none.liveHandles(), 0u);
  EXPECT_TRUE(FakeReal::calls.empty());  // the root did not ask the real NCCL for an id: none was needed
  // Every other rank of that world hears the same refusal (here: the maker's own rank 0).
  otherPlatform->forwardVerdict = kTwoHosts;
  EXPECT_EQ(maker.commInitRank(&comm, 2, id, 0, nullptr), ncclInvalidUsage);
  EXPECT_EQ(std::string(maker.getLastError(nullptr)), error);
  EXPECT_TRUE(FakeReal::calls.empty());
}

TEST(NcclRendezvousSettings, WithoutTheRealLibraryTheRootIsToldAndRefusesAForward) {
  auto otherLog = std::make_shared<EventLog>();
  FakePlatform* otherPlatform = nullptr;
  Shim maker(partsWithReal(otherLog, &otherPlatform));
  const ncclUniqueId id = newId(maker);
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim missing(fakeParts(log, &platform));  // AUTO, but no real library loaded
  platform->forwardVerdict = kTwoHosts;
  ncclComm_t comm = nullptr;
  EXPECT_EQ(missing.commInitRank(&comm, 2, id, 1, nullptr), ncclInvalidUsage);
  EXPECT_EQ(platform->toldRoots, std::vector<ForwardAbility>{ForwardAbility::NoRealNccl});
  const std::string error = missing.getLastError(nullptr);
  EXPECT_NE(error.find("rank 1 has no real NCCL to forward to: no real libnccl.so.2 could be loaded there"),
            std::string::npos)
      << error;
  EXPECT_EQ(missing.liveHandles(), 0u);
  EXPECT_TRUE(FakeReal::calls.empty());
}

TEST(NcclRendezvousSettings, ALauncherThatSaysOneMachineGetsPeerlinksIdAlone) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  ShimParts parts = partsWithReal(log, &platform);
  parts.launch.launcher = Launcher::Torchrun;
  parts.launch.size = 4;
  parts.launch.localSize = 4;
  parts.launch.source = "WORLD_SIZE";
  Shim shim(std::move(parts));
  FakeReal::made = FakeReal::ncclLikeId();
  EXPECT_FALSE(mayForward(newId(shim)));  // one machine: a root that never forwards, the real NCCL untouched
  EXPECT_TRUE(FakeReal::calls.empty());
}

}  // namespace
}  // namespace peerlink::nccl::testing
