// The direct-read reduction kernel's warps claiming their units of work (PEERLINK_COLL_REDUCE_CLAIM;
// reduceRange in kernels/coll_reduce.cu) against striding over fixed shares: every kernel that runs it -- the
// two-shot all-reduce, fused and split, the two-shot reduce, the one-shot direct all-reduce and the
// reduce-scatter -- gives the host reference's results either way, with a rank starting late, and through the
// kernel's trace (kernels::setCollTrace) each rank's blocks reduced exactly as many 16-byte packs claiming as
// striding: none skipped, none run twice (a unit run twice stores the same results, so only the count shows it).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll_test_support.hpp"
#include "coll_trace_guard.hpp"

namespace peerlink::testing {
namespace {

struct ClaimCase {
  const char* algorithm;  // PEERLINK_ALGO
  Collective collective;
  std::size_t count;
  const char* kernel;  // the kernel describeChoice must name
};

// Packs this rank's blocks reduced in the latest traced launch.
unsigned long long packsRun(const CollTraceGuard& trace, int r) {
  unsigned long long total = 0;
  for (const auto& record : trace.records(r)) total += record.rounds;
  return total;
}

// On 8 blocks (PEERLINK_COLL_MAX_BLOCKS) each warp has many units, so claiming decides who runs most of them. Counts
// leave a tail past the last whole pack (element by element) and, for the split two-shot (from 64 MiB), a shard that is
// not a whole number of units.
TEST(CommunicatorReduceClaim, ClaimedUnitsRunOnceAndReduceCorrectly) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  const std::vector<ClaimCase> cases = {
      {"TWOSHOT", Collective::AllReduce, (std::size_t{1} << 20) + 3, "(two_shot)"},
      {"TWOSHOT", Collective::AllReduce, (std::size_t{16} << 20) + 5, "(split_two_shot)"},
      {"TWOSHOT", Collective::Reduce, (std::size_t{1} << 20) + 7, "(two_shot)"},
      {"ONESHOT", Collective::AllReduce, (std::size_t{1} << 19) + 1, "(one_shot_direct)"},
      {"ONESHOT", Collective::ReduceScatter, (std::size_t{1} << 18) + 9, "(reduce_scatter)"},
  };
  for (const ClaimCase& k : cases) {
    std::vector<unsigned long long> strided;  // per rank, with claiming off
    for (const char* claim : {"0", "1"}) {
      Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", k.algorithm},
                                             {"PEERLINK_PROTO", "SIMPLE"},
                                             {"PEERLINK_COLL_MAX_BLOCKS", "8"},
                                             {"PEERLINK_COLL_REDUCE_CLAIM", claim}}));
      const int n = comm.size();
      CollCase c;
      c.collective = k.collective;
      c.type = DataType::F32;
      c.op = ReduceOp::Sum;
      c.count = k.count;
      c.root = n - 1;
      const std::string choice = comm.describeChoice(k.collective, c.count * sizeof(float));
      ASSERT_NE(choice.find(k.kernel), std::string::npos) << choice;
      for (const int late : {-1, 0}) {
        c.seed = static_cast<std::uint64_t>(late + 2) * 10 + (claim[0] == '1' ? 1 : 0);
        const CollTraceGuard trace(comm);
        const std::string what = c.describe() + ", claim " + claim + ", late rank " + std::to_string(late);
        EXPECT_EQ(runCase(comm, c, lateRank(late)), "") << what;
        for (int r = 0; r < n; ++r) {
          const unsigned long long packs = packsRun(trace, r);
          if (claim[0] == '0') {
            if (late < 0) strided.push_back(packs);
            EXPECT_EQ(packs, strided[static_cast<std::size_t>(r)]) << what << ", rank " << r;
          } else {
            EXPECT_EQ(packs, strided[static_cast<std::size_t>(r)])
                << what << ", rank " << r << ": claiming reduced a different number of packs than striding";
          }
        }
      }
      std::printf("[claim] %s, PEERLINK_COLL_REDUCE_CLAIM=%s: %s\n", c.describe().c_str(), claim, choice.c_str());
    }
    // The reduce's root and ranks without a shard run nothing; someone must have reduced packs.
    unsigned long long total = 0;
    for (const unsigned long long packs : strided) total += packs;
    EXPECT_GT(total, 0u) << collectiveName(k.collective) << " " << k.kernel;
  }
}

}  // namespace
}  // namespace peerlink::testing
