// The ring reduce-scatter's and all-reduce's chains keeping pace (colldev::keepPace in kernels/coll_ring_reduce.cu):
// results against the host's, and the pace's waits seen through the ring kernels' trace (kernels::setCollTrace).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll_test_support.hpp"
#include "coll_trace_guard.hpp"

namespace peerlink::testing {
namespace {

// Cycles every block of rank r spent waiting on the pace in the latest ring reduce kernel.
unsigned long long paceWait(const CollTraceGuard& trace, int r) {
  unsigned long long total = 0;
  for (const auto& record : trace.records(r)) total += record.paceWait;
  return total;
}

// In 1 KiB chunks a chain of 1 MiB has 1025 chunks, far past the pace's slack (kCollRingPaceRounds rounds of
// a chain's 32 blocks: 128 chunks), so the chains' first ranks check each other's progress throughout. With
// a rank starting 50 ms late, the chain it heads claims nothing until then while the others could fill every
// stage slot on their way to it (on three ranks or more, more than the slack): their first ranks must wait on
// the pace.
TEST(CommunicatorRing, ChainsKeepingPaceReduceCorrectly) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  {
    Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", "RING"}, {"PEERLINK_COLL_RING_CHUNK", "1024"}}));
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
          const CollTraceGuard trace(comm);
          const std::string what = c.describe() + ", late rank " + std::to_string(late);
          EXPECT_EQ(runCase(comm, c, lateRank(late)), "") << what;
          unsigned long long waited = 0;
          for (int r = 0; r < n; ++r) waited += paceWait(trace, r);
          if (late >= 0 && n >= 3) {
            EXPECT_GT(waited, 0u) << what << ": the chains ran ahead of the late rank's without waiting";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::testing
