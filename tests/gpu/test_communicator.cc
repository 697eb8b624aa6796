// The communicator on real GPUs: creation (and its time), then every collective x data type x op x size
// class (0, 1, a count not divisible by the ranks, ~1000, ~1M) in place and out of place, called in rank
// order and in reverse, under every PEERLINK_ALGO and PEERLINK_PROTO, checked against the closed-form host reference
// (src/coll/host_reduce.hpp) with guard bytes; one 64M-element case per collective; ring calls back to back on
// shared buffers (the rings' neighbour start).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "coll_lists.hpp"
#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

constexpr const auto& kTypes = kEveryDataType;
constexpr const auto& kOps = kEveryReduceOp;
constexpr const auto& kCollectives = kEveryCollective;

TEST(Communicator, CreatesOnEveryGpuAndReportsCreationTime) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  for (int round = 0; round < 2; ++round) {  // the first includes the CUDA contexts' creation
    const auto start = std::chrono::steady_clock::now();
    Communicator comm(devices, paramsWith({}));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("communicator of %zu GPUs created in %.1f ms (%s; target <= 500 ms)\n", devices.size(), ms,
                round == 0 ? "first in the process" : "again");
    RecordProperty(round == 0 ? "creation_ms_first" : "creation_ms_again", std::to_string(ms));
    ASSERT_EQ(comm.size(), static_cast<int>(devices.size()));
    for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(comm.device(r), devices[static_cast<std::size_t>(r)]);
    EXPECT_THROW(comm.device(comm.size()), Error);
    EXPECT_FALSE(comm.describeChoice(Collective::AllReduce, 8).empty());
    comm.checkHealth();
  }
}

TEST(Communicator, RejectsBadDeviceLists) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  const auto codeOf = [](const std::vector<int>& list) {
    try {
      Communicator comm(list, paramsWith({}));
    } catch (const Error& error) {
      return error.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(codeOf({}), ErrorCode::InvalidUsage);
  EXPECT_EQ(codeOf({0, 0}), ErrorCode::InvalidUsage);
  EXPECT_EQ(codeOf({0, 99}), ErrorCode::InvalidUsage);
  EXPECT_EQ(codeOf({-1}), ErrorCode::InvalidUsage);
}

// (configuration, collective): every type, op, size class, in place and not. A configuration is a
// PEERLINK_ALGO value, PROTO_LL / PROTO_LL128 / PROTO_SIMPLE for PEERLINK_PROTO (so small messages run every
// protocol), PUSH for PEERLINK_COLL_PUSH=1 (every reduction past LL through the push kernel), or CE / CE_RING
// for PEERLINK_COLL_CE=1 (all-gather, all-to-all and all-reduce past LL on the copy engines; CE_RING with
// PEERLINK_ALGO=RING: the ring all-reduce's gather too).
class CommunicatorCorrectness : public ::testing::TestWithParam<std::tuple<const char*, Collective>> {};

Params paramsOfConfiguration(const std::string& configuration) {
  const std::string proto = "PROTO_";
  if (configuration.rfind(proto, 0) == 0) return paramsWith({{"PEERLINK_PROTO", configuration.substr(proto.size())}});
  if (configuration == "PUSH") return paramsWith({{"PEERLINK_COLL_PUSH", "1"}});
  if (configuration == "CE") return paramsWith({{"PEERLINK_COLL_CE", "1"}});
  if (configuration == "CE_RING") return paramsWith({{"PEERLINK_COLL_CE", "1"}, {"PEERLINK_ALGO", "RING"}});
  return paramsWith({{"PEERLINK_ALGO", configuration}});
}

TEST_P(CommunicatorCorrectness, MatchesHostReference) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  const auto [algorithm, collective] = GetParam();
  Communicator comm(devices, paramsOfConfiguration(algorithm));
  const int n = comm.size();
  // 20011: several LL blocks for every type; 100003: several LL lines per thread for 4- and 8-byte types
  // (more lines than one block per SM holds).
  const std::vector<std::size_t> counts = {0, 1, static_cast<std::size_t>(2 * n + 1), 1003, 20011, 100003};
  std::uint64_t seed = 1;
  int cases = 0;
  for (const DataType type : kTypes) {
    for (const ReduceOp op : kOps) {
      if (!reduces(collective) && op != ReduceOp::Sum) continue;
      if (!reduceOpSupported(type, op)) continue;
      for (const std::size_t count : counts) {
        for (const bool inPlace : {false, true}) {
          CollCase c;
          c.collective = collective;
          c.type = type;
          c.op = op;
          c.count = count;
          c.root = static_cast<int>(seed % static_cast<std::uint64_t>(n));
          c.inPlace = inPlace;
          c.reverseOrder = seed % 3 == 0;
          c.seed = seed++;
          ASSERT_EQ(runCase(comm, c), "");
          ++cases;
        }
      }
      // ~1M elements (not a multiple of the ranks or of 16 bytes) for sum and max of every type, and 1 Mi
      // (a multiple of 16 bytes: the ring reduce-scatter runs only where every block starts on one).
      if (op == ReduceOp::Sum || op == ReduceOp::Max) {
        for (const std::size_t count : {(std::size_t{1} << 20) + 5, std::size_t{1} << 20}) {
          CollCase c;
          c.collective = collective;
          c.type = type;
          c.op = op;
          c.count = count;
          c.root = n - 1;
          c.inPlace = seed % 2 == 0;
          c.seed = seed++;
          ASSERT_EQ(runCase(comm, c), "");
          ++cases;
        }
      }
    }
  }
  std::printf("%s with %s: %d cases passed (4 KiB: %s; 1 MiB: %s)\n", collectiveName(collective), algorithm, cases,
              comm.describeChoice(collective, 4096).c_str(), comm.describeChoice(collective, 1 << 20).c_str());
}

