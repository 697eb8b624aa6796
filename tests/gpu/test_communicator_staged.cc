// Communicators whose pairs go through pinned host memory, as on machines without working P2P: every pair
// (PEERLINK_COLL_HOST_STAGED=all) or some (one pair forced, the others direct), so the staged plans run on the plan
// executor here too. Every collective against the host reference, several types and ops, in place and out of place,
// sizes from 0 elements (LL lines through host memory up to 256 KiB) to calls past the stages; replays of captured
// graphs; what describeChoice says. Ranks take the GPUs round-robin and share them where there are fewer GPUs than
// ranks (PEERLINK_COLL_SHARE_GPUS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "coll/comm_launch_plan.hpp"
#include "coll/comm_state.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/plan_program.hpp"
#include "coll/segment_plans.hpp"
#include "coll_lists.hpp"
#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

std::vector<int> roundRobin(int ranks) {
  return gpusByTurns(ranks, 4);
}

Params stagedParams(const std::string& pairs) {
  return paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"}, {"PEERLINK_COLL_HOST_STAGED", pairs}});
}

// A count whose data is larger than the communicator's 32 MiB stages (f32): its plan reuses every stage slot many
// times over (plan_slots.hpp). Calls of several segments are longer still: StagedSpeed's 1 GiB all-reduce is one.
std::size_t pastTheStages(Collective collective, int ranks) {
  const bool blocks = collective == Collective::AllGather || collective == Collective::ReduceScatter ||
                      collective == Collective::AllToAll;
  return blocks ? (std::size_t{9} << 20) / static_cast<std::size_t>(ranks) + 5 : (std::size_t{9} << 20) + 5;
}

// (ranks, pairs forced through host memory, collective).
class StagedCorrectness : public ::testing::TestWithParam<std::tuple<int, const char*, Collective>> {};

TEST_P(StagedCorrectness, MatchesHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, pairs, collective] = GetParam();
  Communicator comm(roundRobin(ranks), stagedParams(pairs));
  const std::string choice = comm.describeChoice(collective, 1 << 20);
  ASSERT_NE(choice.find("staged plan"), std::string::npos) << choice;
  std::printf("[describeChoice] %s\n", choice.c_str());
  const std::size_t n = static_cast<std::size_t>(ranks);
  const std::vector<std::size_t> counts = {
      0, 1, 2 * n + 1, 1003, 100003, (std::size_t{1} << 20) + 5, pastTheStages(collective, ranks)};
  const std::vector<std::pair<DataType, ReduceOp>> kinds = {{DataType::F32, ReduceOp::Sum},
                                                            {DataType::BF16, ReduceOp::Avg},
                                                            {DataType::I8, ReduceOp::Max},
                                                            {DataType::U64, ReduceOp::Prod},
                                                            {DataType::F64, ReduceOp::Min}};
  std::uint64_t seed = 23;
  int cases = 0;
  for (const auto& [type, op] : kinds) {
    const ReduceOp used = reduces(collective) ? op : ReduceOp::Sum;
    if (!reduceOpSupported(type, used)) continue;
    for (const std::size_t count : counts) {
      if (count > 100003 && type != DataType::F32) continue;  // the large counts once per collective
      for (const bool inPlace : {false, true}) {
        if (inPlace && (collective == Collective::AllToAll || collective == Collective::SendRecv)) continue;
        CollCase c;
        c.collective = collective;
        c.type = type;
        c.op = used;
        c.count = count;
        c.root = static_cast<int>(seed % n);
        c.inPlace = inPlace;
        c.reverseOrder = seed % 3 == 0;
        c.seed = seed++;
        ASSERT_EQ(runCase(comm, c), "") << ranks << " ranks, host-staged " << pairs;
        ++cases;
      }
    }
  }
  std::printf("%d ranks, host-staged %s, %s: %d cases passed (%s)\n", ranks, pairs, collectiveName(collective), cases,
              choice.c_str());
}

