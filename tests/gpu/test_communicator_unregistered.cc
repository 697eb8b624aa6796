// The path of calls on unregistered buffers across processes (comm_launch_staged.hpp), forced in one process
// (PEERLINK_COLL_STAGE_UNREGISTERED) with 2-4 ranks sharing the machine's first one or two GPUs
// (PEERLINK_COLL_SHARE_GPUS): every collective through the staging windows in one chunk, two and three (half a
// window each, the halves by turns, the copies pipelined -- ON -- or one after another -- SERIAL; each rank
// copying only the parts its peers touch, its own kernel using the caller's buffers for the rest -- the default --
// or every byte -- ALL, PEERLINK_COLL_STAGE_COPIES=ALL, pipelined), counts not
// divisible by the ranks, a small call that stays in LL lines, in place and out of place, buffers off 16-byte
// boundaries, eager and captured in a CUDA graph replayed with new inputs, against the host reference.
// Across processes the same path runs in test_communicator_processes.cc. What these measure is not speed. Its
// counts grow with the staging window: with the default 128 MiB windows the 54 cases took over 300 s on 2x H200
// (call y6) before the graph replays -- give a device step 450 s, or split it by filter (`*2ranks*`, `*Graph*`).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "coll/comm_setup.hpp"
#include "coll/communicator_access.hpp"
#include "coll/staging_plan.hpp"
#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

constexpr Collective kStagedCollectives[] = {Collective::AllReduce, Collective::Broadcast,     Collective::Reduce,
                                             Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll};

// Ranks 0..n-1 on the machine's first GPU, or its first two by turns.
std::vector<int> sharedDevices(int ranks) {
  return gpusByTurns(ranks, 2);
}

// ON or SERIAL (PEERLINK_COLL_STAGE_UNREGISTERED), or ALL: ON with every byte staged. The arena ring off: it would
// take these calls (test_communicator_arena_ring.cc tests it).
Params stagedParams(const std::string& mode) {
  if (mode == "ALL") {
    return paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"},
                       {"PEERLINK_COLL_STAGE_UNREGISTERED", "ON"},
                       {"PEERLINK_COLL_ARENA_RING", "OFF"},
                       {"PEERLINK_COLL_STAGE_COPIES", "ALL"}});
  }
  return paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"},
                     {"PEERLINK_COLL_STAGE_UNREGISTERED", mode},
                     {"PEERLINK_COLL_ARENA_RING", "OFF"}});
}

// The most elements of one chunk of `collective` on `n` ranks: half a staging window holds its send and recv.
std::size_t chunkCount(Collective collective, int n, DataType type) {
  return coll::stagedChunkCount(collective, n, dataTypeSize(type),
                                coll::stagingHalfBytes(coll::stagingWindowBytes(Params())));
}

// Counts that take 1, 2 and 3 chunks or more, each one more than a multiple of the ranks (a call of more than
// 16 MiB is cut into at least one chunk per 16 MiB, up to four: staging_plan.hpp).
struct ChunkedCount {
  std::size_t count;
  std::size_t chunks;  ///< the fewest it takes
};
std::vector<ChunkedCount> chunkedCounts(Collective collective, int n, DataType type) {
  const std::size_t most = chunkCount(collective, n, type);
  const auto ranks = static_cast<std::size_t>(n);
  const auto offMultiple = [ranks](std::size_t count) { return count / ranks * ranks + 1; };
  return {{offMultiple(most / 2), 1}, {offMultiple(most + ranks), 2}, {offMultiple(2 * most + ranks), 3}};
}

// (ranks, ON, SERIAL or ALL, collective)
class UnregisteredPath : public ::testing::TestWithParam<std::tuple<int, const char*, Collective>> {};