std::string caseName(const ::testing::TestParamInfo<CommunicatorCorrectness::ParamType>& param) {
  return std::string(std::get<0>(param.param)) + "_" + collectiveName(std::get<1>(param.param));
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, CommunicatorCorrectness,
                         ::testing::Combine(::testing::Values("AUTO", "ONESHOT", "TWOSHOT", "RING", "PROTO_LL",
                                                              "PROTO_LL128", "PROTO_SIMPLE", "PUSH", "CE", "CE_RING"),
                                            ::testing::ValuesIn(kCollectives)),
                         caseName);

// 64M elements in every rank's largest buffer, per collective, with the automatic choice.
class CommunicatorLarge : public ::testing::TestWithParam<Collective> {};

TEST_P(CommunicatorLarge, SixtyFourMillionElements) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  const Collective collective = GetParam();
  Communicator comm(devices, paramsWith({}));
  const auto n = static_cast<std::size_t>(comm.size());
  const std::size_t elements = std::size_t{64} << 20;
  const bool perRankBlocks = collective == Collective::AllGather || collective == Collective::ReduceScatter ||
                             collective == Collective::AllToAll;
  for (const bool inPlace : {false, true}) {
    CollCase c;
    c.collective = collective;
    c.type = reduces(collective) ? DataType::F32 : DataType::I32;
    c.op = ReduceOp::Sum;
    c.count = perRankBlocks ? elements / n : elements;
    c.root = 1;
    c.inPlace = inPlace;
    c.seed = inPlace ? 77 : 78;
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(runCase(comm, c), "");
    std::printf("%s: %.1f s including the host reference\n", c.describe().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

std::string collectiveCaseName(const ::testing::TestParamInfo<Collective>& param) {
  return collectiveName(param.param);
}

INSTANTIATE_TEST_SUITE_P(EveryCollective, CommunicatorLarge, ::testing::ValuesIn(kCollectives), collectiveCaseName);

// Several collectives queued by one rank before the others call: matched by order, launched in order.
TEST(Communicator, RanksMayRunAheadBySeveralCalls) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({}));
  const int n = comm.size();
  const std::vector<Stream> streams = rankStreams(comm);
  constexpr std::size_t kCount = 4099;
  std::vector<DeviceBuffer> buffers;
  for (int r = 0; r < n; ++r) {
    buffers.push_back(filled(comm.device(r), kCount * sizeof(float), 0));
    std::vector<float> ones(kCount, 1.0f);
    copyToDevice(buffers.back().data(), ones.data(), kCount * sizeof(float));
  }
  constexpr int kCalls = 5;  // in place: 1 -> n -> n^2 -> ...
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < kCalls; ++k) {
      const std::size_t count = k % 2 == 0 ? kCount : 16;  // alternate LL and sizes, all in place
      comm.allReduce(r, buffers[static_cast<std::size_t>(r)].data(), buffers[static_cast<std::size_t>(r)].data(), count,
                     DataType::F32, ReduceOp::Sum, streams[static_cast<std::size_t>(r)].get());
    }
  }
  ASSERT_EQ(finishAll(comm, streams), "");
  double headWant = 1;
  double tailWant = 1;
  for (int k = 0; k < kCalls; ++k) {
    headWant *= n;
    if (k % 2 == 0) tailWant *= n;
  }
  for (int r = 0; r < n; ++r) {
    std::vector<float> got(kCount);
    PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), buffers[static_cast<std::size_t>(r)].data(), kCount * sizeof(float),
                                   cudaMemcpyDeviceToHost));
    EXPECT_EQ(got[0], static_cast<float>(headWant)) << "rank " << r;
    EXPECT_EQ(got[kCount - 1], static_cast<float>(tailWant)) << "rank " << r;
  }
}

