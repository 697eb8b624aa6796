// The communicator inside CUDA graphs (every rank's stream captured into one graph, replayed several times
// with new inputs between replays, mixed with eager calls: the kernels' own counters must advance; the
// copy-engine collectives' copies and forked branches too; calls back to back, each reading the previous
// one's result, which programmatic dependent launch must not break), the deadline path (one rank's stream
// held by a latch: the others report Error(Timeout) naming it and the step, and the communicator works again
// once the late kernel is done; LL, barriers, copy engines, the ring's data and the ring reduce's end and
// stage waits), and a latency report for small all-reduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "coll_test_support.hpp"
#include "kernels/device_status.cuh"
#include "kernels/latch_kernel.cuh"

namespace peerlink::testing {
namespace {

TEST(CommunicatorGraph, AllReduceReplaysSmallAndLarge) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  for (const char* algorithm : {"AUTO", "ONESHOT", "TWOSHOT"}) {
    for (const std::size_t count : {std::size_t{2}, std::size_t{5000}, std::size_t{3} << 20}) {
      CollCase c;
      c.count = count;
      c.seed = count;
      replayCase(devices, paramsWith({{"PEERLINK_ALGO", algorithm}}), c);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(CommunicatorGraph, EveryCollectiveReplays) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  for (const Collective collective : {Collective::Broadcast, Collective::Reduce, Collective::AllGather,
                                      Collective::ReduceScatter, Collective::AllToAll, Collective::SendRecv}) {
    for (const std::size_t count : {std::size_t{300}, std::size_t{1} << 20}) {
      CollCase c;
      c.collective = collective;
      c.type = DataType::BF16;
      c.op = ReduceOp::Max;
      c.count = count;
      c.root = 1;
      c.seed = count + static_cast<std::size_t>(collective);
      replayCase(devices, paramsWith({}), c);
      if (HasFatalFailure()) return;
    }
  }
}

// The copy-engine collectives (PEERLINK_COLL_CE=1) in graphs: their copies become memcpy nodes on a branch
// forked from and joined to the rank's stream; all-reduce's shards gathered after the direct reduce-scatter
// (AUTO: two-shot at 12 MiB) and after the ring (RING); send/recv's pushes between its barriers; the odd
// count leaves uneven shards and a tail.
TEST(CommunicatorGraph, CopyEngineCollectivesReplay) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  for (const Collective collective :
       {Collective::AllGather, Collective::AllToAll, Collective::AllReduce, Collective::SendRecv}) {
    for (const char* algorithm : {"AUTO", "RING"}) {
      if (algorithm == std::string("RING") && collective != Collective::AllReduce) continue;
      for (const std::size_t count : {std::size_t{3} << 20, (std::size_t{3} << 20) + 7}) {
        CollCase c;
        c.collective = collective;
        c.type = DataType::F32;
        c.count = count;
        c.seed = count + static_cast<std::size_t>(collective);
        replayCase(devices, paramsWith({{"PEERLINK_ALGO", algorithm}, {"PEERLINK_COLL_CE", "1"}}), c);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// In-place all-reduces of one buffer back to back in one captured graph, each reading what the one before
// wrote, then the graph replayed: with programmatic dependent launch (PEERLINK_COLL_PDL, on by default on
// compute capability 9.0+) each kernel may start while the previous one finishes, so a kernel that touched
// memory before awaiting it would read stale data here. Sizes run LL, two-shot and ring kernels (forced
// RING too); i32 sums stay exact: S * n^(k-1) after k calls, S the sum of the ranks' inputs.
TEST(CommunicatorGraph, BackToBackCallsSeeThePreviousResult) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  constexpr int kCallsPerGraph = 4;
  constexpr int kReplays = 2;
  for (const std::string configuration : {"AUTO", "RING", "AUTO+CE", "RING+CE"}) {
    const std::string algorithm = configuration.substr(0, configuration.find('+'));
    const std::string copyEngine = configuration.find("+CE") != std::string::npos ? "1" : "AUTO";
    Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", algorithm}, {"PEERLINK_COLL_CE", copyEngine}}));
    const int n = comm.size();
    const std::vector<Stream> streams = rankStreams(comm);
    for (const std::size_t count : {std::size_t{5}, std::size_t{40000}, std::size_t{3} << 20, std::size_t{72} << 20}) {
      const auto inputOf = [](int rank, std::size_t i) { return static_cast<std::int32_t>((i * 7 + rank * 3) % 4); };
      std::vector<DeviceBuffer> buffers;
      for (int r = 0; r < n; ++r) {
        std::vector<std::int32_t> input(count);
        for (std::size_t i = 0; i < count; ++i) input[i] = inputOf(r, i);
        buffers.push_back(DeviceBuffer(comm.device(r), count * sizeof(std::int32_t)));
        copyToDevice(buffers.back().data(), input.data(), count * sizeof(std::int32_t));
      }
      cudaGraphExec_t exec = captureAll(comm, streams, [&] {
        for (int call = 0; call < kCallsPerGraph; ++call) {
          for (int r = 0; r < n; ++r) {
            void* data = buffers[static_cast<std::size_t>(r)].data();
            comm.allReduce(r, data, data, count, DataType::I32, ReduceOp::Sum,
                           streams[static_cast<std::size_t>(r)].get());
          }
        }
      });
      for (int replay = 0; replay < kReplays; ++replay) {
        PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[0].get()));
        ASSERT_EQ(finishAll(comm, streams), "") << configuration << ", " << count << " elements, replay " << replay;
      }
      PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
      std::int32_t scale = 1;
      for (int k = 1; k < kCallsPerGraph * kReplays; ++k) scale *= n;
      for (int r = 0; r < n; ++r) {
        const std::vector<unsigned char> bytes = downloaded(buffers[static_cast<std::size_t>(r)]);
        const auto* got = reinterpret_cast<const std::int32_t*>(bytes.data());
        for (std::size_t i = 0; i < count; ++i) {
          std::int32_t sum = 0;
          for (int q = 0; q < n; ++q) sum += inputOf(q, i);
          ASSERT_EQ(got[i], sum * scale) << configuration << ", " << count << " elements: rank " << r << ", element "
                                         << i << " (" << comm.describeChoice(Collective::AllReduce, count * 4) << ")";
        }
      }
    }
  }
}

// What stallOneRank runs: `calls` calls of `collective` (an all-reduce, a reduce to rank 0, or a send/recv
// group in which every rank sends to the next) of `count` floats on every rank, the late rank's behind its latch, under
// PEERLINK_ALGO=`algorithm`, PEERLINK_COLL_CE=`copyEngine` and PEERLINK_PROTO=`protocol`; `step`, where given, is the
// step (collStepName's words) at which a record must name the late rank.
struct Stall {
  const char* algorithm;
  std::size_t count;
  const char* step = nullptr;
  const char* copyEngine = "AUTO";
  Collective collective = Collective::AllReduce;
  int calls = 1;
  const char* protocol = "AUTO";
  const char* hostStaged = "";  ///< PEERLINK_COLL_HOST_STAGED: "all" runs the staged plans and the host ring
};

// One rank's stream is held by a latch longer than the deadline: the other ranks' kernels give up and the
// error names the held rank (and, given a step, names that step); once the latch opens and every kernel has
// finished, the communicator works. The records are read until one names the late rank (at the step) or
// 10 s pass: a later call's record (the second of two calls) replaces its rank's first one a deadline later.
void stallOneRank(const std::vector<int>& devices, const Stall& stall) {
  Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", stall.algorithm},
                                         {"PEERLINK_TIMEOUT_MS", "300"},
                                         {"PEERLINK_COLL_CE", stall.copyEngine},
                                         {"PEERLINK_PROTO", stall.protocol},
                                         {"PEERLINK_COLL_HOST_STAGED", stall.hostStaged}}));
  const int n = comm.size();
  const int late = n - 1;
  const std::size_t count = stall.count;
  const std::vector<Stream> streams = rankStreams(comm);
  PinnedBuffer latchMemory(sizeof(std::uint64_t) + sizeof(kernels::DeviceStatus),
                           cudaHostAllocMapped | cudaHostAllocPortable);
  auto* open = new (latchMemory.data()) std::uint64_t{0};
  auto* latchStatus = new (static_cast<unsigned char*>(latchMemory.data()) + sizeof(std::uint64_t))
      kernels::DeviceStatus{kernels::pendingStatus()};
  std::vector<DeviceBuffer> buffers;
  std::vector<DeviceBuffer> received;  // send/recv's
  for (int r = 0; r < n; ++r) {
    buffers.push_back(filled(comm.device(r), count * sizeof(float), 0));
    received.push_back(filled(comm.device(r), count * sizeof(float), 0));
  }
  on(comm.device(late), [&] { kernels::launchLatch(open, 20'000'000'000ull, latchStatus, streams[late].get()); });
  const bool group = stall.collective == Collective::SendRecv;
  for (int call = 0; call < stall.calls; ++call) {
    if (group) comm.groupStart();
    for (int r = 0; r < n; ++r) {
      void* data = buffers[static_cast<std::size_t>(r)].data();
      cudaStream_t stream = streams[static_cast<std::size_t>(r)].get();
      if (stall.collective == Collective::Reduce) {
        comm.reduce(r, data, data, count, DataType::F32, ReduceOp::Sum, 0, stream);
      } else if (group) {
        comm.send(r, data, count, DataType::F32, (r + 1) % n, stream);
        comm.recv(r, received[static_cast<std::size_t>(r)].data(), count, DataType::F32, (r + n - 1) % n, stream);
      } else {
        comm.allReduce(r, data, data, count, DataType::F32, ReduceOp::Sum, stream);
      }
    }
    if (group) comm.groupEnd();
  }
  const std::string lateRank = "waited for rank " + std::to_string(late);
  const std::string wanted = stall.step == nullptr ? lateRank
                                                   : lateRank + " (GPU " + std::to_string(comm.device(late)) +
                                                         ") at the " + stall.step + " (block";
  std::string message;
  const Clock::time_point start = Clock::now();
  while (message.find(wanted) == std::string::npos && secondsSince(start) < 10) {
    try {
      comm.checkHealth();
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Timeout);
      message += (message.empty() ? "" : "; ") + std::string(error.what());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *static_cast<volatile std::uint64_t*>(open) = 1;
  const std::string what = std::string(stall.algorithm) + " " + collectiveName(stall.collective) + " x" +
                           std::to_string(stall.calls) + ", " + std::to_string(count) + " elements";
  ASSERT_FALSE(message.empty()) << what << ": no Error(Timeout) within 10 s of a 300 ms deadline";
  std::printf("%s: %s\n", what.c_str(), message.c_str());
  EXPECT_NE(message.find(wanted), std::string::npos) << what << ": no record says '" << wanted << "': " << message;
  for (const Stream& stream : streams) ASSERT_TRUE(finishes(stream.get(), 10)) << what << ": a kernel is still running";
  try {
    comm.checkHealth();  // the late rank may report its own stall (its peers left before it came)
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Timeout);
    std::printf("after the latch opened: %s\n", error.what());
  }
  CollCase c;
  c.count = count;
  c.seed = 4242;
  EXPECT_EQ(runCase(comm, c), "") << what << ": the communicator is not usable after the timeout";
}

TEST(CommunicatorDeadline, StalledRankBecomesTimeoutNamingIt) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  stallOneRank(devices, {"ONESHOT", 1000, "LL data"});
  stallOneRank(devices, {"TWOSHOT", 1 << 20, "start barrier"});
  stallOneRank(devices, {"TWOSHOT", 1 << 20, nullptr, "1"});  // the copy-engine two-shot: copies between kernels
  // The rank after the late one waits there; on two ranks that rank's next is the late one, whose start it awaits
  // first (neighborStart).
  stallOneRank(devices, {"RING", 4 << 20, devices.size() == 2 ? "ring start" : "ring data"});
  // Send/recv on the copy engines: the late rank's neighbours wait for it at the first barrier kernel.
  stallOneRank(devices, {"AUTO", 4 << 20, "start barrier", "1", Collective::SendRecv});
  // Send/recv in LL lines: the late rank's successor waits for its lines; in the second group its predecessor
  // waits for it to start the first before reusing the slot (named as the start barrier).
  stallOneRank(devices, {"AUTO", 1000, "LL data", "AUTO", Collective::SendRecv});
  stallOneRank(devices, {"AUTO", 1000, "start barrier", "AUTO", Collective::SendRecv, 2});
}

// Every pair through host memory: 4 MiB runs as the host ring, whose ranks wait for their neighbours' slots only, so
// the rank after the late one names it and the message says a ring's named rank may itself be waiting.
TEST(CommunicatorDeadline, StalledHostRingNamesTheLateRank) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  stallOneRank(devices, {"AUTO", 1 << 20, "host ring", "AUTO", Collective::AllReduce, 1, "AUTO", "all"});
  stallOneRank(devices, {"AUTO", 1 << 20, "host ring", "AUTO", Collective::Reduce, 2, "AUTO", "all"});
}

// The ring reduce to rank 0 (chain 1 -> 2 -> 3 -> 0 on four ranks) with rank 3 late: two chunks in all (16
// KiB, SIMPLE so not LL), so no block waits for a free slot and ranks 1 and 2 wait at the kernel's end for rank
// 3 to start; 16 MiB twice, so rank 2 gives up on the first call waiting for rank 3 to free a slot, then
// waits at the second's start for rank 3 to release its stage.
TEST(CommunicatorDeadline, StalledRingReduceNamesItsStep) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  if (devices.size() < 3) GTEST_SKIP() << "the chain needs a rank between the head and the late rank";
  stallOneRank(devices, {"RING", 4096, "ring end", "AUTO", Collective::Reduce, 1, "SIMPLE"});
  stallOneRank(devices, {"RING", 4 << 20, "ring stage", "AUTO", Collective::Reduce, 2, "SIMPLE"});
}

