// The NCCL API's communicators over a fake platform: creation by rank (alone, or in a group as one world per id),
// by ncclCommInitAll, lifetimes (destroying one rank never waits for the others; the world ends with its last),
// what a user gets wrong (NULL, destroyed and half-created communicators, bad configs, a group never started or
// left incomplete, two threads creating ranks of one world), and the errors' codes and texts.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "nccl_fake_platform.hpp"

namespace peerlink::nccl::testing {
namespace {

class NcclShim : public ::testing::Test {
 protected:
  NcclShim() : log_(std::make_shared<EventLog>()), shim_(fakeParts(log_, &platform_)) {}

  // `n` ranks of one world created in one group from this thread, rank r on device r.
  std::vector<ncclComm_t> group(int n) {
    const ncclUniqueId id = newId(shim_);
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    EXPECT_EQ(shim_.groupStart(), ncclSuccess);
    for (int r = 0; r < n; ++r) {
      platform_->device = r;
      EXPECT_EQ(shim_.commInitRank(&comms[static_cast<std::size_t>(r)], n, id, r, nullptr), ncclSuccess);
    }
    EXPECT_EQ(shim_.groupEnd(), ncclSuccess);
    return comms;
  }

  std::shared_ptr<EventLog> log_;
  FakePlatform* platform_ = nullptr;
  Shim shim_;
};

TEST_F(NcclShim, ARankCreatedAloneIsItsOwnProcessesPartOfTheWorld) {
  const ncclUniqueId id = newId(shim_);
  platform_->device = 3;
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.commInitRank(&comm, 4, id, 2, nullptr), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "createWorld");
  EXPECT_EQ(events[0].count, 1u);  // one local rank
  EXPECT_EQ(events[0].rank, 2);
  EXPECT_EQ(events[0].root, 4);  // nranks
  int value = -1;
  ASSERT_EQ(shim_.commCount(comm, &value), ncclSuccess);
  EXPECT_EQ(value, 4);
  ASSERT_EQ(shim_.commUserRank(comm, &value), ncclSuccess);
  EXPECT_EQ(value, 2);
  ASSERT_EQ(shim_.commCuDevice(comm, &value), ncclSuccess);
  EXPECT_EQ(value, 3);
  ncclResult_t async = ncclInternalError;
  ASSERT_EQ(shim_.commGetAsyncError(comm, &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  EXPECT_EQ(shim_.commDestroy(comm), ncclSuccess);
  EXPECT_EQ(shim_.liveHandles(), 0u);
}

TEST_F(NcclShim, RanksCreatedInOneGroupBecomeOneWorldAtGroupEnd) {
  const ncclUniqueId id = newId(shim_);
  std::vector<ncclComm_t> comms(4);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    platform_->device = 3 - r;
    ASSERT_EQ(shim_.commInitRank(&comms[static_cast<std::size_t>(r)], 4, id, r, nullptr), ncclSuccess);
  }
  // Not created yet: nothing reached the platform, and the handles say so.
  EXPECT_TRUE(log_->take().empty());
  ncclResult_t async = ncclSuccess;
  ASSERT_EQ(shim_.commGetAsyncError(comms[0], &async), ncclSuccess);
  EXPECT_EQ(async, ncclInProgress);
  int count = 0;
  EXPECT_EQ(shim_.commCount(comms[0], &count), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("still being created"), std::string::npos);
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count, 4u);
  for (int r = 0; r < 4; ++r) {
    int device = -1;
    ASSERT_EQ(shim_.commCuDevice(comms[static_cast<std::size_t>(r)], &device), ncclSuccess);
    EXPECT_EQ(device, 3 - r);
  }
  ASSERT_EQ(platform_->worlds.size(), 1u);
}

TEST_F(NcclShim, TwoIdsInOneGroupAreTwoWorldsCreatedSideBySide) {
  const ncclUniqueId a = newId(shim_);
  const ncclUniqueId b = newId(shim_);
  ncclComm_t comms[4] = {};
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[0], 2, a, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[1], 2, b, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[2], 2, a, 1, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[3], 2, b, 1, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_EQ(platform_->worlds.size(), 2u);
  int rank = -1;
  ASSERT_EQ(shim_.commUserRank(comms[3], &rank), ncclSuccess);
  EXPECT_EQ(rank, 1);
}

TEST_F(NcclShim, RanksOfOneIdInAGroupMustAgreeOnTheSizeAndNotRepeat) {
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comms[3] = {};
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[0], 4, id, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[1], 4, id, 0, nullptr), ncclSuccess);  // rank 0 again
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("each rank once"), std::string::npos);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[2], 3, id, 1, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[0], 4, id, 0, nullptr), ncclSuccess);
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidArgument);
  EXPECT_TRUE(log_->take().empty());  // nothing reached the platform
}

