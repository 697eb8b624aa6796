// Every collective algorithm's plan, run by the host executor for 1 to 8 ranks, counts 0, 1, n-1, 7,
// 1000, 1001, unchunked and chunked, in place and out of place, checked against the closed form
// (hostReduceReference); every type x op; the traffic and step counts docs/collectives.md states. The
// executor's own checks are in test_coll_host_executor.cc.
#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/host_executor.hpp"
#include "coll/host_reduce.hpp"
#include "coll/partition.hpp"
#include "coll/plan.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"
#include "plan_test_support.hpp"

namespace peerlink::coll {
namespace {

constexpr const auto& kTypes = kEveryDataType;
constexpr const auto& kOps = kEveryReduceOp;
constexpr const auto& kCollectives = kEveryCollective;

struct Variant {
  Collective collective;
  Algorithm algorithm;
  bool push = false;  ///< the push kernel's flow (PEERLINK_COLL_PUSH=1)
};

std::vector<Variant> allVariants() {
  std::vector<Variant> variants;
  for (Collective collective : kCollectives) {
    for (Algorithm algorithm : algorithmsOf(collective)) variants.push_back({collective, algorithm});
  }
  variants.push_back({Collective::AllReduce, Algorithm::TwoShot, true});
  variants.push_back({Collective::ReduceScatter, Algorithm::OneShot, true});
  return variants;
}

bool hasInPlace(Collective collective) {
  return collective != Collective::AllToAll && collective != Collective::SendRecv;
}

// The sweep the issue asks for. Types and ops rotate from case to case so that every pair is met across
// the sweep without multiplying its size by 50; AllTypesAndOps below runs every pair on every algorithm.
class PlanSweep : public ::testing::TestWithParam<Variant> {};

TEST_P(PlanSweep, MatchesClosedFormForEveryShape) {
  const Variant variant = GetParam();
  std::vector<std::pair<DataType, ReduceOp>> typeOps;
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      if (reduceOpSupported(type, op) && (reduces(variant.collective) || op == ReduceOp::Sum)) {
        typeOps.emplace_back(type, op);
      }
    }
  }
  std::size_t rotation = 0;
  int runs = 0;
  for (int n = 1; n <= 8; ++n) {
    const std::set<std::size_t> counts = {0, 1, static_cast<std::size_t>(n - 1), 7, 1000, 1001};
    for (std::size_t count : counts) {
      for (std::size_t chunk : {std::size_t{0}, std::size_t{5}, std::size_t{64}}) {
        for (bool inPlace : {false, true}) {
          if (inPlace && !hasInPlace(variant.collective)) continue;
          const auto [type, op] = typeOps[rotation++ % typeOps.size()];
          const int root = static_cast<int>(count % static_cast<std::size_t>(n));
          const Plan plan =
              buildPlan(variant.collective, variant.algorithm, n, count, root, inPlace, chunk, type, variant.push);
          const std::string failure = runAndCompare(plan, op, static_cast<std::uint32_t>(rotation));
          ASSERT_EQ(failure, "");
          ++runs;
        }
      }
    }
  }
  RecordProperty("runs", runs);
}

TEST_P(PlanSweep, AllTypesAndOps) {
  const Variant variant = GetParam();
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      if (!reduceOpSupported(type, op) || (!reduces(variant.collective) && op != ReduceOp::Sum)) continue;
      for (bool inPlace : {false, true}) {
        if (inPlace && !hasInPlace(variant.collective)) continue;
        const Plan plan = buildPlan(variant.collective, variant.algorithm, 5, 203, 3, inPlace, 24, type, variant.push);
        ASSERT_EQ(runAndCompare(plan, op, 7), "");
      }
    }
  }
}