// Not a performance gate: prints small all-reduce times, eager and in a graph (all ranks' kernels).
TEST(CommunicatorLatency, SmallAllReduceReport) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({}));
  const int n = comm.size();
  const std::vector<Stream> streams = rankStreams(comm);
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{4096}, std::size_t{65536}}) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < n; ++r) buffers.push_back(filled(comm.device(r), 2 * bytes, 0));
    const auto callAll = [&] {
      for (int r = 0; r < n; ++r) {
        auto* base = static_cast<unsigned char*>(buffers[static_cast<std::size_t>(r)].data());
        comm.allReduce(r, base, base + bytes, count, DataType::F32, ReduceOp::Sum,
                       streams[static_cast<std::size_t>(r)].get());
      }
    };
    constexpr int kIterations = 200;
    for (int i = 0; i < 20; ++i) callAll();
    ASSERT_EQ(finishAll(comm, streams), "");
    const Clock::time_point eagerStart = Clock::now();
    for (int i = 0; i < kIterations; ++i) callAll();
    ASSERT_EQ(finishAll(comm, streams), "");
    const double eagerUs = secondsSince(eagerStart) * 1e6 / kIterations;
    cudaGraphExec_t exec = captureAll(comm, streams, [&] {
      for (int i = 0; i < kIterations; ++i) callAll();
    });
    PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[0].get()));
    ASSERT_EQ(finishAll(comm, streams), "");
    const Clock::time_point graphStart = Clock::now();
    PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[0].get()));
    ASSERT_EQ(finishAll(comm, streams), "");
    const double graphUs = secondsSince(graphStart) * 1e6 / kIterations;
    PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
    std::printf("all-reduce %zu B on %d GPUs: %.2f us per call eager, %.2f us in a graph (%s)\n", bytes, n, eagerUs,
                graphUs, comm.describeChoice(Collective::AllReduce, bytes).c_str());
  }
}

}  // namespace
}  // namespace peerlink::testing