// Eager calls repeating their arguments exactly (the launch graph then skips its update) still run each
// time, and a call with other arguments in between is not replaced by the repeated ones: in-place
// all-reduces of buffer a three times, b once, a twice more -- a ends at n^5, b at n.
TEST(Communicator, EagerCallsWithRepeatedArgumentsEachRun) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({}));
  const int n = comm.size();
  const std::vector<Stream> streams = rankStreams(comm);
  for (const std::size_t count : {std::size_t{5}, std::size_t{300000}}) {  // LL, and a direct kernel
    std::vector<DeviceBuffer> a;
    std::vector<DeviceBuffer> b;
    const std::vector<float> ones(count, 1.0f);
    for (int r = 0; r < n; ++r) {
      for (auto* buffers : {&a, &b}) {
        buffers->push_back(DeviceBuffer(comm.device(r), count * sizeof(float)));
        copyToDevice(buffers->back().data(), ones.data(), count * sizeof(float));
      }
    }
    const auto allReduce = [&](std::vector<DeviceBuffer>& buffers) {
      for (int r = 0; r < n; ++r) {
        void* data = buffers[static_cast<std::size_t>(r)].data();
        comm.allReduce(r, data, data, count, DataType::F32, ReduceOp::Sum, streams[static_cast<std::size_t>(r)].get());
      }
    };
    for (int k = 0; k < 3; ++k) allReduce(a);
    allReduce(b);
    for (int k = 0; k < 2; ++k) allReduce(a);
    ASSERT_EQ(finishAll(comm, streams), "");
    const auto nf = static_cast<float>(n);
    const float n5 = nf * nf * nf * nf * nf;
    for (int r = 0; r < n; ++r) {
      for (const auto& [buffers, want] : {std::pair{&a, n5}, std::pair{&b, nf}}) {
        std::vector<float> got(count);
        PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), (*buffers)[static_cast<std::size_t>(r)].data(),
                                       count * sizeof(float), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(got[i], want) << count << " elements, rank " << r << ", element " << i;
        }
      }
    }
  }
}

