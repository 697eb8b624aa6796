// The plan-run kernel's programs (coll/plan_program.hpp): every rank's program, run step by step over host memory
// the way the kernel runs it (a step's transfers, then every rank's next step), gives the collective's closed form,
// in place too (as the API pairs each collective's buffers); no step's transfers, which the kernel runs side by side,
// write what another of that step reads or writes; a program holds exactly its rank's transfers; plans too long for
// the kernel's parameters get none.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/plan_program.hpp"
#include "coll/plan_staged.hpp"
#include "coll/segment_plans.hpp"
#include "coll_lists.hpp"
#include "plan_test_support.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kSize = 4;  // f32

// Where a rank called in place keeps its data, as the API pairs send and recv: an all-gather's send is block r of
// its recv, a reduce-scatter's recv block r of its send, the others' send and recv one buffer.
struct InPlace {
  std::size_t inputAt = 0;   // elements into the one buffer where the rank's Input starts
  std::size_t outputAt = 0;  // and its Output
  bool inOutput = false;     // the one buffer is the rank's output (an all-gather), else its input
};
InPlace inPlaceOf(const Plan& plan, int r) {
  const auto rank = static_cast<std::size_t>(r);
  if (plan.collective == Collective::AllGather) return {rank * plan.count, 0, true};
  if (plan.collective == Collective::ReduceScatter) return {0, rank * plan.count, false};
  return {};
}

// Every rank's buffers (host memory standing in for its GPU's and its stage) as the executor's PlanRanks see them;
// in place, Input and Output in the one buffer (inPlaceOf).
std::vector<PlanRank> planRanksOver(std::vector<HostRankBuffers>& buffers, const Plan& plan, bool inPlace) {
  std::vector<PlanRank> ranks(buffers.size());
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    HostRankBuffers& b = buffers[r];
    PlanRank& rank = ranks[r];
    rank.device = 0;
    const auto whole = [](Bytes& bytes) { return wholeBuffer(bytes.data(), bytes.size() / kSize); };
    rank.extents[static_cast<std::size_t>(BufferKind::Input)] = whole(b.input);
    rank.extents[static_cast<std::size_t>(BufferKind::Output)] = whole(b.output);
    if (inPlace) {
      const InPlace at = inPlaceOf(plan, static_cast<int>(r));
      Bytes& one = at.inOutput ? b.output : b.input;
      const std::size_t elements = one.size() / kSize;
      rank.extents[static_cast<std::size_t>(BufferKind::Input)] =
          wholeBuffer(one.data() + at.inputAt * kSize, elements - at.inputAt);
      rank.extents[static_cast<std::size_t>(BufferKind::Output)] =
          wholeBuffer(one.data() + at.outputAt * kSize, elements - at.outputAt);
    }
    rank.extents[static_cast<std::size_t>(BufferKind::Scratch)] = whole(b.scratch);
    rank.extents[static_cast<std::size_t>(BufferKind::HostStage)] = whole(b.hostStage);
  }
  return ranks;
}

// What the kernel does with one transfer, for f32 and sum or avg.
void runTransfer(const ProgramTransfer& transfer, ReduceOp op, int nranks) {
  if (!transfer.reduce) {
    std::memmove(transfer.dst, transfer.srcs.front(), transfer.count * kSize);
    return;
  }
  auto* dst = static_cast<float*>(transfer.dst);
  for (std::size_t i = 0; i < transfer.count; ++i) {
    float acc = static_cast<const float*>(transfer.srcs[0])[i];
    for (std::size_t j = 1; j < transfer.srcs.size(); ++j) acc += static_cast<const float*>(transfer.srcs[j])[i];
    dst[i] = transfer.finish && op == ReduceOp::Avg ? acc / static_cast<float>(nranks) : acc;
  }
}

// Whether rank r's part of the plan fits the kernel's parameters, counted here from the plan itself.
bool fitsOneKernel(const Plan& plan, int r) {
  std::size_t ops = 0;
  std::size_t pointers = 0;
  for (const Step& step : plan.steps) {
    for (const Transfer& transfer : step.transfers) {
      if (transfer.executor != r || transfer.count == 0) continue;
      ++ops;
      pointers += 1 + (transfer.kind == TransferKind::Reduce ? transfer.srcs.size() : 1);
    }
  }
  return plan.steps.size() <= static_cast<std::size_t>(kernels::kPlanRunMaxSteps) &&
         ops <= static_cast<std::size_t>(kernels::kPlanRunMaxOps) &&
         pointers <= static_cast<std::size_t>(kernels::kPlanRunMaxPointers);
}