TEST_F(NcclShim, DestroyingOneRankLeavesTheWorldToTheOthersAndTheLastEndsIt) {
  const std::vector<ncclComm_t> comms = group(4);
  ASSERT_EQ(platform_->worlds.size(), 1u);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(shim_.commDestroy(comms[static_cast<std::size_t>(r)]), ncclSuccess);
    EXPECT_FALSE(platform_->worlds[0].expired()) << "destroyed with rank " << r;
  }
  ASSERT_EQ(shim_.commDestroy(comms[3]), ncclSuccess);
  EXPECT_TRUE(platform_->worlds[0].expired());
  EXPECT_EQ(shim_.liveHandles(), 0u);
}

TEST_F(NcclShim, NullDestroyedAndForeignCommunicatorsAreInvalidArguments) {
  int count = 0;
  EXPECT_EQ(shim_.commCount(nullptr, &count), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("ncclCommCount: the communicator is NULL"),
            std::string::npos);
  const std::vector<ncclComm_t> comms = group(1);
  ASSERT_EQ(shim_.commDestroy(comms[0]), ncclSuccess);
  EXPECT_EQ(shim_.allReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("already destroyed"), std::string::npos);
  EXPECT_EQ(shim_.commDestroy(comms[0]), ncclInvalidArgument);
  int notAComm = 0;
  EXPECT_EQ(shim_.commAbort(reinterpret_cast<ncclComm_t>(&notAComm)), ncclInvalidArgument);
}

TEST_F(NcclShim, ACreationThatFailsInAGroupFailsItsRanksAndTheGroupEnd) {
  platform_->failCreation = Error(ErrorCode::Unsupported, "GPU 0 cannot access GPU 1 as a peer");
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comms[2] = {};
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[0], 2, id, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comms[1], 2, id, 1, nullptr), ncclSuccess);
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("cannot access GPU 1 as a peer"), std::string::npos);
  for (ncclComm_t comm : comms) {
    ncclResult_t async = ncclSuccess;
    ASSERT_EQ(shim_.commGetAsyncError(comm, &async), ncclSuccess);
    EXPECT_EQ(async, ncclInvalidUsage);
    EXPECT_EQ(shim_.allReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidUsage);
    EXPECT_EQ(shim_.commDestroy(comm), ncclSuccess);
  }
  EXPECT_EQ(shim_.liveHandles(), 0u);
}

TEST_F(NcclShim, ACreationThatFailsAloneLeavesNoHandle) {
  platform_->failCreation = Error(ErrorCode::Timeout, "ranks 1 of 2 never reached 10.0.0.1:4000 within 30 s");
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(this);
  EXPECT_EQ(shim_.commInitRank(&comm, 2, id, 0, nullptr), ncclInternalError);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(shim_.liveHandles(), 0u);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("never reached"), std::string::npos);
}