// Out of place the user's send buffer is untouched, and every element of every recv is written (a poison
// byte pattern would otherwise survive; checked with two different poisons).
TEST_P(PlanSweep, LeavesSendIntactAndWritesAllOfRecv) {
  const Variant variant = GetParam();
  for (int n : {2, 3, 8}) {
    const Plan plan =
        buildPlan(variant.collective, variant.algorithm, n, 77, n - 1, false, 16, DataType::U8, variant.push);
    const std::vector<Bytes> send = makeSendData(plan, ReduceOp::Max, 3);
    std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan, std::byte{0x5a});
    for (std::size_t r = 0; r < send.size(); ++r) buffers[r].input = send[r];
    executePlan(plan, ReduceOp::Max, buffers);
    for (std::size_t r = 0; r < send.size(); ++r) EXPECT_TRUE(buffers[r].input == send[r]) << planName(plan);
    const auto a = runPlanOnHost(plan, ReduceOp::Max, send, std::byte{0x00});
    const auto b = runPlanOnHost(plan, ReduceOp::Max, send, std::byte{0xff});
    EXPECT_TRUE(a == b) << planName(plan) << ": a recv element was never written";
  }
}

std::string variantName(const ::testing::TestParamInfo<Variant>& info) {
  return std::string(collectiveName(info.param.collective)) + "_" + algorithmName(info.param.algorithm) +
         (info.param.push ? "_push" : "");
}

INSTANTIATE_TEST_SUITE_P(Coll, PlanSweep, ::testing::ValuesIn(allVariants()), variantName);

// All ranks of an all-reduce get bitwise the same floats (sources are listed in the same order).
// Two-shot reduce cuts large messages among the non-root ranks only (reduceTwoShotSharesRoot), which the
// sweeps' small counts never reach: run that plan once, in place and out, against the closed form.
TEST(Plan, LargeTwoShotReduceMatchesClosedForm) {
  const std::size_t count = (std::size_t{32} << 20) / 4 + 3;
  for (const bool inPlace : {false, true}) {
    const Plan plan = buildPlan(Collective::Reduce, Algorithm::TwoShot, 3, count, 2, inPlace, 0, DataType::F32);
    EXPECT_EQ(runAndCompare(plan, ReduceOp::Sum, 7), "") << describePlan(plan).substr(0, 600);
  }
}

TEST(Plan, AllReduceRanksAgreeBitwise) {
  for (Algorithm algorithm : algorithmsOf(Collective::AllReduce)) {
    const Plan plan = buildPlan(Collective::AllReduce, algorithm, 7, 1001, 0, false, 0, DataType::F32);
    const std::vector<Bytes> got = runPlanOnHost(plan, ReduceOp::Sum, makeSendData(plan, ReduceOp::Sum, 11));
    for (const Bytes& rank : got) EXPECT_TRUE(rank == got[0]) << planName(plan);
  }
}

TEST(Plan, ShardsAreThePartitionRanges) {
  for (DataType type : {DataType::F64, DataType::F16, DataType::U8}) {
    const std::size_t align = alignElementsOf(type);
    EXPECT_EQ(align, std::max<std::size_t>(1, 16 / dataTypeSize(type)));
    const Plan plan = buildPlan(Collective::AllReduce, Algorithm::TwoShot, 3, 1001, 0, false, 0, type);
    ASSERT_EQ(plan.steps.size(), 2u);
    ASSERT_EQ(plan.steps[0].transfers.size(), 3u);
    for (const Transfer& transfer : plan.steps[0].transfers) {
      const ElementRange shard = partitionRange(1001, 3, transfer.executor, align);
      EXPECT_EQ(transfer.dst.offset, shard.begin);
      EXPECT_EQ(transfer.count, shard.count);
      EXPECT_TRUE(transfer.finish);
      EXPECT_EQ(transfer.kind, TransferKind::Reduce);
    }
  }
}

// Broadcast two-shot as the kernel runs it (broadcastArgs in src/coll/comm_launch.cc), modelled here
// independently of the builder: the count is cut among the n-1 non-root ranks, rank r owning shard
// k = (r - root - 1) mod n of partitionRange(count, n - 1, k, 16 / size); it reads the shard from the
// root's send buffer and stores it into every non-root output, peers from r+1 on, its own last. Out of
// place the root copies its buffer locally (in place its send and recv are one buffer: no job).
std::size_t kernelAlign(DataType type) {
  return std::max<std::size_t>(1, 16 / dataTypeSize(type));
}

ElementRange kernelBroadcastShard(int n, std::size_t count, int root, int rank, DataType type) {
  if (rank == root) return {};
  return partitionRange(count, n - 1, (rank - root - 1 + n) % n, kernelAlign(type));
}