TEST_P(UnregisteredPath, MatchesHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, mode, collective] = GetParam();
  Communicator comm(sharedDevices(ranks), stagedParams(mode));
  const std::size_t n = static_cast<std::size_t>(ranks);
  int cases = 0;
  std::uint64_t seed = 29;
  // A call small enough for LL lines on the callers' own buffers (no window), then the staged ones.
  std::vector<ChunkedCount> counts = {{1, 0}, {2 * n + 1, 0}};
  for (const ChunkedCount& chunked : chunkedCounts(collective, ranks, DataType::F32)) counts.push_back(chunked);
  for (const ChunkedCount& chunked : counts) {
    const std::size_t bytes = chunked.count * sizeof(float);
    const std::string choice = comm.describeChoice(collective, bytes);
    if (chunked.chunks > 0) {
      EXPECT_NE(choice.find("through the staging windows"), std::string::npos)
          << chunked.count << " elements would not be staged, so the case tests nothing here: " << choice;
      const std::vector<coll::StagedChunk> cut =
          coll::stagedChunks(collective, ranks, 0, 0, chunked.count, sizeof(float), coll::stagingWindowBytes(Params()));
      EXPECT_GE(cut.size(), chunked.chunks) << chunked.count << " elements";
    }
    for (const bool inPlace : {false, true}) {
      for (const std::size_t misalign : {std::size_t{0}, std::size_t{4}}) {
        if (misalign > 0 && (inPlace || chunked.chunks == 0)) continue;
        CollCase c;
        c.collective = collective;
        c.type = DataType::F32;
        c.op = ReduceOp::Sum;
        c.count = chunked.count;
        c.root = static_cast<int>(seed % n);
        c.inPlace = inPlace;
        c.misalign = misalign;
        c.reverseOrder = seed % 2 == 0;
        c.seed = seed++;
        ASSERT_EQ(runCase(comm, c), "") << ranks << " ranks, " << mode << ", " << chunked.chunks << " chunk(s)";
        ++cases;
      }
    }
  }
  // A reduction in another type and op, in three chunks.
  if (reduces(collective)) {
    CollCase c;
    c.collective = collective;
    c.type = DataType::BF16;
    c.op = ReduceOp::Avg;
    c.count = chunkedCounts(collective, ranks, DataType::BF16).back().count;
    c.seed = seed++;
    ASSERT_EQ(runCase(comm, c), "") << ranks << " ranks, " << mode << ", bf16 avg";
    ++cases;
  }
  std::printf("%d ranks, %s, %s: %d cases passed (3 chunks: %s)\n", ranks, mode, collectiveName(collective), cases,
              comm.describeChoice(collective, counts.back().count * sizeof(float)).c_str());
}

std::string caseName(const ::testing::TestParamInfo<UnregisteredPath::ParamType>& param) {
  return std::to_string(std::get<0>(param.param)) + "ranks_" + std::get<1>(param.param) + "_" +
         collectiveName(std::get<2>(param.param));
}

INSTANTIATE_TEST_SUITE_P(Forced, UnregisteredPath,
                         ::testing::Combine(::testing::Values(2, 3, 4), ::testing::Values("ON", "SERIAL", "ALL"),
                                            ::testing::ValuesIn(kStagedCollectives)),
                         caseName);

// Three chunks of `collective` on `ranks` ranks staged as `mode` says, captured in one graph over the ranks, replayed
// with new inputs and eager calls between (replayCase), out of place and in place.
void replayStagedCase(int ranks, Collective collective, const std::string& mode) {
  for (const bool inPlace : {false, true}) {
    CollCase c;
    c.collective = collective;
    c.count = chunkedCounts(collective, ranks, DataType::F32).back().count;
    c.root = ranks - 1;
    c.inPlace = inPlace;
    c.seed = 71 + (inPlace ? 1 : 0);
    replayCase(sharedDevices(ranks), stagedParams(mode), c);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// (ranks, collective): pipelined (the copies on each rank's copy stream, forked from the captured stream).
class UnregisteredPathGraph : public ::testing::TestWithParam<std::tuple<int, Collective>> {};

TEST_P(UnregisteredPathGraph, ReplaysMatchHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, collective] = GetParam();
  replayStagedCase(ranks, collective, "ON");
}

// (ranks, collective): serially (every copy on the captured stream itself).
class UnregisteredPathGraphSerial : public ::testing::TestWithParam<std::tuple<int, Collective>> {};

TEST_P(UnregisteredPathGraphSerial, ReplaysMatchHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, collective] = GetParam();
  replayStagedCase(ranks, collective, "SERIAL");
}

std::string graphCaseName(const ::testing::TestParamInfo<UnregisteredPathGraph::ParamType>& param) {
  return std::to_string(std::get<0>(param.param)) + "ranks_" + collectiveName(std::get<1>(param.param));
}

