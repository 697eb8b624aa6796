// The ring reduce-scatter's and all-reduce's chains keeping pace (PEERLINK_COLL_RING_PACE; colldev::keepPace in
// kernels/coll_ring_reduce.cu): results against the host's with pacing on and off, and the pace's waits seen
// through the ring kernels' trace (kernels::setCollTrace).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "coll_test_support.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::testing {
namespace {

constexpr std::size_t kTraceRecords = 256;  // more than a ring kernel's grid

// Every GPU's ring trace on for the guard's life, its records read back by `records`.
class RingTrace {
 public:
  explicit RingTrace(const Communicator& comm) : comm_(comm) {
    for (int r = 0; r < comm.size(); ++r) {
      buffers_.emplace_back(comm.device(r), kTraceRecords * sizeof(kernels::CollTraceRecord));
      DeviceGuard guard(comm.device(r));
      PEERLINK_CUDA_CHECK(cudaMemset(buffers_.back().data(), 0, buffers_.back().size()));
      kernels::setCollTrace(static_cast<kernels::CollTraceRecord*>(buffers_.back().data()));
    }
  }
  ~RingTrace() {
    for (int r = 0; r < comm_.size(); ++r) {
      DeviceGuard guard(comm_.device(r));
      kernels::setCollTrace(nullptr);
    }
  }
  RingTrace(const RingTrace&) = delete;
  RingTrace& operator=(const RingTrace&) = delete;

  // Cycles every block of rank r spent waiting on the pace in the latest ring reduce kernel.
  unsigned long long paceWait(int r) const {
    std::vector<kernels::CollTraceRecord> records(kTraceRecords);
    PEERLINK_CUDA_CHECK(cudaMemcpy(records.data(), buffers_[static_cast<std::size_t>(r)].data(),
                                   records.size() * sizeof(records[0]), cudaMemcpyDeviceToHost));
    unsigned long long total = 0;
    for (const auto& record : records) total += record.paceWait;
    return total;
  }

 private:
  const Communicator& comm_;
  std::vector<DeviceBuffer> buffers_;
};

// One call of `c` on every rank with rank `late`'s stream (-1: none) held by a 50 ms host sleep first;
// "" when every output matches the host's reference.
std::string runWithLateRank(Communicator& comm, const CollCase& c, int late) {
  const int n = comm.size();
  std::vector<coll::Bytes> inputs;
  for (int r = 0; r < n; ++r) {
    const std::size_t elements = coll::sendElementsOf(c.collective, n, c.count, r, c.root);
    inputs.push_back(randomElements(c.type, c.op, elements, c.seed * 1000003u + static_cast<std::uint64_t>(r)));
  }
  const std::vector<coll::Bytes> expected =
      coll::hostReduceReference(c.collective, c.type, c.op, n, c.count, c.root, inputs);
  const std::vector<RankCase> ranks = prepareCase(comm, c, inputs);
  const std::vector<Stream> streams = rankStreams(comm);
  if (late >= 0) {
    PEERLINK_CUDA_CHECK(cudaLaunchHostFunc(
        streams[static_cast<std::size_t>(late)].get(),
        [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, nullptr));
  }
  for (int r = 0; r < n; ++r) {
    callRank(comm, c, r, ranks[static_cast<std::size_t>(r)], streams[static_cast<std::size_t>(r)].get());
  }
  const std::string unfinished = finishAll(comm, streams);
  if (!unfinished.empty()) return c.describe() + ": " + unfinished;
  return checkOutputs(comm, c, ranks, expected);
}

// In 1 KiB chunks a chain of 1 MiB has 1025 chunks, far past the pace's slack (kCollRingPaceRounds rounds of
// a chain's 32 blocks: 128 chunks), so the chains' first ranks check each other's progress throughout. With
// a rank starting 50 ms late, the chain it heads claims nothing until then while the others could fill every
// stage slot on their way to it (on three ranks or more, more than the slack): with pacing on their first
// ranks must wait on the pace, with it off never.
TEST(CommunicatorRing, ChainsKeepingPaceReduceCorrectly) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  for (const char* pace : {"1", "0"}) {
    Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", "RING"},
                                           {"PEERLINK_COLL_RING_CHUNK", "1024"},
                                           {"PEERLINK_COLL_RING_PACE", pace}}));
    const int n = comm.size();
    for (const Collective collective : {Collective::ReduceScatter, Collective::AllReduce}) {
      CollCase c;
      c.collective = collective;
      c.type = DataType::F32;
      c.op = ReduceOp::Sum;
      // 1 MiB + 16 bytes per chain (the ring reduce-scatter needs 16-byte blocks).
      const std::size_t chainCount = (std::size_t{1} << 18) + 4;
      c.count = collective == Collective::ReduceScatter ? chainCount : chainCount * static_cast<std::size_t>(n);
      ASSERT_NE(comm.describeChoice(collective, c.count * sizeof(float)).find("ring"), std::string::npos)
          << comm.describeChoice(collective, c.count * sizeof(float));
      for (const bool inPlace : {false, true}) {
        for (const int late : {-1, n > 1 ? 1 : -1}) {
          c.inPlace = inPlace;
          c.seed = static_cast<std::uint64_t>(late + 2) * 10 + (inPlace ? 1 : 0);
          const RingTrace trace(comm);
          const std::string what = c.describe() + ", pace " + pace + ", late rank " + std::to_string(late);
          EXPECT_EQ(runWithLateRank(comm, c, late), "") << what;
          unsigned long long waited = 0;
          for (int r = 0; r < n; ++r) waited += trace.paceWait(r);
          if (pace[0] == '0') {
            EXPECT_EQ(waited, 0u) << what << ": pacing off, yet a block waited on it";
          } else if (late >= 0 && n >= 3) {
            EXPECT_GT(waited, 0u) << what << ": the chains ran ahead of the late rank's without waiting";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::testing