std::vector<Transfer> kernelBroadcastTwoShot(int n, std::size_t count, int root, bool inPlace, DataType type) {
  const BufferRef rootSend{root, inPlace ? BufferKind::Output : BufferKind::Input, 0};
  std::vector<Transfer> jobs;
  for (int r = 0; r < n; ++r) {
    if (r == root) {
      if (!inPlace && count > 0)
        jobs.push_back({root, TransferKind::Copy, {root, BufferKind::Output, 0}, {rootSend}, count});
      continue;
    }
    const ElementRange shard = kernelBroadcastShard(n, count, root, r, type);
    if (shard.count == 0) continue;
    BufferRef src = rootSend;
    src.offset = shard.begin;
    for (int p = 1; p < n; ++p) {
      const int to = (r + p) % n;
      if (to != root)
        jobs.push_back({r, TransferKind::Copy, {to, BufferKind::Output, shard.begin}, {src}, shard.count});
    }
    jobs.push_back({r, TransferKind::Copy, {r, BufferKind::Output, shard.begin}, {src}, shard.count});
  }
  return jobs;
}

bool sameRef(const BufferRef& a, const BufferRef& b) {
  return a.rank == b.rank && a.buffer == b.buffer && a.offset == b.offset;
}

bool sameTransfer(const Transfer& a, const Transfer& b) {
  return a.executor == b.executor && a.kind == b.kind && sameRef(a.dst, b.dst) && a.srcs.size() == 1 &&
         b.srcs.size() == 1 && sameRef(a.srcs[0], b.srcs[0]) && a.count == b.count && a.finish == b.finish;
}

// Counts that do not divide evenly among n-1 ranks or the alignment, smaller than n-1, 0 and 1.
std::set<std::size_t> broadcastCounts(int n) {
  const auto m = static_cast<std::size_t>(n - 1);
  return {0, 1, 2, 3, m > 1 ? m - 1 : 1, m, m + 1, 7, 17, 33, 16 * m + 1, 1000, 1001, 1003};
}

// Unchunked, the plan is exactly the kernel's jobs: one step, the same transfers, each executor's in the
// kernel's order. And it computes the broadcast.
TEST(Plan, BroadcastTwoShotIsTheKernelsJobs) {
  int runs = 0;
  for (int n = 2; n <= 8; ++n) {
    for (int root : {0, n / 2, n - 1}) {
      for (std::size_t count : broadcastCounts(n)) {
        for (DataType type : {DataType::F64, DataType::F32, DataType::F16, DataType::U8}) {
          for (bool inPlace : {false, true}) {
            const Plan plan = buildPlan(Collective::Broadcast, Algorithm::TwoShot, n, count, root, inPlace, 0, type);
            const std::vector<Transfer> want = kernelBroadcastTwoShot(n, count, root, inPlace, type);
            ASSERT_EQ(plan.steps.size(), want.empty() ? 0u : 1u) << describePlan(plan);
            const std::vector<Transfer> got = want.empty() ? std::vector<Transfer>{} : plan.steps[0].transfers;
            ASSERT_EQ(got.size(), want.size()) << describePlan(plan);
            for (int r = 0; r < n; ++r) {  // per executor, in order (the executors run concurrently)
              std::vector<const Transfer*> mine;
              for (const Transfer& t : got) {
                if (t.executor == r) mine.push_back(&t);
              }
              std::size_t i = 0;
              for (const Transfer& w : want) {
                if (w.executor != r) continue;
                ASSERT_LT(i, mine.size()) << describePlan(plan);
                ASSERT_TRUE(sameTransfer(*mine[i], w)) << planName(plan) << ": got " << describeTransfer(*mine[i])
                                                       << ", the kernel does " << describeTransfer(w);
                ++i;
              }
              EXPECT_EQ(i, mine.size()) << describePlan(plan);
            }
            ASSERT_EQ(runAndCompare(plan, ReduceOp::Sum, static_cast<std::uint32_t>(runs)), "");
            ++runs;
          }
        }
      }
    }
  }
  RecordProperty("runs", runs);
}

