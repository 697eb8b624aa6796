// One process per GPU in `peerlink plan`'s model (src/plan/processes.hpp): one process predicts as before, each
// kernel pays the processes' part, and a call on unregistered buffers is cut into the chunks the communicator cuts
// (coll/staging_plan.hpp), each chunk's kernel chosen for its size, with a copy into and out of the windows per
// chunk at the memory's bandwidth, timed as the communicator's schedule runs them (staged_time.hpp): one after
// another under PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL, else each chunk's copies beside its neighbours' kernels;
// the LL kernels, send/recv and registered buffers are never staged. By default (PEERLINK_COLL_STAGE_COPIES=PEERS)
// each rank copies only what its peers touch (coll::keepOwnPartsLocal); the tests of the schedule's timing stage
// every byte.
#include <gtest/gtest.h>

#include "coll/comm_setup.hpp"
#include "coll/staging_plan.hpp"
#include "error_text.hpp"
#include "peerlink/error.hpp"
#include "plan/processes.hpp"
#include "topology_fixture.hpp"

namespace peerlink::plan {
namespace {

using testing::loadTopologyFixture;

constexpr std::size_t kMiB = 1 << 20;
constexpr double kH200MemoryGBps = 4800;

CostModel testModel() {
  CostModel model;
  model.stepUs = 0.5;
  model.peerUs = 0.25;
  model.processUs = 0.75;
  model.stagingCopy = {1.25, 0.5, 0, "test"};
  for (KernelCosts& costs : model.kernels) costs.all = {2, 0.8, 0, "test"};
  model.memoryGBps["NVIDIA H200"] = kH200MemoryGBps;
  return model;
}

// Two H200s of the 4-GPU fixture, as a communicator over them sees them.
struct TwoGpus {
  Topology topology = loadTopologyFixture("h200x4_vm");
  Fabric fabric = fabricFor(topology, {0, 1}, testModel());
  ChoiceContext context = choiceContextFor(topology, {0, 1}, Params());

