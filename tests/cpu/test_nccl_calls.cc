// The NCCL API's calls over a fake platform: collectives issued as sets once every local rank called, with the
// shim's passes around peerlink's call in the right order (pre-multiplied sums, FP8, integer averages, all-to-all
// in place); gather and scatter as send/recv groups; send/recv groups; splits and windows completed by the last
// local rank; registrations and memory; and what is forwarded to a (fake) real NCCL and what is refused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <thread>

#include "nccl_fake_platform.hpp"
#include "nccl_fake_real.hpp"

namespace peerlink::nccl::testing {
namespace {

using Names = std::vector<std::string>;

class NcclCalls : public ::testing::Test {
 protected:
  NcclCalls() : log_(std::make_shared<EventLog>()), shim_(fakeParts(log_, &platform_)) {}

  std::vector<ncclComm_t> world(int n) {
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    EXPECT_EQ(shim_.commInitAll(comms.data(), n, nullptr), ncclSuccess);
    log_->take();
    return comms;
  }

  // Rank 1 of a world of two whose rank 0 lives in another process: each call goes to the communicator at once.
  ncclComm_t secondOfTwo() {
    ncclComm_t comm = nullptr;
    EXPECT_EQ(shim_.commInitRank(&comm, 2, newId(shim_), 1, nullptr), ncclSuccess);
    log_->take();
    return comm;
  }

  std::shared_ptr<EventLog> log_;
  FakePlatform* platform_ = nullptr;
  Shim shim_;
  float a_[64] = {};
  float b_[64] = {};
};

TEST_F(NcclCalls, ASetGoesOnceEveryLocalRankCalledInRankOrder) {
  const auto comms = world(4);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(shim_.allReduce(a_, b_, 4, ncclFloat32, ncclMax, comms[static_cast<std::size_t>(r)], nullptr),
              ncclSuccess);
  }
  EXPECT_TRUE(log_->take().empty());
  ASSERT_EQ(shim_.allReduce(a_, b_, 4, ncclFloat32, ncclMax, comms[3], nullptr), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const Event& event = events[static_cast<std::size_t>(r)];
    EXPECT_EQ(event.what, "allReduce");
    EXPECT_EQ(event.rank, r);
    EXPECT_EQ(event.send, a_);
    EXPECT_EQ(event.recv, b_);
    EXPECT_EQ(event.type, DataType::F32);
    EXPECT_EQ(event.op, ReduceOp::Max);
  }
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());
}

TEST_F(NcclCalls, Fp8IsWidenedReducedInHalfAndNarrowedBehindTheSet) {
  const auto comms = world(2);
  std::uint8_t send[2][16] = {};
  std::uint8_t recv[2][16] = {};
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(
        shim_.allReduce(send[r], recv[r], 16, ncclFloat8e5m2, ncclSum, comms[static_cast<std::size_t>(r)], nullptr),
        ncclSuccess);
  }
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  const std::vector<Event> events = log_->take();
  std::vector<std::string> names;
  for (const Event& event : events) names.push_back(event.what);
  ASSERT_EQ(names, (Names{"transform Widen", "allReduce", "transform Widen", "allReduce", "transform Narrow",
                          "transform Narrow"}));
  for (int r = 0; r < 2; ++r) {
    const Event& widen = events[static_cast<std::size_t>(2 * r)];
    const Event& reduce = events[static_cast<std::size_t>(2 * r + 1)];
    const Event& narrow = events[static_cast<std::size_t>(4 + r)];
    EXPECT_EQ(widen.send, send[r]);
    EXPECT_EQ(widen.transform.type, ncclFloat8e5m2);
    EXPECT_FALSE(widen.transform.scaled);
    EXPECT_EQ(reduce.send, widen.recv);  // the scratch, reduced in place in f16
    EXPECT_EQ(reduce.recv, widen.recv);
    EXPECT_EQ(reduce.type, DataType::F16);
    EXPECT_EQ(reduce.count, 16u);
    EXPECT_EQ(narrow.send, widen.recv);
    EXPECT_EQ(narrow.recv, recv[r]);
  }
  EXPECT_NE(events[0].recv, events[2].recv);  // each rank its own scratch
  EXPECT_EQ(platform_->allocations(), 2u);
}