// Chunked or not, each non-root rank reads exactly its kernel shard of the root's send buffer and
// nothing else of any peer, the root reads only its own buffer, and every element of every non-root
// output is written once, by the rank whose shard holds it; all in one step. (ASSERT: stops at the first
// wrong element.)
TEST(Plan, BroadcastTwoShotShardOwnersReadTheRoot) {
  for (int n = 2; n <= 8; ++n) {
    for (int root : {0, n / 2, n - 1}) {
      for (std::size_t count : broadcastCounts(n)) {
        for (DataType type : {DataType::F64, DataType::F32, DataType::U8}) {
          for (std::size_t chunk : {std::size_t{0}, std::size_t{5}, std::size_t{64}}) {
            for (bool inPlace : {false, true}) {
              const Plan plan =
                  buildPlan(Collective::Broadcast, Algorithm::TwoShot, n, count, root, inPlace, chunk, type);
              ASSERT_LE(plan.steps.size(), 1u) << describePlan(plan);
              const BufferKind rootSend = inPlace ? BufferKind::Output : BufferKind::Input;
              std::vector<std::vector<int>> readBy(static_cast<std::size_t>(n), std::vector<int>(count, 0));
              std::vector<std::vector<int>> writer(static_cast<std::size_t>(n), std::vector<int>(count, -1));
              for (const Step& step : plan.steps) {
                for (const Transfer& t : step.transfers) {
                  ASSERT_EQ(t.kind, TransferKind::Copy);
                  ASSERT_EQ(t.srcs.size(), 1u);
                  const BufferRef& src = t.srcs[0];
                  ASSERT_EQ(src.rank, root) << planName(plan) << ": " << describeTransfer(t);
                  ASSERT_EQ(src.buffer, rootSend) << planName(plan) << ": " << describeTransfer(t);
                  ASSERT_EQ(t.dst.buffer, BufferKind::Output) << planName(plan) << ": " << describeTransfer(t);
                  ASSERT_EQ(t.dst.offset, src.offset) << planName(plan) << ": " << describeTransfer(t);
                  ASSERT_LE(src.offset + t.count, count);
                  for (std::size_t i = src.offset; i < src.offset + t.count; ++i) {
                    readBy[static_cast<std::size_t>(t.executor)][i] = 1;
                    int& w = writer[static_cast<std::size_t>(t.dst.rank)][i];
                    ASSERT_EQ(w, -1) << planName(plan) << ": rank " << t.dst.rank << " output[" << i
                                     << "] written twice";
                    w = t.executor;
                  }
                }
              }
              for (int r = 0; r < n; ++r) {
                const ElementRange shard = kernelBroadcastShard(n, count, root, r, type);
                for (std::size_t i = 0; i < count; ++i) {
                  const bool inShard = i >= shard.begin && i < shard.begin + shard.count;
                  const bool rootReads = r == root && !inPlace;
                  ASSERT_EQ(readBy[static_cast<std::size_t>(r)][i] == 1, r == root ? rootReads : inShard)
                      << planName(plan) << ": rank " << r << ", element " << i << " of the root's buffer";
                  int owner = root;
                  for (int q = 0; q < n; ++q) {
                    const ElementRange s = kernelBroadcastShard(n, count, root, q, type);
                    if (i >= s.begin && i < s.begin + s.count) owner = q;
                  }
                  const int want = r == root ? (inPlace ? -1 : root) : owner;
                  ASSERT_EQ(writer[static_cast<std::size_t>(r)][i], want)
                      << planName(plan) << ": rank " << r << " output[" << i << "]";
                }
              }
            }
          }
        }
      }
    }
  }
}