  CollectiveChoice chosen(const Call& call) const { return choiceFor(call, 2, context); }
};

constexpr ProcessMode kOneProcess{};
// Every byte staged (PEERLINK_COLL_STAGE_COPIES=ALL), pipelined and serially; and the default, the peers' parts only;
// through 64 MiB windows, the arena ring off (PEERLINK_COLL_ARENA_RING=OFF: test_plan_arena_ring.cc tests it).
constexpr std::size_t kWindow = std::size_t{64} << 20;
constexpr auto kNoRing = coll::ArenaRingMode::Off;
constexpr ProcessMode kStaged{2, false, false, false, kWindow, kNoRing};
constexpr ProcessMode kSerial{2, false, true, false, kWindow, kNoRing};
constexpr ProcessMode kStagedPeersParts{2, false, false, true, kWindow, kNoRing};
constexpr ProcessMode kRegistered{2, true};

TEST(PlanProcesses, OneProcessPredictsAsBefore) {
  const TwoGpus gpus;
  for (const std::size_t count : {std::size_t{2}, 8 * kMiB, 128 * kMiB}) {
    const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
    const CollectiveChoice choice = gpus.chosen(call);
    EXPECT_DOUBLE_EQ(predictCall(call, choice, gpus.fabric, gpus.context, kOneProcess, testModel()).timeUs,
                     predictChoice(call, choice, gpus.fabric, testModel()).timeUs)
        << count;
  }
}

TEST(PlanProcesses, RegisteredBuffersPayTheProcessesPartOnly) {
  const TwoGpus gpus;
  const Call call{Collective::AllReduce, DataType::F32, 8 * kMiB, false, 0};
  const CollectiveChoice choice = gpus.chosen(call);
  ASSERT_EQ(choice.kernel, Kernel::TwoShot);
  EXPECT_FALSE(isStaged(call, choice, kRegistered));
  const Prediction one = predictChoice(call, choice, gpus.fabric, testModel());
  const Prediction two = predictCall(call, choice, gpus.fabric, gpus.context, kRegistered, testModel());
  EXPECT_NEAR(two.timeUs, one.timeUs + 0.75, 1e-9);
  EXPECT_NEAR(two.fixedUs, one.fixedUs + 0.75, 1e-9);
  EXPECT_EQ(two.bottleneck, one.bottleneck);
  // Three processes: two parts.
  EXPECT_NEAR(predictCall(call, choice, gpus.fabric, gpus.context, {3, true}, testModel()).timeUs, one.timeUs + 1.5,
              1e-9);
}

TEST(PlanProcesses, TheLlKernelsAndSendRecvAreNeverStaged) {
  const TwoGpus gpus;
  const Call small{Collective::AllReduce, DataType::F32, 1024, false, 0};
  ASSERT_EQ(gpus.chosen(small).protocol, Protocol::Ll128);
  EXPECT_FALSE(isStaged(small, gpus.chosen(small), kStaged));
  const Call sendRecv{Collective::SendRecv, DataType::F32, 8 * kMiB, false, 0};
  EXPECT_FALSE(isStaged(sendRecv, gpus.chosen(sendRecv), kStaged));
  const Call none{Collective::AllReduce, DataType::F32, 0, false, 0};
  EXPECT_FALSE(isStaged(none, gpus.chosen({Collective::AllReduce, DataType::F32, 8 * kMiB, false, 0}), kStaged));
  EXPECT_EQ(predictCall(none, gpus.chosen(small), gpus.fabric, gpus.context, kStaged, testModel()).timeUs, 0);
  const CallParts parts = callParts(small, gpus.chosen(small), gpus.fabric, gpus.context, kStaged, testModel());
  EXPECT_EQ(parts.kernels.size(), 1u);
  EXPECT_EQ(parts.copies(), 0);
}

// 128 MiB of f32 through 64 MiB windows: an all-reduce chunk holds its send and recv regions in half a window, so
// 8 chunks of 16 MiB; the call chooses split_two_shot, its chunks the kernel of a 16 MiB call. Serially the model
// sums each chunk's copies and kernel.
TEST(PlanProcesses, AStagedCallIsCutAsTheCommunicatorCutsIt) {
  const TwoGpus gpus;
  const std::size_t count = 32 * kMiB;  // elements: 128 MiB
  const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
  const CollectiveChoice choice = gpus.chosen(call);
  ASSERT_EQ(choice.kernel, Kernel::SplitTwoShot);
  ASSERT_TRUE(isStaged(call, choice, kStaged));
  const std::size_t most = coll::stagedChunkCount(Collective::AllReduce, 2, 4, coll::stagingHalfBytes(kWindow));
  ASSERT_EQ(most, 4 * kMiB);
  ASSERT_EQ(count / most, 8u);
  ASSERT_EQ(count % most, 0u);

  const CallParts parts = callParts(call, choice, gpus.fabric, gpus.context, kSerial, testModel());
  ASSERT_EQ(parts.kernels.size(), 8u);
  EXPECT_FALSE(parts.pipelined);
  EXPECT_TRUE(callParts(call, choice, gpus.fabric, gpus.context, kStaged, testModel()).pipelined);
  const Call chunk{Collective::AllReduce, DataType::F32, most, false, 0};
  const Kernel chunkKernel = gpus.chosen(chunk).kernel;
  for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(parts.kernels[k].kernel, chunkKernel) << k;
  EXPECT_EQ(parts.copies(), 16);
  // Every byte copied in and out, each copy reading and writing it.
  EXPECT_NEAR(parts.copyBytesUs(), 2.0 * 2 * count * 4 / (kH200MemoryGBps * 1e3), 1e-9);

  const double kernels = 8 * predictChoice(chunk, gpus.chosen(chunk), gpus.fabric, testModel()).timeUs;
  const Prediction p = predictCall(call, choice, gpus.fabric, gpus.context, kSerial, testModel());
  EXPECT_NEAR(p.timeUs, kernels + 8 * 0.75 + 16 * 1.25 + parts.copyBytesUs() / 0.5, 1e-6);
  EXPECT_NEAR(p.timeUs, p.fixedUs + p.dataUs, 1e-9);
  EXPECT_EQ(p.kernel, Kernel::SplitTwoShot);  // what the communicator reports for the call
  EXPECT_NE(p.phase.find("through the staging windows: 8 chunk(s), 16 copies one after another"), std::string::npos)
      << p.phase;
  // In place the same: the copies still run (the windows are apart from the caller's buffer).
  const Call inPlace{Collective::AllReduce, DataType::F32, count, true, 0};
  EXPECT_NEAR(predictCall(inPlace, choice, gpus.fabric, gpus.context, kSerial, testModel()).timeUs, p.timeUs, 1e-9);
}

// Pipelined (the communicator's default), the copies of chunk k-1 (out) and k+1 (in) run beside chunk k's kernel.
// Where every kernel outlasts the copies beside it, the call takes the first copy in, every kernel and the last copy
// out: the serial time less the other 7 chunks' copies in and out, which the kernels hide. A call of one chunk has
// nothing to overlap: the same as serial.
TEST(PlanProcesses, PipelinedStagingHidesTheCopiesBesideTheKernels) {
  const TwoGpus gpus;
  const Call call{Collective::AllReduce, DataType::F32, 32 * kMiB, false, 0};
  const CollectiveChoice choice = gpus.chosen(call);
  const CallParts parts = callParts(call, choice, gpus.fabric, gpus.context, kStaged, testModel());
  ASSERT_EQ(parts.kernels.size(), 8u);
  const double copyUs = 1.25 + *parts.copyIn.front() / 0.5;  // every chunk's copy in and out alike here
  ASSERT_NEAR(1.25 + *parts.copyOut.front() / 0.5, copyUs, 1e-9);
  const double kernelUs = parts.kernels.front().timeUs + 0.75;
  ASSERT_GT(kernelUs, 2 * copyUs);  // the kernels set the pace

  const Prediction serial = predictCall(call, choice, gpus.fabric, gpus.context, kSerial, testModel());
  const Prediction pipelined = predictCall(call, choice, gpus.fabric, gpus.context, kStaged, testModel());
  EXPECT_NEAR(pipelined.timeUs, copyUs + 8 * kernelUs + copyUs, 1e-6);
  EXPECT_NEAR(serial.timeUs - pipelined.timeUs, 7 * 2 * copyUs, 1e-6);
  EXPECT_NEAR(pipelined.timeUs, pipelined.fixedUs + pipelined.dataUs, 1e-9);  // the critical path's operations
  EXPECT_NE(pipelined.phase.find("through the staging windows: 8 chunk(s), 16 copies beside the kernels"),
            std::string::npos)
      << pipelined.phase;
  EXPECT_EQ(pipelined.bottleneck, serial.bottleneck);  // the kernels' link, as serially here

  // Copies 40 times slower than the kernels: the copy stream sets the pace, without a gap, and every kernel runs
  // beside it (the last beside the copy out of the chunk before).
  CostModel slowCopies = testModel();
  slowCopies.stagingCopy.efficiency = 0.5 * copyUs / (40 * kernelUs);
  const double slowCopyUs = 1.25 + *parts.copyIn.front() / slowCopies.stagingCopy.efficiency;
  const Prediction copyBound = predictCall(call, choice, gpus.fabric, gpus.context, kStaged, slowCopies);
  EXPECT_NEAR(copyBound.timeUs, 16 * slowCopyUs, 1e-6);
  EXPECT_NEAR(predictCall(call, choice, gpus.fabric, gpus.context, kSerial, slowCopies).timeUs - copyBound.timeUs,
              8 * kernelUs, 1e-6);
  EXPECT_EQ(copyBound.bottleneck, "GPU 0 memory") << copyBound.bottleneck;

  // 8 MiB: one chunk, run serially whatever the setting.
  const Call one{Collective::AllReduce, DataType::F32, 2 * kMiB, false, 0};
  const CollectiveChoice oneChoice = gpus.chosen(one);
  ASSERT_EQ(callParts(one, oneChoice, gpus.fabric, gpus.context, kStaged, testModel()).kernels.size(), 1u);
  const Prediction onePipelined = predictCall(one, oneChoice, gpus.fabric, gpus.context, kStaged, testModel());
  EXPECT_DOUBLE_EQ(onePipelined.timeUs,
                   predictCall(one, oneChoice, gpus.fabric, gpus.context, kSerial, testModel()).timeUs);
  EXPECT_NE(onePipelined.phase.find("1 chunk(s), 2 copies one after another"), std::string::npos) << onePipelined.phase;
}

// A broadcast's root copies in, the others copy out: one copy each way per chunk, of the chunk's bytes.
TEST(PlanProcesses, RootedCallsCopyOnlyWhereTheyHaveData) {
  const TwoGpus gpus;
  const std::size_t count = 4 * kMiB;
  const Call call{Collective::Broadcast, DataType::F32, count, false, 1};
  const CollectiveChoice choice = gpus.chosen(call);
  ASSERT_TRUE(isStaged(call, choice, kStaged)) << kernelName(choice.kernel);
  const CallParts parts = callParts(call, choice, gpus.fabric, gpus.context, kStaged, testModel());
  EXPECT_EQ(parts.kernels.size(), 1u);  // a broadcast chunk holds send and recv: 16 MiB fits half a window
  EXPECT_EQ(parts.copies(), 2);
  EXPECT_NEAR(parts.copyBytesUs(), 2.0 * 2 * count * 4 / (kH200MemoryGBps * 1e3), 1e-9);
  // Each side's copy is the rank's that has one: the root's in, the other's out.
  ASSERT_EQ(parts.copyIn.size(), 1u);
  EXPECT_TRUE(parts.copyIn.front().has_value());
  EXPECT_TRUE(parts.copyOut.front().has_value());
}

// With the peers' parts only: a two-shot all-reduce chunk of 2 ranks copies half its bytes each way, a broadcast
// only the root's copy in; and the call is faster than with every byte staged.
TEST(PlanProcesses, StagingThePeersPartsOnlyCopiesWhatThePeersTouch) {
  const TwoGpus gpus;
  const std::size_t count = 32 * kMiB;
  const Call call{Collective::AllReduce, DataType::F32, count, false, 0};
  const CollectiveChoice choice = gpus.chosen(call);
  const CallParts all = callParts(call, choice, gpus.fabric, gpus.context, kStaged, testModel());
  const CallParts peers = callParts(call, choice, gpus.fabric, gpus.context, kStagedPeersParts, testModel());
  ASSERT_EQ(peers.kernels.size(), 8u);
  const Call chunk{Collective::AllReduce, DataType::F32, count / 8, false, 0};
  ASSERT_EQ(gpus.chosen(chunk).kernel, Kernel::TwoShot);
  EXPECT_EQ(peers.copies(), 16);
  EXPECT_NEAR(peers.copyBytesUs(), all.copyBytesUs() / 2, 1e-9);
  EXPECT_LT(predictCall(call, choice, gpus.fabric, gpus.context, kStagedPeersParts, testModel()).timeUs,
            predictCall(call, choice, gpus.fabric, gpus.context, kStaged, testModel()).timeUs);

  const Call broadcast{Collective::Broadcast, DataType::F32, 4 * kMiB, false, 1};
  const CallParts rooted =
      callParts(broadcast, gpus.chosen(broadcast), gpus.fabric, gpus.context, kStagedPeersParts, testModel());
  EXPECT_EQ(rooted.copies(), 1);
  EXPECT_TRUE(rooted.copyIn.front().has_value());
  EXPECT_FALSE(rooted.copyOut.front().has_value()) << "every rank reads the root's input into its own output";
}

TEST(PlanProcesses, TheModesWindowIsTheCommunicatorsByDefault) {
  EXPECT_EQ(ProcessMode{}.stagingWindowBytes, coll::stagingWindowBytes(Params()));
}

TEST(PlanProcesses, TheCostsAreReadWrittenAndAnOldModelPredictsOneProcess) {
  nlohmann::json document = costModelToJson(testModel());
  const CostModel read = costModelFromJson(document, "test");
  EXPECT_DOUBLE_EQ(read.processUs, 0.75);
  EXPECT_DOUBLE_EQ(read.stagingCopy.launchUs, 1.25);
  EXPECT_DOUBLE_EQ(read.stagingCopy.efficiency, 0.5);
  document.erase("process_us");
  document.erase("staging_copy");
  const CostModel old = costModelFromJson(document, "test");
  EXPECT_EQ(old.processUs, 0);
  EXPECT_EQ(old.stagingCopy.source, "prior");
  document["staging_copy"] = {{"launch_us", 1}, {"efficiency", 2}};
  EXPECT_TRUE(testing::contains(testing::errorOf(ErrorCode::InvalidInput, [&] { costModelFromJson(document, "m"); }),
                                "staging_copy: efficiency 2 is more than 1.5x"));
  document.erase("staging_copy");
  document["process_us"] = -1;
  EXPECT_TRUE(testing::contains(testing::errorOf(ErrorCode::InvalidInput, [&] { costModelFromJson(document, "m"); }),
                                "process_us = -1 is not a non-negative number"));
}

}  // namespace
}  // namespace peerlink::plan