TEST_F(NcclShim, BadArgumentsToCreationFailBeforeAnythingIsCreated) {
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(shim_.commInitRank(nullptr, 2, id, 0, nullptr), ncclInvalidArgument);
  EXPECT_EQ(shim_.commInitRank(&comm, 2, id, 2, nullptr), ncclInvalidArgument);
  EXPECT_EQ(shim_.commInitRank(&comm, 0, id, 0, nullptr), ncclInvalidArgument);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0x12345678;
  EXPECT_EQ(shim_.commInitRank(&comm, 2, id, 0, &config), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("magic 0x12345678"), std::string::npos);
  ncclUniqueId zeros{};
  EXPECT_EQ(shim_.commInitRank(&comm, 2, zeros, 0, nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("not peerlink's"), std::string::npos);
  ncclUniqueId ids[1] = {id};
  EXPECT_EQ(shim_.commInitRankScalable(&comm, 2, 0, 0, ids, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(log_->take().empty());
  EXPECT_EQ(shim_.liveHandles(), 0u);
}

// The ranks meet at the first id's root; this process's roots of the others are retired (where no rank reached
// them they end now, not at their deadline), each once, and never the first's.
TEST_F(NcclShim, TheConfigsNameAndTheScalableIdsFirstAreUsed) {
  const ncclUniqueId first = newId(shim_);
  const ncclUniqueId second = newId(shim_);
  UniqueId secondId;
  std::memcpy(secondId.bytes, second.internal, kUniqueIdBytes);
  int serial = 0;  // the fake's count of ids, in the token
  std::memcpy(&serial, bootstrap::decodeUniqueId(secondId).token.data(), sizeof serial);
  const ncclUniqueId ids[3] = {first, second, first};
  log_->take();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "pg:0";
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.commInitRankScalable(&comm, 1, 0, 3, ids, &config), ncclSuccess);
  EXPECT_EQ(comm->name, "pg:0");
  EXPECT_EQ(platform_->worlds.size(), 1u);
  EXPECT_EQ(log_->names(), (std::vector<std::string>{"retireId r" + std::to_string(serial), "createWorld r0"}));
}

TEST_F(NcclShim, InitAllMakesOneWorldOfTheListedDevices) {
  ncclComm_t comms[3] = {};
  const int devices[3] = {2, 0, 1};
  ASSERT_EQ(shim_.commInitAll(comms, 3, devices), ncclSuccess);
  for (int r = 0; r < 3; ++r) {
    int device = -1;
    int rank = -1;
    ASSERT_EQ(shim_.commCuDevice(comms[r], &device), ncclSuccess);
    ASSERT_EQ(shim_.commUserRank(comms[r], &rank), ncclSuccess);
    EXPECT_EQ(device, devices[r]);
    EXPECT_EQ(rank, r);
  }
  ncclComm_t more[2] = {};
  ASSERT_EQ(shim_.commInitAll(more, 2, nullptr), ncclSuccess);  // devices 0 and 1
  int device = -1;
  ASSERT_EQ(shim_.commCuDevice(more[1], &device), ncclSuccess);
  EXPECT_EQ(device, 1);
  const int bad[2] = {0, 9};
  EXPECT_EQ(shim_.commInitAll(more, 2, bad), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("device 9 (entry 1)"), std::string::npos);
  EXPECT_EQ(shim_.commInitAll(nullptr, 2, nullptr), ncclInvalidArgument);
  EXPECT_EQ(shim_.liveHandles(), 5u);
}

TEST_F(NcclShim, GroupEndWithoutAStartIsInvalidUsageAndGroupsNest) {
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("no group is open"), std::string::npos);
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comm, 1, id, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());  // the inner end creates nothing
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_EQ(log_->take().size(), 1u);
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidUsage);
}

TEST_F(NcclShim, ACommunicatorDestroyedInsideItsCreatingGroupIsNotCreated) {
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comm, 1, id, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.commDestroy(comm), ncclSuccess);
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());
}

// Destroyed by another thread while the creating thread's group is open: the group's end still completes the
// creation it holds a lease on, and nothing writes into a freed handle (AddressSanitizer's CI run fails if so); the
// world goes with the lease.
TEST_F(NcclShim, ACommunicatorAnotherThreadDestroysInsideItsCreatingGroupIsNotWrittenAfterItsEnd) {
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.commInitRank(&comm, 1, id, 0, nullptr), ncclSuccess);
  ncclResult_t destroyed = ncclInternalError;
  std::thread([&] { destroyed = shim_.commDestroy(comm); }).join();
  EXPECT_EQ(destroyed, ncclSuccess);
  EXPECT_EQ(shim_.liveHandles(), 0u);
  EXPECT_EQ(shim_.groupEnd(), ncclSuccess);
  ASSERT_EQ(platform_->worlds.size(), 1u);
  EXPECT_TRUE(platform_->worlds[0].expired());
}

TEST_F(NcclShim, TwoThreadsCreatingRanksOfOneWorldOnTheirOwnAreRefusedAtOnce) {
  const ncclUniqueId id = newId(shim_);
  platform_->closeGate();
  ncclResult_t first = ncclInternalError;
  ncclComm_t firstComm = nullptr;
  std::thread creator([&] { first = shim_.commInitRank(&firstComm, 2, id, 0, nullptr); });
  ASSERT_TRUE(platform_->waitForCreator());
  ncclComm_t second = nullptr;
  EXPECT_EQ(shim_.commInitRank(&second, 2, id, 1, nullptr), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("another thread of this process"), std::string::npos);
  platform_->openGate();
  creator.join();
  EXPECT_EQ(first, ncclSuccess);  // the fake's world needs no second rank to come
  EXPECT_EQ(shim_.commDestroy(firstComm), ncclSuccess);
}

TEST_F(NcclShim, FinalizeLeavesOnlyDestroy) {
  const std::vector<ncclComm_t> comms = group(1);
  ASSERT_EQ(shim_.commFinalize(comms[0]), ncclSuccess);
  float data = 0;
  EXPECT_EQ(shim_.allReduce(&data, &data, 1, ncclFloat32, ncclSum, comms[0], nullptr), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("after ncclCommFinalize"), std::string::npos);
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(shim_.commGetAsyncError(comms[0], &async), ncclSuccess);
  EXPECT_EQ(shim_.commDestroy(comms[0]), ncclSuccess);
}

