// The ring reduce-scatter's and all-reduce's chains keeping pace (PEERLINK_COLL_RING_PACE; colldev::keepPace in
// kernels/coll_ring_reduce.cu): results against the host's with pacing on and off, and the pace's waits seen
// through the ring kernels' trace (kernels::setCollTrace).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
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

// Holds rank `late`'s stream (-1: none) with a 50 ms host sleep before the calls.
std::function<void(const std::vector<Stream>&)> lateRank(int late) {
  return [late](const std::vector<Stream>& streams) {
    if (late < 0) return;
    PEERLINK_CUDA_CHECK(cudaLaunchHostFunc(
        streams[static_cast<std::size_t>(late)].get(),
        [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, nullptr));
  };
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
          EXPECT_EQ(runCase(comm, c, lateRank(late)), "") << what;
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
