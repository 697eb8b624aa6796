// deferReductions (net/deferred_reductions.hpp): the plans an async, captured or queued call's pieces run when their
// copies out reduce (one shot: all-reduce over 2 ranks, reduce-scatter over up to 8; here also an all-reduce of 3,
// which the transport does not run, and 8 for a reduce-scatter): what is left moves data only, each peer's
// source lands in Scratch once, and the left plan run by the host executor, then each rank's deferred reductions,
// gives the closed form, every rank of an all-reduce the same bits; plans whose reductions do not end them (a ring)
// are left as they are.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/host_executor.hpp"
#include "coll/host_reduce.hpp"
#include "net/deferred_reductions.hpp"
#include "plan_test_support.hpp"

namespace peerlink::net {
namespace {

using coll::Bytes;

// Runs `plan` with its reductions deferred: the left plan on the host executor, then every rank's deferred
// reductions over its buffers (as a copy out would, from its Input and Scratch into its Output). Returns each rank's
// recv range.
std::vector<Bytes> runDeferred(const coll::Plan& original, ReduceOp op, const std::vector<Bytes>& send,
                               std::vector<std::size_t>* deferredCounts = nullptr) {
  coll::Plan plan = original;
  std::vector<std::vector<DeferredReduction>> deferred(static_cast<std::size_t>(plan.nranks));
  for (int r = 0; r < plan.nranks; ++r) {
    coll::Plan copy = original;
    deferred[static_cast<std::size_t>(r)] = deferReductions(copy, r);
    if (r == 0) plan = copy;
    EXPECT_EQ(coll::describePlan(copy), coll::describePlan(plan)) << "every rank transforms the plan alike";
  }
  const std::size_t size = dataTypeSize(plan.type);
  std::vector<coll::HostRankBuffers> buffers = coll::allocateHostBuffers(plan, std::byte{0xa5});
  for (int r = 0; r < plan.nranks; ++r) {
    const coll::RankLayout& layout = plan.ranks[static_cast<std::size_t>(r)];
    Bytes& input = buffers[static_cast<std::size_t>(r)].input;
    std::memcpy(input.data() + layout.send.offset * size, send[static_cast<std::size_t>(r)].data(),
                send[static_cast<std::size_t>(r)].size());
  }
  coll::executePlan(plan, op, buffers);
  std::vector<Bytes> got(static_cast<std::size_t>(plan.nranks));
  for (int r = 0; r < plan.nranks; ++r) {
    coll::HostRankBuffers& mine = buffers[static_cast<std::size_t>(r)];
    for (const DeferredReduction& d : deferred[static_cast<std::size_t>(r)]) {
      std::vector<const void*> srcs;
      for (const coll::BufferRef& src : d.sources) {
        EXPECT_EQ(src.rank, r);
        const Bytes& buffer = src.buffer == coll::BufferKind::Input ? mine.input : mine.scratch;
        EXPECT_LE((src.offset + d.count) * size, buffer.size());
        srcs.push_back(buffer.data() + src.offset * size);
      }
      coll::hostReduce(plan.type, op, mine.output.data() + d.output * size, srcs, d.count, plan.nranks, true);
    }
    if (deferredCounts != nullptr) deferredCounts->push_back(deferred[static_cast<std::size_t>(r)].size());
    const coll::RankLayout& layout = plan.ranks[static_cast<std::size_t>(r)];
    got[static_cast<std::size_t>(r)].assign(
        mine.output.begin() + static_cast<std::ptrdiff_t>(layout.recv.offset * size),
        mine.output.begin() + static_cast<std::ptrdiff_t>((layout.recv.offset + layout.recvElements) * size));
  }
  return got;
}

bool movesDataOnly(const coll::Plan& plan) {
  for (const coll::Step& step : plan.steps) {
    for (const coll::Transfer& t : step.transfers) {
      if (t.kind != coll::TransferKind::Copy) return false;
    }
  }
  return true;
}

struct DeferredCase {
  Collective collective;
  int nranks;
  std::size_t count;
  DataType type;
  ReduceOp op;
};

TEST(NetDeferredReductions, OneShotPlansMoveDataOnlyAndTheCopiesOutReduceToTheClosedForm) {
  const std::vector<DeferredCase> cases = {
      {Collective::AllReduce, 2, 1000, DataType::F32, ReduceOp::Sum},
      {Collective::AllReduce, 2, 37, DataType::BF16, ReduceOp::Avg},
      {Collective::AllReduce, 2, 333, DataType::I32, ReduceOp::Max},
      {Collective::AllReduce, 3, 100, DataType::F16, ReduceOp::Sum},
      {Collective::ReduceScatter, 2, 64, DataType::F32, ReduceOp::Sum},
      {Collective::ReduceScatter, 3, 37, DataType::F32, ReduceOp::Avg},
      {Collective::ReduceScatter, 5, 101, DataType::BF16, ReduceOp::Sum},
      {Collective::ReduceScatter, 8, 16, DataType::U8, ReduceOp::Prod},
  };
  for (const DeferredCase& c : cases) {
    const coll::Plan plan = coll::buildPlan(c.collective, Algorithm::OneShot, c.nranks, c.count, 0, false, 0, c.type);
    const std::string name = coll::planName(plan) + " " + reduceOpName(c.op);
    coll::Plan left = plan;
    const std::vector<DeferredReduction> mine = deferReductions(left, 1);
    ASSERT_FALSE(mine.empty()) << name;
    EXPECT_TRUE(movesDataOnly(left)) << name << "\n" << coll::describePlan(left);
    // Each peer's source lands once, at a 16-byte boundary: the messages carry what the plan's reductions read.
    std::size_t landed = 0;
    for (const DeferredReduction& d : mine) {
      EXPECT_EQ(d.sources.size(), static_cast<std::size_t>(c.nranks)) << name;
      for (const coll::BufferRef& src : d.sources) {
        if (src.buffer != coll::BufferKind::Scratch) continue;
        EXPECT_EQ(src.offset % plan.alignElements, 0u) << name;
        landed += d.count;
      }
    }
    EXPECT_EQ(landed, coll::remoteReadElements(plan)[1]) << name;
    const std::vector<Bytes> send = coll::makeSendData(plan, c.op, 7);
    std::vector<std::size_t> counts;
    const std::vector<Bytes> got = runDeferred(plan, c.op, send, &counts);
    const std::vector<Bytes> want =
        coll::hostReduceReference(plan.collective, plan.type, c.op, plan.nranks, plan.count, plan.root, send);
    const coll::Tolerance tol = coll::tolerance(plan.type, c.op, plan.nranks, c.op == ReduceOp::Prod ? 2.0 : 1.0);
    for (std::size_t r = 0; r < want.size(); ++r) {
      EXPECT_GT(counts[r], 0u) << name << " rank " << r;
      const auto mismatch = coll::findMismatch(plan.type, tol, want[r], got[r]);
      EXPECT_FALSE(mismatch) << name << " rank " << r << ": " << *mismatch;
      if (c.collective == Collective::AllReduce) {
        EXPECT_EQ(got[r], got[0]) << name << ": rank " << r << "'s bits";
      }
    }
  }
}

// A ring's reductions feed its later steps (its all-gather sends what the reduce-scatter reduced): nothing deferred,
// nothing changed. A plan without reductions has none to defer.
TEST(NetDeferredReductions, PlansWhoseReductionsDoNotEndThemAreLeftAsTheyAre) {
  for (const auto& [collective, algorithm] :
       {std::pair{Collective::AllReduce, Algorithm::Ring}, std::pair{Collective::ReduceScatter, Algorithm::Ring},
        std::pair{Collective::AllReduce, Algorithm::TwoShot}, std::pair{Collective::AllGather, Algorithm::OneShot}}) {
    const coll::Plan plan = coll::buildPlan(collective, algorithm, 3, 300, 0, false, 0, DataType::F32);
    coll::Plan left = plan;
    EXPECT_TRUE(deferReductions(left, 0).empty()) << coll::planName(plan);
    EXPECT_EQ(coll::describePlan(left), coll::describePlan(plan)) << coll::planName(plan);
  }
}

}  // namespace
}  // namespace peerlink::net