std::string caseName(const ::testing::TestParamInfo<StagedCorrectness::ParamType>& param) {
  std::string pairs = std::get<1>(param.param);
  std::replace(pairs.begin(), pairs.end(), '-', '_');
  std::replace(pairs.begin(), pairs.end(), ',', '_');
  return std::to_string(std::get<0>(param.param)) + "ranks_" + pairs + "_" + collectiveName(std::get<2>(param.param));
}

INSTANTIATE_TEST_SUITE_P(EveryPair, StagedCorrectness,
                         ::testing::Combine(::testing::Values(2, 3, 4, 8), ::testing::Values("all"),
                                            ::testing::ValuesIn(kEveryCollective)),
                         caseName);
// One pair through host memory, the others direct: rings that avoid the staged pair where they can.
INSTANTIATE_TEST_SUITE_P(OnePair, StagedCorrectness,
                         ::testing::Combine(::testing::Values(3, 4), ::testing::Values("0-2"),
                                            ::testing::ValuesIn(kEveryCollective)),
                         caseName);
// Two islands joined only through host memory (a dual-socket server): the ring crosses twice.
INSTANTIATE_TEST_SUITE_P(Islands, StagedCorrectness,
                         ::testing::Combine(::testing::Values(4), ::testing::Values("0-1,0-3,2-1,2-3"),
                                            ::testing::ValuesIn(kEveryCollective)),
                         caseName);

TEST(StagedGraph, ReplaysWithEagerCallsBetween) {
  PEERLINK_REQUIRE_GPUS(1);
  for (const Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter}) {
    for (const std::size_t count : {std::size_t{5000}, std::size_t{3} << 20}) {
      CollCase c;
      c.collective = collective;
      c.count = count;
      c.seed = count + static_cast<std::size_t>(collective);
      replayCase(roundRobin(4), stagedParams("all"), c);
      if (HasFatalFailure()) return;
    }
  }
}

// Send/recv groups of one process through host memory, each as it goes: in LL lines where every rank takes part with
// one message a pair of one size (a pair both ways, one way with a token back, the ring shift with a rank's message to
// itself), as staged plans otherwise (a rank left out, sizes that differ); one after another on one communicator, so
// the lines' call numbers and the plans' counters each keep step across the other's calls, twenty rounds (the lines'
// slots change parity every call).
TEST(StagedSendRecv, GroupsInLinesAndPlansByTurns) {
  PEERLINK_REQUIRE_GPUS(1);
  struct Message {
    int from;
    int to;
    std::size_t count;
  };
  const auto run = [&](Communicator& comm, const std::vector<Message>& messages, bool grouped, int round) {
    const std::vector<Stream> streams = rankStreams(comm);
    std::vector<DeviceBuffer> sends;
    std::vector<DeviceBuffer> recvs;
    std::vector<std::vector<float>> expected;
    for (std::size_t m = 0; m < messages.size(); ++m) {
      const Message& message = messages[m];
      std::vector<float> data(message.count);
      for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(round * 100000 + m * 1000 + i % 997);
      sends.emplace_back(comm.device(message.from), message.count * sizeof(float));
      copyToDevice(sends.back().data(), data.data(), data.size() * sizeof(float));
      recvs.push_back(filled(comm.device(message.to), message.count * sizeof(float), 0xff));
      expected.push_back(std::move(data));
    }
    if (grouped) comm.groupStart();
    for (std::size_t m = 0; m < messages.size(); ++m) {
      const Message& message = messages[m];
      const cudaStream_t from = streams[static_cast<std::size_t>(message.from)].get();
      const cudaStream_t to = streams[static_cast<std::size_t>(message.to)].get();
      comm.send(message.from, sends[m].data(), message.count, DataType::F32, message.to, from);
      comm.recv(message.to, recvs[m].data(), message.count, DataType::F32, message.from, to);
    }
    if (grouped) comm.groupEnd();
    const std::string unfinished = finishAll(comm, streams);
    if (!unfinished.empty()) return unfinished;
    for (std::size_t m = 0; m < messages.size(); ++m) {
      std::vector<float> got(messages[m].count);
      PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), recvs[m].data(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
      if (got != expected[m]) {
        return "message " + std::to_string(m) + " (" + std::to_string(messages[m].from) + " -> " +
               std::to_string(messages[m].to) + ") arrived wrong";
      }
    }
    return std::string();
  };
  Communicator two(roundRobin(2), stagedParams("all"));
  Communicator three(roundRobin(3), stagedParams("all"));
  const std::size_t small = 1000;                                // 4000 bytes: lines
  const std::size_t large = (coll::kPlanLlMaxBytes / 4) + 1000;  // past the lines: plans
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_EQ(run(two, {{0, 1, small}, {1, 0, small}}, true, round), "") << "a pair both ways, lines";
    ASSERT_EQ(run(two, {{0, 1, small}}, false, round), "") << "one way outside a group, lines with a token back";
    ASSERT_EQ(run(two, {{0, 1, small}, {1, 0, 2 * small}}, true, round), "") << "sizes that differ, plans";
    ASSERT_EQ(run(two, {{0, 1, large}, {1, 0, large}}, true, round), "") << "past the lines, plans";
    ASSERT_EQ(run(three, {{0, 1, small}, {1, 2, small}, {2, 0, small}, {1, 1, small}}, true, round), "")
        << "the ring shift and a message to itself, lines with tokens";
    ASSERT_EQ(run(three, {{0, 1, small}}, false, round), "") << "rank 2 left out, plans";
  }
}