// The kernel's shards, written out by hand (so that a change to partitionRange shows too): which rank
// reads which range of the root's buffer.
TEST(Plan, BroadcastTwoShotShardsByHand) {
  struct Case {
    int n;
    int root;
    std::size_t count;
    DataType type;
    std::vector<std::pair<std::size_t, std::size_t>> reads;  // per rank: [begin, end) of the root's buffer
  };
  const Case cases[] = {
      {4, 1, 10, DataType::F32, {{8, 10}, {0, 0}, {0, 4}, {4, 8}}},  // align 4: 3 units for 3 ranks
      {3, 0, 1, DataType::F32, {{0, 0}, {0, 1}, {0, 0}}},
      {8, 5, 3, DataType::U8, {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 3}, {0, 0}}},
      {5, 4, 33, DataType::F64, {{0, 10}, {10, 18}, {18, 26}, {26, 33}, {0, 0}}},  // 17 units of 2
      {3, 2, 1000, DataType::F16, {{0, 504}, {504, 1000}, {0, 0}}},                // 125 units of 8
      {2, 1, 7, DataType::F32, {{0, 7}, {0, 0}}},
      {7, 3, 6, DataType::U32, {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 4}, {4, 6}, {0, 0}}},
  };
  for (const Case& c : cases) {
    const Plan plan = buildPlan(Collective::Broadcast, Algorithm::TwoShot, c.n, c.count, c.root, false, 0, c.type);
    ASSERT_EQ(plan.steps.size(), 1u) << describePlan(plan);
    for (int r = 0; r < c.n; ++r) {
      std::size_t begin = c.count;
      std::size_t end = 0;
      std::size_t stores = 0;
      for (const Transfer& t : plan.steps[0].transfers) {
        if (t.executor != r || r == c.root) continue;
        EXPECT_EQ(t.srcs[0].rank, c.root);
        begin = std::min(begin, t.srcs[0].offset);
        end = std::max(end, t.srcs[0].offset + t.count);
        ++stores;
      }
      const auto [wantBegin, wantEnd] = c.reads[static_cast<std::size_t>(r)];
      if (wantBegin == wantEnd) {
        EXPECT_EQ(stores, 0u) << describePlan(plan) << "rank " << r;
        continue;
      }
      EXPECT_EQ(begin, wantBegin) << describePlan(plan) << "rank " << r;
      EXPECT_EQ(end, wantEnd) << describePlan(plan) << "rank " << r;
      EXPECT_EQ(stores, static_cast<std::size_t>(c.n - 1)) << describePlan(plan) << "rank " << r;  // every non-root
    }
  }
}

// Elements each rank reads from peers, each distinct range counted once (broadcast two-shot lists the
// root's shard once per destination, where the kernel reads it once).
std::vector<std::size_t> distinctRemoteReads(const Plan& plan) {
  std::vector<std::size_t> reads(static_cast<std::size_t>(plan.nranks), 0);
  std::set<std::tuple<int, int, int, std::size_t, std::size_t>> seen;
  for (const Step& step : plan.steps) {
    for (const Transfer& t : step.transfers) {
      for (const BufferRef& src : t.srcs) {
        if (src.rank == t.executor) continue;
        if (seen.insert({t.executor, src.rank, static_cast<int>(src.buffer), src.offset, t.count}).second) {
          reads[static_cast<std::size_t>(t.executor)] += t.count;
        }
      }
    }
  }
  return reads;
}