namespace {

// Every collective of a communicator built with `params`, each into an output of its own, called back to
// back `repeats` times over (out of place, so each call leaves the same output), at an LL size, a
// direct-kernel size and a size the ring reduce takes; send/recv as a ring. u32 inputs that depend on rank
// and element, so every output element says where it came from. Returns every output of every rank.
std::vector<std::vector<unsigned char>> everyCollectiveBackToBack(const std::vector<int>& devices, const Params& params,
                                                                  int repeats) {
  constexpr int kCollectives = 7;
  Communicator comm(devices, params);
  const int n = comm.size();
  const auto un = static_cast<std::size_t>(n);
  const std::vector<Stream> streams = rankStreams(comm);
  std::vector<std::vector<unsigned char>> outputs;
  for (const std::size_t count : {std::size_t{1000}, std::size_t{300000}, std::size_t{5} << 20}) {
    const std::size_t bytes = count * un * sizeof(std::uint32_t);  // all-gather's and all-to-all's n blocks
    std::vector<DeviceBuffer> send;
    std::vector<std::vector<DeviceBuffer>> recv(kCollectives);  // [collective][rank]
    for (int r = 0; r < n; ++r) {
      std::vector<std::uint32_t> values(count * un);
      for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<std::uint32_t>(i * 7 + 1000003u * static_cast<std::size_t>(r));
      }
      send.push_back(DeviceBuffer(comm.device(r), bytes));
      copyToDevice(send.back().data(), values.data(), bytes);
      for (auto& outputsOf : recv) outputsOf.push_back(filled(comm.device(r), bytes, 0));
    }
    for (int call = 0; call < kCollectives * repeats; ++call) {
      const int which = call % kCollectives;
      comm.groupStart();
      for (int r = 0; r < n; ++r) {
        const auto i = static_cast<std::size_t>(r);
        const void* in = send[i].data();
        void* out = recv[static_cast<std::size_t>(which)][i].data();
        const cudaStream_t stream = streams[i].get();
        switch (which) {
          case 0: comm.allReduce(r, in, out, count, DataType::U32, ReduceOp::Sum, stream); break;
          case 1: comm.broadcast(r, in, out, count, DataType::U32, 1 % n, stream); break;
          case 2: comm.reduce(r, in, out, count, DataType::U32, ReduceOp::Max, n - 1, stream); break;
          case 3: comm.allGather(r, in, out, count, DataType::U32, stream); break;
          case 4: comm.reduceScatter(r, in, out, count, DataType::U32, ReduceOp::Sum, stream); break;
          case 5: comm.allToAll(r, in, out, count, DataType::U32, stream); break;
          default:
            comm.send(r, in, count, DataType::U32, (r + 1) % n, stream);
            comm.recv(r, out, count, DataType::U32, (r + n - 1) % n, stream);
            break;
        }
      }
      comm.groupEnd();
    }
    EXPECT_EQ(finishAll(comm, streams), "");
    for (const auto& outputsOf : recv) {
      for (const DeviceBuffer& buffer : outputsOf) {
        std::vector<unsigned char> got(bytes);
        PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), buffer.data(), bytes, cudaMemcpyDeviceToHost));
        outputs.push_back(std::move(got));
      }
    }
  }
  return outputs;
}

}  // namespace

// Eager sets launched from the communicator's launch threads (kept awake for 10 s, so every set takes them)
// leave every output as the calling thread's launches do (no launch threads): the same kernels on the same
// streams in the same order, only from other threads. The calling thread's outputs are checked against host
// references by the correctness tests.
TEST(Communicator, LaunchThreadsLeaveWhatTheCallingThreadLeaves) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  if (std::thread::hardware_concurrency() <= devices.size()) {
    GTEST_SKIP() << "this machine has " << std::thread::hardware_concurrency() << " CPU cores for " << devices.size()
                 << " GPUs: the communicator makes no launch threads (it needs more cores than ranks)";
  }
  const auto threaded =
      everyCollectiveBackToBack(devices, paramsWith({{"PEERLINK_COLL_LAUNCH_THREADS", "10000000"}}), 3);
  const auto calling = everyCollectiveBackToBack(devices, paramsWith({{"PEERLINK_COLL_LAUNCH_THREADS", "0"}}), 3);
  ASSERT_EQ(threaded.size(), calling.size());
  for (std::size_t k = 0; k < threaded.size(); ++k) {
    ASSERT_EQ(threaded[k].size(), calling[k].size());
    const auto mismatch = std::mismatch(threaded[k].begin(), threaded[k].end(), calling[k].begin());
    EXPECT_TRUE(mismatch.first == threaded[k].end())
        << "output " << k << " (size class " << k / (7 * devices.size()) << ", collective " << k / devices.size() % 7
        << ", rank " << k % devices.size() << ") differs at byte " << (mismatch.first - threaded[k].begin());
  }
}