// A call captured into a CUDA graph gets a scratch block of its own, kept until the communicator goes: the graph
// replays whenever the application says, so it cannot share a block with eager calls or another graph.
TEST_F(NcclCalls, ACapturedCallKeepsAScratchBlockOfItsOwn) {
  const auto comms = world(1);
  std::uint8_t send[16] = {};
  std::uint8_t recv[16] = {};
  const auto fp8AllReduce = [&](cudaStream_t stream) {
    EXPECT_EQ(shim_.allReduce(send, recv, 16, ncclFloat8e5m2, ncclSum, comms[0], stream), ncclSuccess);
    const std::vector<Event> events = log_->take();
    EXPECT_FALSE(events.empty());
    return events.empty() ? nullptr : events.front().recv;  // the widened copy: the scratch
  };
  auto* const graphStream = reinterpret_cast<cudaStream_t>(0x1000);
  auto* const otherGraph = reinterpret_cast<cudaStream_t>(0x2000);
  const void* eager = fp8AllReduce(nullptr);
  EXPECT_EQ(fp8AllReduce(nullptr), eager);  // eager calls share the block (ordered by the streams)
  platform_->capturingStreams = {graphStream, otherGraph};
  const void* captured = fp8AllReduce(graphStream);
  const void* capturedAgain = fp8AllReduce(otherGraph);
  EXPECT_NE(captured, eager);
  EXPECT_NE(capturedAgain, eager);
  EXPECT_NE(captured, capturedAgain);
  EXPECT_EQ(platform_->allocations(), 3u);
  EXPECT_EQ(shim_.commDestroy(comms[0]), ncclSuccess);
  EXPECT_EQ(platform_->allocations(), 0u);
}

TEST_F(NcclCalls, APreMultipliedSumScalesByTheOpsScalarThenSums) {
  const std::vector<ncclComm_t> comms{secondOfTwo()};
  float scalar = 0.25f;
  ncclRedOp_t op = ncclSum;
  ASSERT_EQ(shim_.redOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comms[0]), ncclSuccess);
  EXPECT_GE(static_cast<int>(op), static_cast<int>(ncclNumOps));
  scalar = 9.0f;  // host immediate: the value at creation counts
  ASSERT_EQ(shim_.allReduce(a_, b_, 8, ncclFloat32, op, comms[0], nullptr), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "transform Scale");
  EXPECT_EQ(events[0].send, a_);
  EXPECT_EQ(events[0].recv, b_);
  float seen = 0;
  std::memcpy(&seen, events[0].transform.hostScalar, sizeof seen);
  EXPECT_EQ(seen, 0.25f);
  EXPECT_EQ(events[0].transform.deviceScalar, nullptr);
  EXPECT_EQ(events[1].what, "allReduce");
  EXPECT_EQ(events[1].send, b_);
  EXPECT_EQ(events[1].recv, b_);
  EXPECT_EQ(events[1].op, ReduceOp::Sum);
  // An op made for f32 is not one for f16; a destroyed op is no op.
  EXPECT_EQ(shim_.allReduce(a_, b_, 8, ncclFloat16, op, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("made for ncclFloat32 and is used with ncclFloat16"),
            std::string::npos);
  ASSERT_EQ(shim_.redOpDestroy(op, comms[0]), ncclSuccess);
  EXPECT_EQ(shim_.allReduce(a_, b_, 8, ncclFloat32, op, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_EQ(shim_.redOpDestroy(op, comms[0]), ncclInvalidArgument);
  EXPECT_EQ(shim_.redOpDestroy(ncclSum, comms[0]), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("a built-in op"), std::string::npos);
}

TEST_F(NcclCalls, ADeviceScalarIsReadByTheKernelAndReduceScatterScalesIntoScratch) {
  const std::vector<ncclComm_t> comms{secondOfTwo()};
  double onDevice = 3;
  ncclRedOp_t op = ncclSum;
  ASSERT_EQ(shim_.redOpCreatePreMulSum(&op, &onDevice, ncclFloat64, ncclScalarDevice, comms[0]), ncclSuccess);
  ASSERT_EQ(shim_.reduceScatter(a_, b_, 2, ncclFloat64, op, comms[0], nullptr), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].transform.deviceScalar, &onDevice);
  EXPECT_EQ(events[0].count, 4u);  // its whole input: 2 ranks x 2
  EXPECT_NE(events[0].recv, b_);   // scratch
  EXPECT_EQ(events[1].what, "reduceScatter");
  EXPECT_EQ(events[1].send, events[0].recv);
  EXPECT_EQ(events[1].recv, b_);
  double value = 1;
  EXPECT_EQ(shim_.redOpCreatePreMulSum(&op, nullptr, ncclFloat64, ncclScalarDevice, comms[0]), ncclInvalidArgument);
  EXPECT_EQ(shim_.redOpCreatePreMulSum(&op, &value, ncclFloat64, static_cast<ncclScalarResidence_t>(1), nullptr),
            ncclInvalidArgument);
}

TEST_F(NcclCalls, AnIntegerAverageIsTheSumDividedOnTheRoot) {
  const std::vector<ncclComm_t> comms{secondOfTwo()};
  std::int32_t in[4] = {};
  std::int32_t out[4] = {};
  ASSERT_EQ(shim_.reduce(in, out, 4, ncclInt32, ncclAvg, 1, comms[0], nullptr), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "reduce");
  EXPECT_EQ(events[0].op, ReduceOp::Sum);
  EXPECT_EQ(events[1].what, "transform Divide");
  EXPECT_EQ(events[1].recv, out);
  EXPECT_EQ(events[1].transform.divisor, 2);
  ASSERT_EQ(shim_.reduce(in, out, 4, ncclInt32, ncclAvg, 0, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), Names{"reduce r1"});  // not the root: nothing to divide
}

TEST_F(NcclCalls, AnAllToAllInPlaceCopiesItsInputAside) {
  const std::vector<ncclComm_t> comms{secondOfTwo()};
  ASSERT_EQ(shim_.allToAll(a_, a_, 8, ncclFloat32, comms[0], nullptr), ncclSuccess);
  std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].what, "transform Copy");
  EXPECT_EQ(events[0].count, 64u);  // bytes: 8 floats for each of 2 ranks
  EXPECT_EQ(events[1].what, "allToAll");
  EXPECT_EQ(events[1].send, events[0].recv);
  EXPECT_EQ(events[1].recv, a_);
  ASSERT_EQ(shim_.allToAll(a_, b_, 8, ncclFloat32, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), Names{"allToAll r1"});
}