// The traffic docs/collectives.md states, per rank, in elements read from peers or, for the plans that push
// (all-gather and all-to-all direct, broadcast two-shot, the push reductions), stored into them (n = 4,
// count 4096).
TEST(Plan, TrafficPerRankIsAsDocumented) {
  const int n = 4;
  const std::size_t count = 4096;
  const std::size_t shard = count / n;
  const auto reads = [&](Collective c, Algorithm a, int root = 0) {
    return remoteReadElements(buildPlan(c, a, n, count, root, false, 0, DataType::F32));
  };
  using V = std::vector<std::size_t>;
  EXPECT_EQ(reads(Collective::AllReduce, Algorithm::OneShot), V(4, 3 * count));
  EXPECT_EQ(reads(Collective::AllReduce, Algorithm::TwoShot), V(4, 2 * 3 * shard));
  // Ring: stores only; each rank passes a partial of the 3 segments it does not own on, then each finished
  // segment but the one its successor owns.
  EXPECT_EQ(reads(Collective::AllReduce, Algorithm::Ring), V(4, 0));
  EXPECT_EQ(
      remoteWriteElements(buildPlan(Collective::AllReduce, Algorithm::Ring, n, count, 0, false, 0, DataType::F32)),
      V(4, 2 * 3 * shard));
  EXPECT_EQ(reads(Collective::ReduceScatter, Algorithm::OneShot), V(4, 3 * count));
  // Ring reduce-scatter: stores only, a partial of the 3 blocks a rank does not own into its successor.
  EXPECT_EQ(reads(Collective::ReduceScatter, Algorithm::Ring), V(4, 0));
  EXPECT_EQ(
      remoteWriteElements(buildPlan(Collective::ReduceScatter, Algorithm::Ring, n, count, 0, false, 0, DataType::F32)),
      V(4, 3 * count));
  const auto writes = [&](Collective c, Algorithm a) {
    return remoteWriteElements(buildPlan(c, a, n, count, 0, false, 0, DataType::F32));
  };
  EXPECT_EQ(reads(Collective::AllGather, Algorithm::OneShot), V(4, 0));
  EXPECT_EQ(writes(Collective::AllGather, Algorithm::OneShot), V(4, 3 * count));
  EXPECT_EQ(reads(Collective::AllGather, Algorithm::Ring), V(4, 3 * count));
  EXPECT_EQ(writes(Collective::AllGather, Algorithm::Ring), V(4, 0));
  EXPECT_EQ(writes(Collective::AllReduce, Algorithm::TwoShot), V(4, 0));
  EXPECT_EQ(reads(Collective::Broadcast, Algorithm::OneShot, 1), (V{count, 0, count, count}));
  // Two-shot, root 1: the kernel's shards of 4096 f32 among ranks 2, 3, 0 are 1368, 1364, 1364 (342, 341,
  // 341 units of 4); each is read once from the root (the root sends every element once) and stored into
  // the 3 non-root outputs, which the plan lists as 3 copies from the root.
  const Plan broadcastTwoShot =
      buildPlan(Collective::Broadcast, Algorithm::TwoShot, n, count, 1, false, 0, DataType::F32);
  EXPECT_EQ(distinctRemoteReads(broadcastTwoShot), (V{1364, 0, 1368, 1364}));
  EXPECT_EQ(remoteReadElements(broadcastTwoShot), (V{3 * 1364, 0, 3 * 1368, 3 * 1364}));
  EXPECT_EQ(remoteWriteElements(broadcastTwoShot), (V{2 * 1364, 0, 2 * 1368, 2 * 1364}));  // the other two
  // Ring, root 1: ranks 1, 2, 3 each store the whole buffer into the next rank's output (1 -> 2 -> 3 -> 0).
  EXPECT_EQ(reads(Collective::Broadcast, Algorithm::Ring, 1), V(4, 0));
  EXPECT_EQ(
      remoteWriteElements(buildPlan(Collective::Broadcast, Algorithm::Ring, n, count, 1, false, 0, DataType::F32)),
      (V{0, count, count, count}));
  // Ring reduce, root 1: ranks 2, 3, 0 each store the whole buffer (a partial) into the next rank's stage.
  EXPECT_EQ(reads(Collective::Reduce, Algorithm::Ring, 1), V(4, 0));
  EXPECT_EQ(remoteWriteElements(buildPlan(Collective::Reduce, Algorithm::Ring, n, count, 1, false, 0, DataType::F32)),
            (V{count, 0, count, count}));
  EXPECT_EQ(reads(Collective::Reduce, Algorithm::OneShot, 1), (V{0, 3 * count, 0, 0}));
  // Two-shot reduce of a smaller message, root 1: every rank reduces shard r from the 3 peers into the root
  // (the root's own shard locally).
  const Plan reduceTwoShot = buildPlan(Collective::Reduce, Algorithm::TwoShot, n, count, 1, false, 0, DataType::F32);
  EXPECT_EQ(remoteReadElements(reduceTwoShot), V(4, 3 * shard));
  EXPECT_EQ(remoteWriteElements(reduceTwoShot), (V{shard, 0, shard, shard}));
  // From 32 MiB, root 1: ranks 2, 3, 0 reduce the same shards as broadcast's (a third each, scaled) from
  // every rank and store the results into the root; the root reads and stores nothing.
  const std::size_t large = (std::size_t{32} << 20) / 4;
  const Plan reduceLarge = buildPlan(Collective::Reduce, Algorithm::TwoShot, n, large, 1, false, 0, DataType::F32);
  // partitionRange(large, 3, k, 4): 2796204, 2796204, 2796200 for k = (r - 2) mod 4 = 0 (rank 2), 1 (3), 2 (0).
  const std::size_t third = 2796204;
  const std::size_t last = large - 2 * third;
  EXPECT_EQ(remoteReadElements(reduceLarge), (V{3 * last, 0, 3 * third, 3 * third}));
  EXPECT_EQ(remoteWriteElements(reduceLarge), (V{last, 0, third, third}));
  EXPECT_EQ(reads(Collective::AllToAll, Algorithm::OneShot), V(4, 0));
  EXPECT_EQ(writes(Collective::AllToAll, Algorithm::OneShot), V(4, 3 * count));
  EXPECT_EQ(reads(Collective::SendRecv, Algorithm::OneShot), V(4, count));
  // The push variants read no peer: all-reduce stores 3 shards into stages and 3 results into outputs,
  // reduce-scatter 3 blocks into stages.
  const auto pushed = [&](Collective c, Algorithm a) {
    return buildPlan(c, a, n, count, 0, false, 0, DataType::F32, true);
  };
  EXPECT_EQ(remoteReadElements(pushed(Collective::AllReduce, Algorithm::TwoShot)), V(4, 0));
  EXPECT_EQ(remoteWriteElements(pushed(Collective::AllReduce, Algorithm::TwoShot)), V(4, 2 * 3 * shard));
  EXPECT_EQ(remoteReadElements(pushed(Collective::ReduceScatter, Algorithm::OneShot)), V(4, 0));
  EXPECT_EQ(remoteWriteElements(pushed(Collective::ReduceScatter, Algorithm::OneShot)), V(4, 3 * count));
  EXPECT_THROW(pushed(Collective::AllGather, Algorithm::OneShot), Error);
  EXPECT_THROW(pushed(Collective::AllReduce, Algorithm::Ring), Error);
}