INSTANTIATE_TEST_SUITE_P(Forced, UnregisteredPathGraph,
                         ::testing::Combine(::testing::Values(2, 4), ::testing::ValuesIn(kStagedCollectives)),
                         graphCaseName);
INSTANTIATE_TEST_SUITE_P(Forced, UnregisteredPathGraphSerial,
                         ::testing::Combine(::testing::Values(2), ::testing::ValuesIn(kStagedCollectives)),
                         graphCaseName);

// A graph the application captures over many staged broadcasts of many chunks stays a chain: the non-root copies
// nothing (it keeps its own parts), and its kernels run alone rather than through a copy stream that would hand each
// of them the dependencies of every kernel before it (a 2 MiB window, 16 chunks a call, 10 calls captured: some
// 13,000 edges that way, under 4 a node this way). The replay's outputs match the reference.
TEST(UnregisteredPathCapture, ManyStagedBroadcastsStayAChain) {
  PEERLINK_REQUIRE_GPUS(1);
  const Params params = paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"},
                                    {"PEERLINK_COLL_STAGE_UNREGISTERED", "ON"},
                                    {"PEERLINK_COLL_ARENA_RING", "OFF"},
                                    {"PEERLINK_COLL_STAGING_WINDOW", "2097152"}});
  Communicator comm(sharedDevices(2), params);
  CollCase c;
  c.collective = Collective::Broadcast;
  c.root = 0;
  c.count = 16 * coll::stagedChunkCount(Collective::Broadcast, 2, dataTypeSize(c.type),
                                        coll::stagingHalfBytes(coll::stagingWindowBytes(params)));
  c.seed = 131;
  std::vector<coll::Bytes> inputs(2);
  for (int r = 0; r < 2; ++r) {
    inputs[static_cast<std::size_t>(r)] =
        randomElements(c.type, c.op, sendElementsOf(c.collective, 2, c.count, r, c.root), c.seed + r);
  }
  const std::vector<RankCase> ranks = prepareCase(comm, c, inputs);
  const std::vector<Stream> streams = rankStreams(comm);
  constexpr int kCalls = 10;
  Event fork(comm.device(0), cudaEventDisableTiming);
  Event join(comm.device(1), cudaEventDisableTiming);
  PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(streams[0].get(), cudaStreamCaptureModeGlobal));
  PEERLINK_CUDA_CHECK(cudaEventRecord(fork.get(), streams[0].get()));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[1].get(), fork.get(), 0));
  for (int call = 0; call < kCalls; ++call) {
    for (int r = 1; r >= 0; --r) {
      callRank(comm, c, r, ranks[static_cast<std::size_t>(r)], streams[static_cast<std::size_t>(r)].get());
    }
  }
  PEERLINK_CUDA_CHECK(cudaEventRecord(join.get(), streams[1].get()));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[0].get(), join.get(), 0));
  cudaGraph_t graph = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamEndCapture(streams[0].get(), &graph));
  std::size_t nodes = 0;
  std::size_t edges = 0;
  PEERLINK_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  PEERLINK_CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  std::printf("%d broadcasts of %zu elements through a 2 MiB window: %zu nodes, %zu edges\n", kCalls, c.count, nodes,
              edges);
  EXPECT_GE(nodes, static_cast<std::size_t>(2 * 16 * kCalls)) << "every chunk's kernel on both ranks";
  EXPECT_LE(edges, 4 * nodes);
  cudaGraphExec_t exec = nullptr;
  PEERLINK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PEERLINK_CUDA_CHECK(cudaGraphDestroy(graph));
  PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[0].get()));
  EXPECT_EQ(finishAll(comm, streams), "");
  PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
  const auto expected = coll::hostReduceReference(c.collective, c.type, c.op, 2, c.count, c.root, inputs);
  EXPECT_EQ(checkOutputs(comm, c, ranks, expected), "");
}

// (ranks, collective): the same eager call on the same buffers five times with new inputs -- the second captured
// into a graph per rank, the later ones replayed from it (staged_graphs.hpp) -- with a call of another shape
// between, out of place and in place. Buffers freed and allocated again may come back at the same addresses, and a
// call on them then replays the graph of the earlier buffers (rightly: a graph holds addresses only), so each set
// of buffers counts its own calls: at most one capture, and every call after the first captured or replayed.
class UnregisteredPathRepeated : public ::testing::TestWithParam<std::tuple<int, Collective>> {};