// The kernel runs a step's transfers side by side, every rank's at once, on different blocks: no transfer of a step
// may write bytes another transfer of that step (any rank's) reads or writes. A reduction may write over one of its
// own sources (element by element, each read before it is written). "" or the first overlap.
std::string stepOverlap(const std::vector<std::vector<std::vector<ProgramTransfer>>>& programs, std::size_t s) {
  struct Range {
    const unsigned char* begin;
    const unsigned char* end;
    std::size_t transfer;
    bool writes;
  };
  std::vector<Range> ranges;
  std::vector<const ProgramTransfer*> transfers;
  for (const auto& program : programs) {
    for (const ProgramTransfer& transfer : program[s]) {
      const std::size_t index = transfers.size();
      transfers.push_back(&transfer);
      const auto rangeOf = [&](const void* at, bool writes) {
        const auto* begin = static_cast<const unsigned char*>(at);
        return Range{begin, begin + transfer.count * kSize, index, writes};
      };
      ranges.push_back(rangeOf(transfer.dst, true));
      for (const void* src : transfer.srcs) {
        if (!(transfer.reduce && src == transfer.dst)) ranges.push_back(rangeOf(src, false));
      }
    }
  }
  for (const Range& w : ranges) {
    if (!w.writes) continue;
    for (const Range& o : ranges) {
      if (&o == &w || (o.transfer == w.transfer && !o.writes) || o.end <= w.begin || w.end <= o.begin) continue;
      if (o.transfer == w.transfer) continue;
      return "step " + std::to_string(s) + ": transfer " + std::to_string(w.transfer) + " writes bytes transfer " +
             std::to_string(o.transfer) + (o.writes ? " writes" : " reads");
    }
  }
  return "";
}

constexpr const char* kTooLong = "too long for one kernel";

// The plan's every rank's program, run step by step over host buffers filled with makeSendData's data; "" or what
// differs from the closed form, or kTooLong where some rank's part does not fit one kernel (and so gets none).
std::string runPrograms(const Plan& plan, ReduceOp op, bool inPlace) {
  const std::vector<Bytes> send = makeSendData(plan, op, 11);
  std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan, std::byte{0xa5});
  for (int r = 0; r < plan.nranks; ++r) {
    HostRankBuffers& b = buffers[static_cast<std::size_t>(r)];
    const Bytes& mine = send[static_cast<std::size_t>(r)];
    const InPlace at = inPlace ? inPlaceOf(plan, r) : InPlace{};
    if (inPlace && !at.inOutput) b.input.resize(std::max(b.input.size(), b.output.size()));
    Bytes& into = at.inOutput ? b.output : b.input;
    if (!mine.empty()) std::memcpy(into.data() + at.inputAt * kSize, mine.data(), mine.size());
  }
  const std::vector<PlanRank> ranks = planRanksOver(buffers, plan, inPlace);
  std::vector<std::vector<std::vector<ProgramTransfer>>> programs;
  for (int r = 0; r < plan.nranks; ++r) {
    const auto program = planRunProgram(plan, r, ranks);
    if (!program) return fitsOneKernel(plan, r) ? "rank " + std::to_string(r) + ": no program" : kTooLong;
    // In place the program leaves out the copies onto themselves, which the count from the plan includes.
    if (!inPlace && !fitsOneKernel(plan, r)) {
      return "rank " + std::to_string(r) + ": a program of a plan that does not fit";
    }
    programs.push_back(programSteps(*program));
    if (programs.back().size() != plan.steps.size()) return "a program's steps differ from the plan's";
  }
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    if (const std::string overlap = stepOverlap(programs, s); !overlap.empty()) return overlap;
    for (const auto& program : programs) {
      for (const ProgramTransfer& transfer : program[s]) runTransfer(transfer, op, plan.nranks);
    }
  }
  const std::vector<Bytes> want =
      hostReduceReference(plan.collective, plan.type, op, plan.nranks, plan.count, plan.root, send);
  const Tolerance tol = reduces(plan.collective) ? tolerance(plan.type, op, plan.nranks) : Tolerance{};
  for (std::size_t r = 0; r < want.size(); ++r) {
    const InPlace at = inPlace ? inPlaceOf(plan, static_cast<int>(r)) : InPlace{};
    const Bytes& out = inPlace && !at.inOutput ? buffers[r].input : buffers[r].output;
    const auto first = out.begin() + static_cast<std::ptrdiff_t>(at.outputAt * kSize);
    const Bytes got(first, first + static_cast<std::ptrdiff_t>(want[r].size()));
    if (auto mismatch = findMismatch(plan.type, tol, want[r], got))
      return "rank " + std::to_string(r) + ": " + *mismatch;
  }
  return "";
}