TEST_F(NcclShim, AbortStopsTheWorldForEveryLocalRank) {
  const std::vector<ncclComm_t> comms = group(2);
  log_->take();
  ASSERT_EQ(shim_.commAbort(comms[0]), ncclSuccess);
  EXPECT_EQ(log_->names(), std::vector<std::string>{"abort"});
  float data = 0;
  EXPECT_EQ(shim_.allReduce(&data, &data, 1, ncclFloat32, ncclSum, comms[1], nullptr), ncclRemoteError);
  EXPECT_NE(std::string(shim_.getLastError(comms[1])).find("aborted"), std::string::npos);
  EXPECT_EQ(shim_.commDestroy(comms[1]), ncclSuccess);
  EXPECT_TRUE(platform_->worlds[0].expired());
}

TEST_F(NcclShim, AnAsyncErrorIsNcclsCodeWithTheMessageKept) {
  const std::vector<ncclComm_t> comms = group(1);
  platform_->worlds[0].lock()->asyncError_ = Error(ErrorCode::RemoteError, "rank 1 (host b, pid 7) exited");
  ncclResult_t async = ncclSuccess;
  ASSERT_EQ(shim_.commGetAsyncError(comms[0], &async), ncclSuccess);
  EXPECT_EQ(async, ncclRemoteError);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("rank 1 (host b, pid 7) exited"), std::string::npos);
  EXPECT_EQ(shim_.commGetAsyncError(comms[0], nullptr), ncclInvalidArgument);
}

TEST_F(NcclShim, TheLastErrorIsPerThread) {
  int count = 0;
  EXPECT_EQ(shim_.commCount(nullptr, &count), ncclInvalidArgument);
  std::string other = "unset";
  std::thread([&] { other = shim_.getLastError(nullptr); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(shim_.getLastError(nullptr)), "");
}

TEST(NcclShimSettings, AMalformedSettingFailsEveryCallNamingIt) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  ShimParts parts = fakeParts(log, &platform);
  parts.settings =
      Failure{ncclInvalidUsage, "PEERLINK_NCCL_FALLBACK='maybe' is not valid: expected one of AUTO, NONE, ALL"};
  Shim shim(std::move(parts));
  int version = 0;
  EXPECT_EQ(shim.getVersion(&version), ncclInvalidUsage);
  EXPECT_NE(std::string(shim.getLastError(nullptr)).find("PEERLINK_NCCL_FALLBACK='maybe'"), std::string::npos);
  ncclUniqueId id{};
  EXPECT_EQ(shim.getUniqueId(&id), ncclInvalidUsage);
  EXPECT_STREQ(shim.getErrorString(ncclInvalidUsage), resultString(ncclInvalidUsage));
}

TEST(NcclShimSettings, TheVersionReportedIsTheSettings) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(fakeParts(log, &platform, {{"PEERLINK_NCCL_VERSION", "22703"}}));
  int version = 0;
  ASSERT_EQ(shim.getVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 22703);
  EXPECT_EQ(shim.getVersion(nullptr), ncclInvalidArgument);
}

TEST(NcclShimSettings, LeftoverHandlesAndScratchAreReleasedWithTheShim) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  auto parts = fakeParts(log, &platform);
  std::weak_ptr<FakeWorld> world;
  {
    Shim shim(std::move(parts));
    ncclComm_t comms[2] = {};
    ASSERT_EQ(shim.commInitAll(comms, 2, nullptr), ncclSuccess);
    world = platform->worlds[0];
    std::uint8_t data[8] = {};
    // An FP8 all-reduce takes scratch on each rank.
    ASSERT_EQ(shim.groupStart(), ncclSuccess);
    for (ncclComm_t comm : comms) {
      ASSERT_EQ(shim.allReduce(data, data, 8, ncclFloat8e4m3, ncclSum, comm, nullptr), ncclSuccess);
    }
    ASSERT_EQ(shim.groupEnd(), ncclSuccess);
    EXPECT_EQ(platform->allocations(), 2u);
    ASSERT_EQ(shim.commDestroy(comms[0]), ncclSuccess);
    EXPECT_EQ(platform->allocations(), 2u);  // the world, and its scratch, live on with rank 1
    ASSERT_EQ(shim.commDestroy(comms[1]), ncclSuccess);
    EXPECT_EQ(platform->allocations(), 0u);
    EXPECT_TRUE(world.expired());
    // Handles the application leaves behind go with the Shim.
    ASSERT_EQ(shim.commInitAll(comms, 2, nullptr), ncclSuccess);
    world = platform->worlds[1];
  }
  EXPECT_TRUE(world.expired());
}

}  // namespace
}  // namespace peerlink::nccl::testing