TEST_P(UnregisteredPathRepeated, ReplayedCallsMatchHostReference) {
  PEERLINK_REQUIRE_GPUS(1);
  const auto [ranks, collective] = GetParam();
  // It counts the graphs: on, whatever the environment says.
  Communicator comm(sharedDevices(ranks), paramsWith({{"PEERLINK_COLL_SHARE_GPUS", "1"},
                                                      {"PEERLINK_COLL_STAGE_UNREGISTERED", "ON"},
                                                      {"PEERLINK_COLL_ARENA_RING", "OFF"},
                                                      {"PEERLINK_COLL_STAGE_GRAPHS", "ON"}}));
  const auto n = static_cast<std::size_t>(ranks);
  for (const bool inPlace : {false, true}) {
    CollCase c;
    c.collective = collective;
    c.count = chunkedCounts(collective, ranks, DataType::F32)[1].count;  // two chunks or more
    c.root = ranks - 1;
    c.inPlace = inPlace;
    c.seed = 91 + (inPlace ? 1 : 0);
    std::vector<coll::Bytes> inputs(n);
    for (std::size_t r = 0; r < n; ++r) {
      inputs[r] = randomElements(c.type, c.op, sendElementsOf(collective, ranks, c.count, static_cast<int>(r), c.root),
                                 c.seed + r);
    }
    const std::vector<RankCase> buffers = prepareCase(comm, c, inputs);
    const std::vector<Stream> streams = rankStreams(comm);
    using Counts = coll::CommunicatorAccess::StagedGraphCounts;
    const Counts before = coll::CommunicatorAccess::stagedGraphCounts(comm);
    Counts others;  // what the call of another shape added
    for (int call = 0; call < 5; ++call) {
      for (std::size_t r = 0; r < n && call > 0; ++r) {
        inputs[r] = randomElements(c.type, c.op, inputs[r].size() / dataTypeSize(c.type), c.seed + 100 * call + r);
        if (!inputs[r].empty()) uploadInput(buffers[r].send, inputs[r]);
      }
      for (const int r : comm.localRanks()) {
        callRank(comm, c, r, buffers[static_cast<std::size_t>(r)], streams[static_cast<std::size_t>(r)].get());
      }
      ASSERT_EQ(finishAll(comm, streams), "") << "call " << call;
      const auto expected = coll::hostReduceReference(collective, c.type, c.op, ranks, c.count, c.root, inputs);
      ASSERT_EQ(checkOutputs(comm, c, buffers, expected), "") << "call " << call << " of " << c.describe();
      if (call == 2) {  // another shape between: its own buffers, run eagerly
        CollCase other = c;
        other.count = c.count / 3 + 1;
        other.inPlace = false;
        other.seed = c.seed + 7;
        const Counts start = coll::CommunicatorAccess::stagedGraphCounts(comm);
        ASSERT_EQ(runCase(comm, other), "") << "a call of another shape after call " << call;
        const Counts end = coll::CommunicatorAccess::stagedGraphCounts(comm);
        others = {end.captures - start.captures, end.replays - start.replays};
      }
    }
    const Counts after = coll::CommunicatorAccess::stagedGraphCounts(comm);
    const std::uint64_t captures = after.captures - before.captures - others.captures;
    const std::uint64_t replays = after.replays - before.replays - others.replays;
    EXPECT_LE(captures, 1u) << c.describe() << ": one graph for the five calls";
    EXPECT_GE(captures + replays, 4u) << c.describe() << ": every call after the first captured or replayed";
    EXPECT_GE(replays, 3u) << c.describe();
    std::printf("%d ranks, %s, %s: %llu captures, %llu replays\n", ranks, collectiveName(collective),
                inPlace ? "in place" : "out of place", static_cast<unsigned long long>(captures),
                static_cast<unsigned long long>(replays));
  }
}

INSTANTIATE_TEST_SUITE_P(Forced, UnregisteredPathRepeated,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::ValuesIn(kStagedCollectives)),
                         graphCaseName);

}  // namespace
}  // namespace peerlink::testing