RankLinks mixedLinks(int n) {
  RankLinks links = RankLinks::uniform(n, PairWay::Direct);
  links.set(0, 1, PairWay::HostStaged);
  links.set(n - 1, 0, PairWay::HostStaged);
  return links;
}

TEST(PlanProgram, EveryCollectiveRunAsProgramsGivesTheClosedForm) {
  int plans = 0;
  int tooLong = 0;
  for (const Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;
    for (const int n : {2, 3, 4}) {
      for (const bool allStaged : {true, false}) {
        const RankLinks links = allStaged ? RankLinks::uniform(n, PairWay::HostStaged) : mixedLinks(n);
        for (const std::size_t count : {std::size_t{1}, std::size_t{37}, std::size_t{1000}}) {
          for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg}) {
            if (op == ReduceOp::Avg && !reduces(collective)) continue;
            // Chunks of 64 elements and a small stage: several steps, slots reused from step to step.
            const std::vector<StagedSegment> segments =
                stagedSegments(collective, n, count, n - 1, DataType::F32, links, 64 * kSize, 16 << 10);
            for (const StagedSegment& segment : segments) {
              const std::string problem = runPrograms(segment.plan, op, false);
              ++plans;
              if (problem == kTooLong) {
                ++tooLong;
                continue;
              }
              EXPECT_EQ(problem, "") << collectiveName(collective) << " n=" << n << " count=" << count << " "
                                     << reduceOpName(op) << (allStaged ? " all staged" : " mixed");
            }
          }
        }
      }
    }
  }
  // The largest 4-rank calls here outgrow one kernel; every other plan ran as programs.
  EXPECT_LE(tooLong, plans / 8) << tooLong << " of " << plans << " plans too long for one kernel";
}

// A rank called in place runs the out-of-place plan with Input and Output in its one buffer (comm_launch_plan.cc):
// the program skips the copies onto themselves, no step's transfers overlap, and it still gives the closed form.
TEST(PlanProgram, InPlaceAllReduceSkipsCopiesOntoThemselves) {
  for (const int n : {2, 4}) {
    const RankLinks links = RankLinks::uniform(n, PairWay::HostStaged);
    const Plan plan = buildStagedPlan(Collective::AllReduce, n, 1000, 0, false, 64, DataType::F32, links);
    EXPECT_EQ(runPrograms(plan, ReduceOp::Sum, true), "") << "n=" << n;
  }
}

// Every collective the API takes in place (all-to-all and send/recv do not), as the API pairs its buffers.
TEST(PlanProgram, EveryCollectiveInPlaceGivesTheClosedForm) {
  for (const Collective collective : {Collective::AllReduce, Collective::Broadcast, Collective::Reduce,
                                      Collective::AllGather, Collective::ReduceScatter}) {
    for (const int n : {2, 3, 4}) {
      for (const bool allStaged : {true, false}) {
        const RankLinks links = allStaged ? RankLinks::uniform(n, PairWay::HostStaged) : mixedLinks(n);
        for (const std::size_t count : {std::size_t{37}, std::size_t{1000}}) {
          for (const StagedSegment& segment :
               stagedSegments(collective, n, count, n - 1, DataType::F32, links, 64 * kSize, 16 << 10)) {
            const std::string problem = runPrograms(segment.plan, ReduceOp::Sum, true);
            if (problem == kTooLong) continue;
            EXPECT_EQ(problem, "") << collectiveName(collective) << " n=" << n << " count=" << count
                                   << (allStaged ? " all staged" : " mixed");
          }
        }
      }
    }
  }
}

// The overlap check itself: a step whose copy writes what another rank's transfer reads, or two that write one
// range, is named; a reduction into one of its own sources is not.
TEST(PlanProgram, TheStepCheckFindsTransfersThatOverlap) {
  std::vector<float> memory(64);
  float* a = memory.data();
  float* b = memory.data() + 16;
  float* c = memory.data() + 32;
  const auto copy = [](float* dst, const float* src) { return ProgramTransfer{dst, {src}, 8, false, false}; };
  const auto reduce = [](float* dst, const float* other) { return ProgramTransfer{dst, {dst, other}, 8, true, false}; };
  using Programs = std::vector<std::vector<std::vector<ProgramTransfer>>>;
  EXPECT_EQ(stepOverlap(Programs{{{copy(b, a)}}, {{copy(c, a)}}}, 0), "");
  EXPECT_EQ(stepOverlap(Programs{{{reduce(b, a)}}, {{copy(c, a)}}}, 0), "");
  EXPECT_NE(stepOverlap(Programs{{{copy(b, a)}}, {{copy(c, b + 4)}}}, 0), "") << "a read of bytes another writes";
  EXPECT_NE(stepOverlap(Programs{{{copy(b, a)}}, {{copy(b + 7, c)}}}, 0), "") << "two writers of one range";
  EXPECT_NE(stepOverlap(Programs{{{reduce(b, a), copy(a, c)}}}, 0), "") << "a copy into a reduction's other source";
}