// Send/recv groups in which every rank sends to every rank, itself included, counts differing per pair and
// one pair of each rank empty (on 3+ GPUs), queued back to back with no host wait: small groups (LL lines,
// some one after another: a sender reuses a slot once its receiver has started the set after the slot's
// last), medium ones (the receivers' SM kernels) and large ones (32 MiB per pair: the copy engines) under
// AUTO, and every group on the copy engines (PEERLINK_COLL_CE=1). The forms take turns on the same pair
// counters, so a form that counted them differently would stall the next group; u32 values name the group,
// sender, receiver and element.
TEST(CommunicatorSendRecv, EveryFormOnTheSamePairsBackToBack) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  for (const char* copyEngine : {"AUTO", "1"}) {
    Communicator comm(devices, paramsWith({{"PEERLINK_COLL_CE", copyEngine}}));
    const int n = comm.size();
    const auto un = static_cast<std::size_t>(n);
    const std::vector<Stream> streams = rankStreams(comm);
    // 32 MiB per pair in the large groups: a rank sends 96 MiB on 4 GPUs (64 MiB on 2).
    // 20000 per pair: a rank sends ~320 KB, past what a pair's slot of LL lines holds (256 KiB).
    const std::vector<std::size_t> bases = {1000, (std::size_t{8} << 20) + 1, 3,     20000, 500,
                                            700,  std::size_t{8} << 20,       20001, 9,     1};
    const auto countOf = [&](std::size_t base, int from, int to) {
      return to == (from + 2) % n && n > 2
                 ? 0
                 : base + static_cast<std::size_t>(from) * 7 + static_cast<std::size_t>(to) * 3;
    };
    const auto valueOf = [](std::size_t group, int from, int to, std::size_t i) {
      return static_cast<std::uint32_t>(i * 2654435761u + group * 97u + static_cast<std::size_t>(from) * 31u +
                                        static_cast<std::size_t>(to) * 7u);
    };
    // [group][from][to]: the sender's buffer and the receiver's.
    std::vector<std::vector<std::vector<DeviceBuffer>>> sends(bases.size());
    std::vector<std::vector<std::vector<DeviceBuffer>>> recvs(bases.size());
    for (std::size_t g = 0; g < bases.size(); ++g) {
      sends[g].resize(un);
      recvs[g].resize(un);
      for (int from = 0; from < n; ++from) {
        for (int to = 0; to < n; ++to) {
          const std::size_t count = countOf(bases[g], from, to);
          const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(std::uint32_t);
          std::vector<std::uint32_t> values(std::max<std::size_t>(count, 1));
          for (std::size_t i = 0; i < values.size(); ++i) values[i] = valueOf(g, from, to, i);
          sends[g][static_cast<std::size_t>(from)].push_back(DeviceBuffer(comm.device(from), bytes));
          copyToDevice(sends[g][static_cast<std::size_t>(from)].back().data(), values.data(), bytes);
          recvs[g][static_cast<std::size_t>(from)].push_back(filled(comm.device(to), bytes, 0xee));
        }
      }
    }
    for (std::size_t g = 0; g < bases.size(); ++g) {
      comm.groupStart();
      for (int r = 0; r < n; ++r) {
        const cudaStream_t stream = streams[static_cast<std::size_t>(r)].get();
        for (int p = 0; p < n; ++p) {
          comm.send(r, sends[g][static_cast<std::size_t>(r)][static_cast<std::size_t>(p)].data(),
                    countOf(bases[g], r, p), DataType::U32, p, stream);
          comm.recv(r, recvs[g][static_cast<std::size_t>(p)][static_cast<std::size_t>(r)].data(),
                    countOf(bases[g], p, r), DataType::U32, p, stream);
        }
      }
      comm.groupEnd();
    }
    ASSERT_EQ(finishAll(comm, streams), "") << "PEERLINK_COLL_CE=" << copyEngine;
    const std::size_t largest = bases[1] * (n > 2 ? un - 1 : un) * sizeof(std::uint32_t);
    std::printf("PEERLINK_COLL_CE=%s, a rank sending %zu bytes: %s\n", copyEngine, largest,
                comm.describeChoice(Collective::SendRecv, largest).c_str());
    for (std::size_t g = 0; g < bases.size(); ++g) {
      for (int from = 0; from < n; ++from) {
        for (int to = 0; to < n; ++to) {
          const std::size_t count = countOf(bases[g], from, to);
          std::vector<std::uint32_t> got(std::max<std::size_t>(count, 1));
          PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(),
                                         recvs[g][static_cast<std::size_t>(from)][static_cast<std::size_t>(to)].data(),
                                         got.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
          for (std::size_t i = 0; i < count; ++i) {
            ASSERT_EQ(got[i], valueOf(g, from, to, i)) << "PEERLINK_COLL_CE=" << copyEngine << ", group " << g
                                                       << ", rank " << from << " to " << to << ", element " << i;
          }
          if (count == 0) {
            EXPECT_EQ(got[0], 0xeeeeeeeeu) << "an empty send wrote into rank " << to;
          }
        }
      }
    }
  }
}