TEST(StagedCommunicator, BadPairsAreRefusedAtCreation) {
  PEERLINK_REQUIRE_GPUS(1);
  for (const char* bad : {"0-4", "0-0", "zero-one"}) {
    try {
      Communicator comm(roundRobin(4), stagedParams(bad));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage) << error.what();
      EXPECT_NE(std::string(error.what()).find("PEERLINK_COLL_HOST_STAGED"), std::string::npos) << error.what();
    }
  }
}

// What the staged path moves on this machine, beside what the copy engines move in the same run: two ranks on GPU 0
// with every pair host-staged, all-reduces of 64 KiB to 1 GiB (each rank copies its data to the host and back once,
// so the GPU's link carries 2 x the size each way per call), against one copy engine each way at once over the same
// bytes. A report, not a bar: ranks sharing one GPU share its link. The results are checked (avg of ones stays ones).
TEST(StagedSpeed, AllReduceBesideTheCopyEngines) {
  PEERLINK_REQUIRE_GPUS(1);
  constexpr int kIterations = 5;
  Communicator comm({0, 0}, stagedParams("all"));
  std::vector<Stream> streams;
  for (int r = 0; r < 2; ++r) streams.emplace_back(0);
  // Time `iterations` rounds of `enqueue(stream 0, stream 1)` from a common start, in ms per round.
  const auto timeRounds = [&](int iterations, const std::function<void()>& enqueue) {
    Event start(0);
    Event end(0);
    Event other(0);
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
    PEERLINK_CUDA_CHECK(cudaEventRecord(start.get(), streams[0].get()));
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[1].get(), start.get(), 0));
    for (int i = 0; i < iterations; ++i) enqueue();
    PEERLINK_CUDA_CHECK(cudaEventRecord(other.get(), streams[1].get()));
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[0].get(), other.get(), 0));
    PEERLINK_CUDA_CHECK(cudaEventRecord(end.get(), streams[0].get()));
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(end.get()));
    float ms = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
    return static_cast<double>(ms) / iterations;
  };
  const bool oneKernel = Params::fromEnvironment().getBool("PEERLINK_COLL_STAGED_KERNEL");
  for (const std::size_t kib : {std::size_t{64}, std::size_t{256}, std::size_t{512}, std::size_t{1} << 10,
                                std::size_t{2} << 10, std::size_t{4} << 10, std::size_t{8} << 10, std::size_t{32} << 10,
                                std::size_t{128} << 10, std::size_t{256} << 10, std::size_t{1} << 20}) {
    const std::size_t bytes = kib << 10;
    const std::size_t count = bytes / sizeof(float);
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < 2; ++r) {
      buffers.emplace_back(0, bytes);
      std::vector<float> ones(count, 1.0f);
      copyToDevice(buffers.back().data(), ones.data(), bytes);
    }
    const auto allReduces = [&] {
      for (int r = 0; r < 2; ++r) {
        void* data = buffers[static_cast<std::size_t>(r)].data();
        comm.allReduce(r, data, data, count, DataType::F32, ReduceOp::Avg, streams[static_cast<std::size_t>(r)].get());
      }
    };
    timeRounds(1, allReduces);  // warm-up
    const double staged = timeRounds(kIterations, allReduces);
    comm.checkHealth();
    for (int r = 0; r < 2; ++r) {
      std::vector<float> got(count);
      PEERLINK_CUDA_CHECK(
          cudaMemcpy(got.data(), buffers[static_cast<std::size_t>(r)].data(), bytes, cudaMemcpyDeviceToHost));
      ASSERT_EQ(std::count(got.begin(), got.end(), 1.0f), static_cast<std::ptrdiff_t>(count))
          << kib << " KiB, rank " << r;
    }
    // The reference: 2 x the size to the host on one stream while 2 x the size come back on another.
    PinnedBuffer host(2 * bytes);
    DeviceBuffer device(0, 2 * bytes);
    const double copies = timeRounds(kIterations, [&] {
      PEERLINK_CUDA_CHECK(
          cudaMemcpyAsync(host.data(), buffers[0].data(), bytes, cudaMemcpyDeviceToHost, streams[0].get()));
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(host.data()) + bytes, buffers[1].data(), bytes,
                                          cudaMemcpyDeviceToHost, streams[0].get()));
      PEERLINK_CUDA_CHECK(
          cudaMemcpyAsync(device.data(), host.data(), 2 * bytes, cudaMemcpyHostToDevice, streams[1].get()));
    });
    const double linkGB = 2.0 * static_cast<double>(bytes) / 1e9;  // each way, per call
    std::string how = "LL lines through host memory";              // one kernel a rank
    const auto ringMax = static_cast<std::size_t>(Params::fromEnvironment().getInt("PEERLINK_COLL_HOST_RING"));
    if (coll::runsAsHostRing(Collective::AllReduce, count, DataType::F32, 2, ringMax)) {
      how = "the host ring";
    } else if (coll::plannedLineBytes(Collective::AllReduce, count, DataType::F32) == 0) {
      std::size_t steps = 0;  // and a barrier before the first of each plan
      for (const coll::StagedSegment& segment :
           coll::stagedSegments(Collective::AllReduce, 2, count, 0, DataType::F32,
                                coll::RankLinks::uniform(2, coll::PairWay::HostStaged),
                                coll::stagedChunkBytes(Params::fromEnvironment()), coll::kPlanStageBytes)) {
        steps += segment.plan.steps.size() + 1;
      }
      char text[160];
      std::snprintf(text, sizeof text, "%zu steps of %zu KiB chunks, %.1f us a step; %s", steps,
                    coll::stagedChunkBytes(Params::fromEnvironment()) >> 10, staged * 1e3 / static_cast<double>(steps),
                    coll::runsAsOneKernel(bytes, oneKernel) ? "one kernel a rank" : "step by step");
      how = text;
    }
    std::printf(
        "staged all-reduce of %zu KiB, 2 ranks on GPU 0: %.3f ms a call (%s), %.1f GB/s each way over the GPU's "
        "link; the copy engines, %zu KiB each way at once: %.3f ms, %.1f GB/s each way (staged %.2fx of them)\n",
        kib, staged, how.c_str(), linkGB / (staged / 1e3), 2 * kib, copies, linkGB / (copies / 1e3), copies / staged);
  }
}

}  // namespace
}  // namespace peerlink::testing