TEST(PlanProgram, AProgramHoldsExactlyItsRanksTransfers) {
  const RankLinks links = mixedLinks(4);
  const Plan plan = buildStagedPlan(Collective::AllReduce, 4, 5000, 0, false, 256, DataType::F32, links);
  std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan);
  const std::vector<PlanRank> ranks = planRanksOver(buffers, plan, false);
  for (int r = 0; r < 4; ++r) {
    const auto program = planRunProgram(plan, r, ranks);
    ASSERT_TRUE(program.has_value());
    const auto steps = programSteps(*program);
    ASSERT_EQ(steps.size(), plan.steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      std::vector<const Transfer*> mine;
      for (const Transfer& transfer : plan.steps[s].transfers) {
        if (transfer.executor == r && transfer.count > 0) mine.push_back(&transfer);
      }
      ASSERT_EQ(steps[s].size(), mine.size()) << "rank " << r << " step " << s;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const Transfer& transfer = *mine[i];
        const ProgramTransfer& got = steps[s][i];
        EXPECT_EQ(got.count, transfer.count);
        EXPECT_EQ(got.reduce, transfer.kind == TransferKind::Reduce);
        const PlanRank& owner = ranks[static_cast<std::size_t>(transfer.dst.rank)];
        EXPECT_EQ(got.dst, owner.address(transfer.dst.buffer, transfer.dst.offset, transfer.count, kSize));
        ASSERT_EQ(got.srcs.size(), got.reduce ? transfer.srcs.size() : 1u);
        for (std::size_t j = 0; j < got.srcs.size(); ++j) {
          const BufferRef& src = transfer.srcs[j];
          EXPECT_EQ(got.srcs[j],
                    ranks[static_cast<std::size_t>(src.rank)].address(src.buffer, src.offset, transfer.count, kSize));
        }
      }
    }
  }
}

TEST(PlanProgram, PlansTooLongForTheParametersGetNone) {
  const RankLinks links = RankLinks::uniform(2, PairWay::HostStaged);
  // 16 elements a chunk over 4000: far more steps than kPlanRunMaxSteps.
  const Plan longPlan = buildStagedPlan(Collective::AllReduce, 2, 4000, 0, false, 16, DataType::F32, links);
  ASSERT_GT(longPlan.steps.size(), static_cast<std::size_t>(kernels::kPlanRunMaxSteps));
  std::vector<HostRankBuffers> buffers = allocateHostBuffers(longPlan);
  EXPECT_FALSE(planRunProgram(longPlan, 0, planRanksOver(buffers, longPlan, false)).has_value());
  // 8 ranks, every pair staged, all-to-all in small chunks: steps few enough, transfers too many for one program.
  const Plan wide = buildStagedPlan(Collective::AllToAll, 8, 4096, 0, false, 64, DataType::F32,
                                    RankLinks::uniform(8, PairWay::HostStaged));
  std::vector<HostRankBuffers> wideBuffers = allocateHostBuffers(wide);
  const std::vector<PlanRank> wideRanks = planRanksOver(wideBuffers, wide, false);
  std::size_t transfers = 0;
  for (const Step& step : wide.steps) {
    for (const Transfer& transfer : step.transfers) transfers += transfer.executor == 0 && transfer.count > 0;
  }
  if (wide.steps.size() <= static_cast<std::size_t>(kernels::kPlanRunMaxSteps)) {
    ASSERT_GT(transfers, static_cast<std::size_t>(kernels::kPlanRunMaxOps));
  }
  EXPECT_FALSE(planRunProgram(wide, 0, wideRanks).has_value());
}

TEST(PlanProgram, OnlyCallsUpToTheLimitRunAsOneKernel) {
  EXPECT_TRUE(runsAsOneKernel(0, true));
  EXPECT_TRUE(runsAsOneKernel(kPlanRunMaxBytes, true));
  EXPECT_FALSE(runsAsOneKernel(kPlanRunMaxBytes + 1, true));
  EXPECT_FALSE(runsAsOneKernel(1, false));
}

}  // namespace
}  // namespace peerlink::coll