TEST(Plan, StepCountsAndPipelining) {
  const auto steps = [](Algorithm a, int n, std::size_t chunk) {
    return buildPlan(Collective::AllReduce, a, n, 4096, 0, false, chunk, DataType::F32).steps.size();
  };
  EXPECT_EQ(steps(Algorithm::OneShot, 8, 0), 1u);
  EXPECT_EQ(steps(Algorithm::TwoShot, 8, 0), 2u);
  EXPECT_EQ(steps(Algorithm::Ring, 8, 0), 15u);  // n reduce hops (the last into the owner), n - 1 broadcast hops
  // 4096 / 8 = 512 elements per shard in chunks of 128: 4 chunks, pipelined one step apart.
  EXPECT_EQ(steps(Algorithm::TwoShot, 8, 128), 4u + 1u);
  EXPECT_EQ(steps(Algorithm::Ring, 8, 128), 4u + 15u - 1u);
  const Plan inPlace = buildPlan(Collective::AllReduce, Algorithm::OneShot, 4, 100, 0, true, 0, DataType::F32);
  EXPECT_EQ(inPlace.steps.size(), 2u);  // stage in scratch, then reduce
  EXPECT_EQ(inPlace.ranks[1].inputElements, 0u);
  EXPECT_EQ(inPlace.ranks[1].scratchElements, 100u);
  // One rank: a local copy out of place, nothing in place.
  EXPECT_EQ(buildPlan(Collective::AllReduce, Algorithm::Ring, 1, 10, 0, false, 0, DataType::F32).steps.size(), 1u);
  EXPECT_TRUE(buildPlan(Collective::AllReduce, Algorithm::Ring, 1, 10, 0, true, 0, DataType::F32).steps.empty());
  EXPECT_TRUE(buildPlan(Collective::AllGather, Algorithm::Ring, 4, 0, 0, false, 0, DataType::F32).steps.empty());
}