// Ring calls queued back to back, no host wait between them, on buffers each call's successor reads or
// overwrites across ranks. A ring broadcast stores into the next rank's buffer once that rank has started
// the call (the neighbour start), so before each broadcast every rank's stream first sleeps (a host function,
// 20 ms longer for each position further from the root along the chain) and then refills its buffer from
// the host: a predecessor that stored before its successor's refill had ended would see its data
// overwritten, and the successor would pass the refill on. Between the broadcasts, reduces and all-reduces
// read what the broadcasts wrote. Everything is queued before the host computes the expected values, so the
// GPUs run the calls back to back. In place, u32 sums (exact), roots moving, forced onto the rings; 16 MiB + 12
// bytes per call (several rounds per block).
TEST(CommunicatorRing, BackToBackCallsOnSharedBuffers) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  constexpr std::size_t kCount = (std::size_t{4} << 20) + 3;
  constexpr std::size_t kBytes = kCount * sizeof(std::uint32_t);
  constexpr int kSteps = 12;  // reduce, broadcast after a refill, all-reduce; four times, roots moving
  const auto rootOf = [](int step, int n) { return (step * 3 + step / 3) % n; };
  {
    Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", "RING"}}));
    const int n = comm.size();
    const auto rankCount = static_cast<std::size_t>(n);
    const std::vector<Stream> streams = rankStreams(comm);
    std::mt19937_64 random(static_cast<std::uint64_t>(n) * 1000 + 1);
    const auto randomWords = [&](std::uint32_t* words) {
      for (std::size_t i = 0; i < kCount; ++i) words[i] = static_cast<std::uint32_t>(random());
    };
    std::vector<std::vector<std::uint32_t>> want(rankCount, std::vector<std::uint32_t>(kCount));
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < n; ++r) {
      randomWords(want[static_cast<std::size_t>(r)].data());
      buffers.emplace_back(comm.device(r), kBytes);
      copyToDevice(buffers.back().data(), want[static_cast<std::size_t>(r)].data(), kBytes);
    }
    // refills[step / 3 * n + rank], made before anything is queued.
    std::vector<PinnedBuffer> refills;
    for (int k = 0; k < kSteps / 3 * n; ++k) {
      refills.emplace_back(kBytes);
      randomWords(static_cast<std::uint32_t*>(refills.back().data()));
    }
    const auto refillOf = [&](int step, int r) {
      return static_cast<std::uint32_t*>(refills[static_cast<std::size_t>(step / 3 * n + r)].data());
    };
    std::vector<int> sleepMs(rankCount);
    for (int step = 0; step < kSteps; ++step) {
      const int root = rootOf(step, n);
      for (int position = 0; position < n; ++position) {
        const int r = (root + position) % n;
        void* data = buffers[static_cast<std::size_t>(r)].data();
        cudaStream_t stream = streams[static_cast<std::size_t>(r)].get();
        switch (step % 3) {
          case 0: comm.reduce(r, data, data, kCount, DataType::U32, ReduceOp::Sum, root, stream); break;
          case 1:
            // Host functions may run one after another on one driver thread: 20 ms per position apart
            // either way, far longer than queueing the calls takes.
            sleepMs[static_cast<std::size_t>(r)] = 20 * position;
            PEERLINK_CUDA_CHECK(cudaLaunchHostFunc(
                stream,
                [](void* ms) { std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int*>(ms))); },
                &sleepMs[static_cast<std::size_t>(r)]));
            PEERLINK_CUDA_CHECK(cudaMemcpyAsync(data, refillOf(step, r), kBytes, cudaMemcpyHostToDevice, stream));
            comm.broadcast(r, data, data, kCount, DataType::U32, root, stream);
            break;
          default: comm.allReduce(r, data, data, kCount, DataType::U32, ReduceOp::Sum, stream); break;
        }
      }
    }
    // The expected values, while the GPUs run.
    const auto sumOfRanks = [&] {
      std::vector<std::uint32_t> sum(kCount, 0);
      for (const auto& x : want) {
        for (std::size_t i = 0; i < kCount; ++i) sum[i] += x[i];
      }
      return sum;
    };
    std::string steps;
    for (int step = 0; step < kSteps; ++step) {
      const int root = rootOf(step, n);
      switch (step % 3) {
        case 0:
          want[static_cast<std::size_t>(root)] = sumOfRanks();  // the others' buffers are only inputs
          steps += " reduce(" + std::to_string(root) + ")";
          break;
        case 1: {
          const std::uint32_t* refill = refillOf(step, root);
          for (auto& x : want) x.assign(refill, refill + kCount);
          steps += " refill+broadcast(" + std::to_string(root) + ")";
          break;
        }
        default: {
          const std::vector<std::uint32_t> sum = sumOfRanks();
          for (auto& x : want) x = sum;
          steps += " all-reduce";
          break;
        }
      }
    }
    ASSERT_EQ(finishAll(comm, streams), "");
    for (int r = 0; r < n; ++r) {
      std::vector<std::uint32_t> got(kCount);
      PEERLINK_CUDA_CHECK(
          cudaMemcpy(got.data(), buffers[static_cast<std::size_t>(r)].data(), kBytes, cudaMemcpyDeviceToHost));
      const auto& x = want[static_cast<std::size_t>(r)];
      const auto wrong = std::mismatch(got.begin(), got.end(), x.begin());
      ASSERT_TRUE(wrong.first == got.end())
          << "rank " << r << ", element " << (wrong.first - got.begin()) << " of " << kCount << ": got " << *wrong.first
          << ", want " << *wrong.second << " after" << steps;
    }
    std::printf("%d back-to-back ring calls correct on %d ranks (%s; %s; %s)\n", kSteps, n,
                comm.describeChoice(Collective::Reduce, kBytes).c_str(),
                comm.describeChoice(Collective::Broadcast, kBytes).c_str(),
                comm.describeChoice(Collective::AllReduce, kBytes).c_str());
  }
}

}  // namespace
}  // namespace peerlink::testing