TEST_F(NcclCalls, CopiesOfFp8GoAsBytes) {
  const std::vector<ncclComm_t> comms{secondOfTwo()};
  ASSERT_EQ(shim_.broadcast(a_, b_, 5, ncclFloat8e4m3, 0, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.allGather(a_, b_, 5, ncclFloat8e5m2, comms[0], nullptr), ncclSuccess);
  const std::vector<Event> events = log_->take();
  ASSERT_EQ(events.size(), 2u);
  for (const Event& event : events) {
    EXPECT_EQ(event.type, DataType::U8);
    EXPECT_EQ(event.count, 5u);
  }
}

// In a world of one every collective's result is its input: as NCCL, nothing is queued for a call in place and
// its send buffer is copied otherwise; the shim's own passes still run (a pre-multiplied sum still scales).
TEST_F(NcclCalls, AWorldOfOneQueuesNothingInPlaceAndACopyOtherwise) {
  const auto comms = world(1);
  ASSERT_EQ(shim_.allReduce(b_, b_, 8, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.reduceScatter(b_, b_, 8, ncclBfloat16, ncclMax, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.allGather(b_, b_, 8, ncclInt8, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.broadcast(b_, b_, 8, ncclFloat64, 0, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.allToAll(b_, b_, 8, ncclFloat32, comms[0], nullptr), ncclSuccess);  // copied aside, then back
  EXPECT_EQ(log_->names(), (Names{"transform Copy", "copy"}));
  ASSERT_EQ(shim_.allReduce(a_, b_, 8, ncclFloat32, ncclAvg, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.reduce(a_, b_, 6, ncclInt32, ncclAvg, 0, comms[0], nullptr), ncclSuccess);  // nothing to divide
  ASSERT_EQ(shim_.allGather(a_, b_, 5, ncclFloat8e4m3, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.reduceScatter(a_, b_, 3, ncclFloat64, ncclSum, comms[0], nullptr), ncclSuccess);
  const std::vector<Event> copies = log_->take();
  ASSERT_EQ(copies.size(), 4u);
  const std::size_t bytes[] = {32, 24, 5, 24};
  for (std::size_t i = 0; i < copies.size(); ++i) {
    EXPECT_EQ(copies[i].what, "copy");
    EXPECT_EQ(copies[i].send, a_);
    EXPECT_EQ(copies[i].recv, b_);
    EXPECT_EQ(copies[i].count, bytes[i]);
  }
  float scalar = 0.5f;
  ncclRedOp_t op = ncclSum;
  ASSERT_EQ(shim_.redOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comms[0]), ncclSuccess);
  ASSERT_EQ(shim_.allReduce(a_, b_, 8, ncclFloat32, op, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), Names{"transform Scale"});  // into recv: the sum of one is in place
  ASSERT_EQ(shim_.allReduce(a_, b_, 8, ncclFloat8e5m2, ncclSum, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), (Names{"transform Widen", "transform Narrow"}));
  EXPECT_EQ(shim_.allReduce(a_, b_, 0, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());
}

TEST_F(NcclCalls, GatherAndScatterAreSendRecvGroupsWithTheRootsOwnPartCopied) {
  const ncclUniqueId id = newId(shim_);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(shim_.commInitRank(&comm, 3, id, 1, nullptr), ncclSuccess);  // rank 1 of 3, the others elsewhere
  log_->take();
  ASSERT_EQ(shim_.gather(a_, b_, 4, ncclFloat32, 1, comm, nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), (Names{"groupStart", "recv r1", "copy", "recv r1", "groupEnd"}));
  ASSERT_EQ(shim_.gather(b_ + 4, b_, 4, ncclFloat32, 1, comm, nullptr), ncclSuccess);  // in place: no copy
  EXPECT_EQ(log_->names(), (Names{"groupStart", "recv r1", "recv r1", "groupEnd"}));
  ASSERT_EQ(shim_.gather(a_, nullptr, 4, ncclFloat32, 0, comm, nullptr), ncclSuccess);  // recv unused off the root
  const std::vector<Event> sent = log_->take();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].what, "send");
  EXPECT_EQ(sent[1].root, 0);
  ASSERT_EQ(shim_.scatter(a_, b_, 4, ncclFloat32, 1, comm, nullptr), ncclSuccess);
  const std::vector<Event> scattered = log_->take();
  ASSERT_EQ(scattered.size(), 5u);
  EXPECT_EQ(scattered[1].what, "send");
  EXPECT_EQ(scattered[1].send, a_);
  EXPECT_EQ(scattered[2].what, "copy");
  EXPECT_EQ(scattered[2].send, a_ + 4);
  EXPECT_EQ(scattered[3].send, a_ + 8);
  EXPECT_EQ(shim_.scatter(a_, b_, 4, ncclFloat32, 3, comm, nullptr), ncclInvalidArgument);
}

TEST_F(NcclCalls, SendRecvInAGroupGoToPeerlinksGroupEndedAtGroupEnd) {
  const auto comms = world(2);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.send(a_, 4, ncclFloat32, 1, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.recv(b_, 4, ncclFloat32, 0, comms[1], nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), (Names{"groupStart", "send r0", "recv r1"}));
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_EQ(log_->names(), Names{"groupEnd"});
  ASSERT_EQ(shim_.send(a_, 4, ncclFloat32, 1, comms[0], nullptr), ncclSuccess);  // outside a group: as it is
  EXPECT_EQ(log_->names(), Names{"send r0"});
  EXPECT_EQ(shim_.send(a_, 4, ncclFloat32, 2, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_EQ(shim_.recv(nullptr, 4, ncclFloat32, 1, comms[0], nullptr), ncclInvalidArgument);
}

TEST_F(NcclCalls, BadArgumentsAreNcclsInvalidArgumentAndZeroCountsNeedNoBuffers) {
  const auto comms = world(1);
  EXPECT_EQ(shim_.allReduce(nullptr, b_, 4, ncclFloat32, ncclSum, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("sendbuff is NULL"), std::string::npos);
  EXPECT_EQ(shim_.allReduce(a_, b_, 4, static_cast<ncclDataType_t>(13), ncclSum, comms[0], nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(shim_.allReduce(a_, b_, 4, ncclFloat32, static_cast<ncclRedOp_t>(9), comms[0], nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(shim_.broadcast(a_, b_, 4, ncclFloat32, 1, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_EQ(shim_.reduce(a_, nullptr, 4, ncclFloat32, ncclSum, 0, comms[0], nullptr), ncclInvalidArgument);
  EXPECT_TRUE(log_->take().empty());
  EXPECT_EQ(shim_.allReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
}

TEST_F(NcclCalls, AGroupItsOnlyThreadLeftIncompleteIsAnErrorAndItsCallsAreDropped) {
  const auto comms = world(4);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.allReduce(a_, b_, 4, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(shim_.allReduce(a_, b_, 4, ncclFloat32, ncclSum, comms[1], nullptr), ncclSuccess);
  EXPECT_EQ(shim_.groupEnd(), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(nullptr)).find("ranks 0, 1 called a collective that ranks 2, 3"),
            std::string::npos)
      << shim_.getLastError(nullptr);
  // A whole set afterwards goes as one.
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  for (ncclComm_t comm : comms) ASSERT_EQ(shim_.broadcast(a_, b_, 4, ncclFloat32, 0, comm, nullptr), ncclSuccess);
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  EXPECT_EQ(log_->names(), (Names{"broadcast r0", "broadcast r1", "broadcast r2", "broadcast r3"}));
}

TEST_F(NcclCalls, ASetPeerlinkRefusesFailsTheCallThatCompletesItAndTheNextSetWorks) {
  const auto comms = world(2);
  platform_->worlds[0].lock()->failNext_ = Error(ErrorCode::InvalidUsage, "rank 1's count (5) differs from rank 0's");
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  EXPECT_EQ(shim_.allReduce(a_, b_, 4, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(shim_.allReduce(a_, b_, 5, ncclFloat32, ncclSum, comms[1], nullptr), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(comms[1])).find("differs"), std::string::npos);
  ASSERT_EQ(shim_.groupEnd(), ncclSuccess);
  log_->take();
  for (ncclComm_t comm : comms) ASSERT_EQ(shim_.allGather(a_, b_, 4, ncclFloat32, comm, nullptr), ncclSuccess);
  EXPECT_EQ(log_->names(), (Names{"allGather r0", "allGather r1"}));
}

TEST_F(NcclCalls, ASplitCompletesAtTheLastLocalRanksCall) {
  const auto comms = world(2);
  ncclComm_t made[2] = {};
  ASSERT_EQ(shim_.commSplit(comms[0], 7, 1, &made[0], nullptr), ncclSuccess);
  ASSERT_NE(made[0], nullptr);
  int count = 0;
  EXPECT_EQ(shim_.commCount(made[0], &count), ncclInvalidUsage);  // rank 1 has not split yet
  ASSERT_EQ(shim_.commSplit(comms[1], NCCL_SPLIT_NOCOLOR, 0, &made[1], nullptr), ncclSuccess);
  EXPECT_EQ(made[1], nullptr);
  ASSERT_EQ(shim_.commCount(made[0], &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  int device = -1;
  ASSERT_EQ(shim_.commCuDevice(made[0], &device), ncclSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(shim_.commSplit(comms[0], -5, 0, &made[1], nullptr), ncclInvalidArgument);
  ASSERT_EQ(shim_.commDestroy(made[0]), ncclSuccess);
}

TEST_F(NcclCalls, SymmetricWindowsRegisterAndGoWhenEveryLocalRankAsked) {
  const auto comms = world(2);
  ncclWindow_t windows[2] = {};
  ASSERT_EQ(shim_.commWindowRegister(comms[0], a_, 256, &windows[0], NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());
  EXPECT_EQ(shim_.commWindowDeregister(comms[0], windows[0]), ncclInvalidUsage);  // not registered yet
  ASSERT_EQ(shim_.commWindowRegister(comms[1], b_, 256, &windows[1], NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  const std::vector<Event> registered = log_->take();
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(registered[0].what, "registerWindow");
  EXPECT_EQ(registered[0].send, a_);
  EXPECT_EQ(registered[0].recv, b_);
  ASSERT_EQ(shim_.commWindowDeregister(comms[0], windows[0]), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());
  ASSERT_EQ(shim_.commWindowDeregister(comms[1], windows[1]), ncclSuccess);
  const std::vector<Event> removed = log_->take();
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].root, 1);  // the window's id
  EXPECT_EQ(shim_.commWindowDeregister(comms[1], windows[1]), ncclInvalidArgument);
  ncclWindow_t local = nullptr;
  ASSERT_EQ(shim_.commWindowRegister(comms[0], a_, 256, &local, NCCL_WIN_DEFAULT), ncclSuccess);
  ASSERT_EQ(shim_.commWindowDeregister(comms[0], local), ncclSuccess);
  EXPECT_TRUE(log_->take().empty());
  EXPECT_EQ(shim_.commWindowRegister(comms[0], nullptr, 256, &local, NCCL_WIN_COLL_SYMMETRIC), ncclInvalidArgument);
}

TEST_F(NcclCalls, LocalRegistrationsAreRecordedAndChecked) {
  const auto comms = world(1);
  void* handle = nullptr;
  ASSERT_EQ(shim_.commRegister(comms[0], a_, sizeof a_, &handle), ncclSuccess);
  ASSERT_NE(handle, nullptr);
  ASSERT_EQ(shim_.commDeregister(comms[0], handle), ncclSuccess);
  EXPECT_EQ(shim_.commDeregister(comms[0], handle), ncclInvalidArgument);
  EXPECT_EQ(shim_.commRegister(comms[0], nullptr, 8, &handle), ncclInvalidArgument);
  ASSERT_EQ(shim_.commRegister(comms[0], a_, sizeof a_, &handle), ncclSuccess);  // left for destroy to free
}

TEST_F(NcclCalls, MemoryComesFromThePlatformAndGoesBack) {
  void* pointer = nullptr;
  ASSERT_EQ(shim_.memAlloc(&pointer, 1024), ncclSuccess);
  EXPECT_EQ(platform_->allocations(), 1u);
  ASSERT_EQ(shim_.memFree(pointer), ncclSuccess);
  EXPECT_EQ(platform_->allocations(), 0u);
  EXPECT_EQ(shim_.memFree(nullptr), ncclSuccess);
  EXPECT_EQ(shim_.memAlloc(nullptr, 8), ncclInvalidArgument);
}

TEST_F(NcclCalls, TheDeviceApiAndShrinkAreRefusedForPeerlinksCommunicators) {
  const auto comms = world(1);
  ncclDevComm_t devComm{};
  EXPECT_EQ(shim_.devCommCreate(comms[0], nullptr, &devComm), ncclInvalidUsage);
  EXPECT_NE(std::string(shim_.getLastError(comms[0])).find("device API needs a communicator of the real NCCL"),
            std::string::npos);
  const ncclTeam_t team = shim_.team(comms[0], "ncclTeamWorld", &RealNccl::teamWorld);
  EXPECT_EQ(team.nRanks, 0);
  EXPECT_EQ(shim_.teamRank(comms[0], team, 0, "ncclTeamRankToWorld", &RealNccl::teamRankToWorld), -1);
  EXPECT_EQ(shim_.llA2ACalcSlots(16, 4), -1);
  ncclComm_t shrunk = nullptr;
  EXPECT_EQ(shim_.commShrink(comms[0], nullptr, 0, &shrunk, nullptr, 0), ncclInvalidUsage);
  EXPECT_EQ(shim_.commRevoke(comms[0], 0), ncclInvalidUsage);
  ASSERT_EQ(shim_.groupStart(), ncclSuccess);
  ASSERT_EQ(shim_.allReduce(a_, b_, 1, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_EQ(shim_.groupSimulateEnd(&info), ncclInvalidUsage);
  EXPECT_EQ(shim_.groupEnd(), ncclSuccess);  // the group stayed open
}

// ---- what is forwarded to a (fake) real NCCL ---------------------------------------------------------------

// An id that is not peerlink's (FakeReal's getUniqueId makes the same): its communicators are the real NCCL's.
ncclUniqueId foreignId() {
  ncclUniqueId id{};
  std::memset(&id, 0x5a, sizeof id);
  return id;
}

// Rank 1 of 2 on foreignId(): a communicator the real NCCL serves.
ncclComm_t forwardedComm(Shim& shim) {
  ncclComm_t comm = nullptr;
  EXPECT_EQ(shim.commInitRank(&comm, 2, foreignId(), 1, nullptr), ncclSuccess);
  return comm;
}

TEST(NcclForwarding, AnIdThatIsNotPeerlinksIsTheRealNcclsAndSoAreItsCalls) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform));
  const ncclComm_t comm = forwardedComm(shim);
  float data[2] = {};
  ASSERT_EQ(shim.allReduce(data, data, 2, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
  ncclDevComm_t devComm{};
  ASSERT_EQ(shim.devCommCreate(comm, nullptr, &devComm), ncclSuccess);
  FakeReal::next = ncclRemoteError;
  EXPECT_EQ(shim.allReduce(data, data, 2, ncclFloat32, ncclSum, comm, nullptr), ncclRemoteError);
  EXPECT_NE(std::string(shim.getLastError(comm)).find("fake NCCL: peer 3 unreachable"), std::string::npos);
  ASSERT_EQ(shim.commDestroy(comm), ncclSuccess);
  EXPECT_EQ(FakeReal::calls,
            (std::vector<std::string>{"commInitRank", "allReduce", "devCommCreate", "allReduce", "commDestroy"}));
  EXPECT_TRUE(log->take().empty());  // peerlink's platform saw none of it
}

// A thread destroys a communicator while another is inside a call on it (as PyTorch's watchdog aborts from its own
// thread): the destroy returns at once, the handle is no longer found, and what the call still does to the handle
// on its way out (counting the forwarded call) finds it alive -- AddressSanitizer's run of this test fails if not.
TEST(NcclForwarding, ADestroyWhileAnotherThreadIsInsideACallLeavesTheHandleToThatCall) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform));
  const ncclComm_t comm = forwardedComm(shim);
  std::promise<void> inside;
  std::promise<void> destroyed;
  std::future<void> destroyedSeen = destroyed.get_future();
  FakeReal::insideAllReduce = [&] {
    inside.set_value();
    destroyedSeen.wait_for(std::chrono::seconds(10));
  };
  float data[2] = {};
  ncclResult_t called = ncclInternalError;
  std::thread caller([&] { called = shim.allReduce(data, data, 2, ncclFloat32, ncclSum, comm, nullptr); });
  ASSERT_EQ(inside.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(shim.commDestroy(comm), ncclSuccess);
  EXPECT_EQ(shim.liveHandles(), 0u);
  EXPECT_EQ(shim.commDestroy(comm), ncclInvalidArgument);  // destroyed once only
  destroyed.set_value();
  caller.join();
  EXPECT_EQ(called, ncclSuccess);
  EXPECT_EQ(FakeReal::calls, (std::vector<std::string>{"commInitRank", "commDestroy", "allReduce"}));
}

// Two threads destroying or aborting one communicator at once: one does it, the other is told the communicator is
// gone -- never both (the real NCCL's handle destroyed twice).
TEST(NcclForwarding, OfTwoThreadsDestroyingOneCommunicatorOneDoesIt) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform));
  const ncclUniqueId foreign = foreignId();
  for (int round = 0; round < 200; ++round) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(shim.commInitRank(&comm, 2, foreign, 1, nullptr), ncclSuccess);
    FakeReal::calls.clear();
    std::atomic<bool> go{false};
    ncclResult_t results[2] = {ncclInternalError, ncclInternalError};
    const auto racer = [&](int which, auto end) {
      return std::thread([&, which, end] {
        while (!go) {
        }
        results[which] = (shim.*end)(comm);
      });
    };
    std::thread first = racer(0, &Shim::commDestroy);
    std::thread second = racer(1, &Shim::commAbort);
    go = true;
    first.join();
    second.join();
    const int done = (results[0] == ncclSuccess) + (results[1] == ncclSuccess);
    ASSERT_EQ(done, 1) << "round " << round << ": " << results[0] << ", " << results[1];
    ASSERT_TRUE(results[0] == ncclInvalidArgument || results[1] == ncclInvalidArgument) << "round " << round;
    ASSERT_EQ(FakeReal::calls.size(), 1u) << "round " << round;  // one destroy or one abort reached the real NCCL
  }
  EXPECT_EQ(shim.liveHandles(), 0u);
}

TEST(NcclForwarding, TheRealGroupIsOpenedOnlyForForwardedCalls) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform));
  ncclComm_t native = nullptr;
  ASSERT_EQ(shim.commInitAll(&native, 1, nullptr), ncclSuccess);
  float data[2] = {};
  ASSERT_EQ(shim.groupStart(), ncclSuccess);
  ASSERT_EQ(shim.allReduce(data, data, 2, ncclFloat32, ncclSum, native, nullptr), ncclSuccess);
  ASSERT_EQ(shim.groupEnd(), ncclSuccess);
  EXPECT_TRUE(FakeReal::calls.empty());
  const ncclUniqueId foreign = foreignId();
  ncclComm_t real = nullptr;
  ASSERT_EQ(shim.commInitRank(&real, 2, foreign, 0, nullptr), ncclSuccess);
  FakeReal::calls.clear();
  ASSERT_EQ(shim.groupStart(), ncclSuccess);
  ASSERT_EQ(shim.groupStart(), ncclSuccess);
  ASSERT_EQ(shim.allReduce(data, data, 2, ncclFloat32, ncclSum, real, nullptr), ncclSuccess);
  ASSERT_EQ(shim.groupEnd(), ncclSuccess);
  ASSERT_EQ(shim.groupEnd(), ncclSuccess);
  EXPECT_EQ(FakeReal::calls,
            (std::vector<std::string>{"groupStart", "groupStart", "allReduce", "groupEnd", "groupEnd"}));
}

TEST(NcclForwarding, GpusPeerlinkCannotServeInOneProcessGoToTheRealNcclUnderAuto) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform));
  platform->failCreation = Error(ErrorCode::Unsupported, "GPU 0 cannot access GPU 1 as a peer");
  ncclComm_t comms[2] = {};
  ASSERT_EQ(shim.commInitAll(comms, 2, nullptr), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, std::vector<std::string>{"commInitAll"});
  // A world whose other ranks may be in other processes cannot move: the failure stands.
  const ncclUniqueId id = newId(shim);
  ncclComm_t part = nullptr;
  EXPECT_EQ(shim.commInitRank(&part, 2, id, 0, nullptr), ncclInvalidUsage);
  // ...unless every rank is in this group.
  FakeReal::calls.clear();
  ASSERT_EQ(shim.groupStart(), ncclSuccess);
  ASSERT_EQ(shim.commInitRank(&comms[0], 2, id, 0, nullptr), ncclSuccess);
  ASSERT_EQ(shim.commInitRank(&comms[1], 2, id, 1, nullptr), ncclSuccess);
  ASSERT_EQ(shim.groupEnd(), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, std::vector<std::string>{"commInitAll"});
}

TEST(NcclForwarding, NoneRefusesWhatPeerlinkCannotServe) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform, {{"PEERLINK_NCCL_FALLBACK", "NONE"}}));
  platform->failCreation = Error(ErrorCode::Unsupported, "GPU 0 cannot access GPU 1 as a peer");
  ncclComm_t comms[2] = {};
  EXPECT_EQ(shim.commInitAll(comms, 2, nullptr), ncclInvalidUsage);
  const ncclUniqueId foreign = foreignId();
  EXPECT_EQ(shim.commInitRank(&comms[0], 2, foreign, 0, nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(shim.getLastError(nullptr)).find("PEERLINK_NCCL_FALLBACK=NONE"), std::string::npos);
  EXPECT_TRUE(FakeReal::calls.empty());
  EXPECT_EQ(shim.liveHandles(), 0u);
}

TEST(NcclForwarding, AllHandsIdsAndMemoryToTheRealNccl) {
  auto log = std::make_shared<EventLog>();
  FakePlatform* platform = nullptr;
  Shim shim(partsWithReal(log, &platform, {{"PEERLINK_NCCL_FALLBACK", "ALL"}}));
  ncclUniqueId id{};
  ASSERT_EQ(shim.getUniqueId(&id), ncclSuccess);
  void* pointer = nullptr;
  ASSERT_EQ(shim.memAlloc(&pointer, 64), ncclSuccess);
  ASSERT_EQ(shim.memFree(pointer), ncclSuccess);
  EXPECT_EQ(FakeReal::calls, (std::vector<std::string>{"getUniqueId", "memAlloc", "memFree"}));
  EXPECT_EQ(platform->allocations(), 0u);
}

}  // namespace
}  // namespace peerlink::nccl::testing