TEST(Plan, InPlaceLayoutsFollowTheApi) {
  const auto layout = [](Collective c, int rank, int root = 0) {
    const Algorithm a = algorithmsOf(c).front();
    return buildPlan(c, a, 4, 10, root, true, 0, DataType::F32).ranks[static_cast<std::size_t>(rank)];
  };
  EXPECT_EQ(layout(Collective::AllGather, 2).send.buffer, BufferKind::Output);
  EXPECT_EQ(layout(Collective::AllGather, 2).send.offset, 20u);
  EXPECT_EQ(layout(Collective::ReduceScatter, 3).recv.buffer, BufferKind::Input);
  EXPECT_EQ(layout(Collective::ReduceScatter, 3).recv.offset, 30u);
  EXPECT_EQ(layout(Collective::ReduceScatter, 3).outputElements, 0u);
  EXPECT_EQ(layout(Collective::Broadcast, 1, 1).send.buffer, BufferKind::Output);
  EXPECT_EQ(layout(Collective::Broadcast, 2, 1).inputElements, 0u);
  EXPECT_EQ(layout(Collective::Reduce, 2, 1).outputElements, 0u);
  EXPECT_EQ(layout(Collective::Reduce, 2, 1).send.buffer, BufferKind::Input);
}

TEST(Plan, BuildRejectsWhatTheCollectiveLacks) {
  const auto code = [](Collective c, Algorithm a, int n, int root, bool inPlace) {
    try {
      buildPlan(c, a, n, 10, root, inPlace, 0, DataType::F32);
    } catch (const Error& error) {
      return error.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code(Collective::AllReduce, Algorithm::Auto, 2, 0, false), ErrorCode::InvalidUsage);
  EXPECT_EQ(code(Collective::AllToAll, Algorithm::Ring, 2, 0, false), ErrorCode::InvalidUsage);
  EXPECT_EQ(code(Collective::AllToAll, Algorithm::OneShot, 2, 0, true), ErrorCode::InvalidUsage);
  EXPECT_EQ(code(Collective::SendRecv, Algorithm::OneShot, 2, 0, true), ErrorCode::InvalidUsage);
  EXPECT_EQ(code(Collective::Reduce, Algorithm::OneShot, 2, 2, false), ErrorCode::InvalidUsage);
  EXPECT_EQ(code(Collective::AllReduce, Algorithm::Ring, 0, 0, false), ErrorCode::InvalidUsage);
  // Every algorithm algorithmsOf lists builds, and no other.
  for (Collective c : kCollectives) {
    const std::vector<Algorithm> listed = algorithmsOf(c);
    for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Ring}) {
      const bool has = std::find(listed.begin(), listed.end(), a) != listed.end();
      EXPECT_EQ(code(c, a, 3, 0, false) == ErrorCode::Internal, has) << collectiveName(c) << " " << algorithmName(a);
    }
  }
}

TEST(Plan, SendRecvGroups) {
  // 0 -> 1 twice, 1 -> 0, 2 -> 2 (to itself), 3 silent.
  const std::vector<PointToPoint> pairs = {{0, 1, 5}, {1, 0, 3}, {0, 1, 2}, {2, 2, 4}};
  const Plan plan = buildSendRecvPlan(4, pairs, DataType::I32, 2);
  EXPECT_EQ(plan.ranks[0].inputElements, 7u);
  EXPECT_EQ(plan.ranks[1].outputElements, 7u);
  EXPECT_EQ(plan.ranks[3].inputElements, 0u);
  std::vector<Bytes> send(4);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t i = 0; i < plan.ranks[r].inputElements; ++i) {
      const auto value = static_cast<std::int32_t>(100 * r + i);
      const auto* bytes = reinterpret_cast<const std::byte*>(&value);
      send[r].insert(send[r].end(), bytes, bytes + sizeof value);
    }
  }
  const std::vector<Bytes> got = runPlanOnHost(plan, ReduceOp::Sum, send);
  const auto element = [&](std::size_t r, std::size_t i) {
    std::int32_t value = 0;
    std::memcpy(&value, got[r].data() + i * 4, 4);
    return value;
  };
  EXPECT_EQ(element(1, 0), 0);
  EXPECT_EQ(element(1, 4), 4);
  EXPECT_EQ(element(1, 5), 5);  // the second send of rank 0 follows its first in both buffers
  EXPECT_EQ(element(1, 6), 6);
  EXPECT_EQ(element(0, 2), 102);
  EXPECT_EQ(element(2, 3), 203);
  EXPECT_THROW(buildSendRecvPlan(2, {{0, 2, 1}}, DataType::I32), Error);
}

}  // namespace
}  // namespace peerlink::coll
