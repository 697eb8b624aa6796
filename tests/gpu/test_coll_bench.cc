// The coll harness on real GPUs: every collective, every configuration that can run here, checked against
// the host reference (NCCL's results too: a wrong NCCL result means a broken platform or harness).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "coll_bench/coll_bench.hpp"
#include "coll_lists.hpp"
#include "gpu_test_support.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {
namespace {

CollBenchOptions smallRun(Collective collective) {
  CollBenchOptions options;
  options.collective = collective;
  options.sizes = {8, 4096, 1 << 20};
  options.iterations = 3;
  options.warmup = 1;
  options.gpus = 2;
  return options;
}

std::string traceOf(std::size_t bytes, Placement placement, CollConfig config) {
  return std::to_string(bytes) + " B " + (placement == Placement::InPlace ? "in-place " : "out-of-place ") +
         collConfigName(config);
}

void expectCorrect(const CollRun& run) {
  for (const CollRow& row : run.rows) {
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      for (CollConfig config : kCollConfigs) {
        const CollMeasurement& m = row.at(placement)[static_cast<int>(config)];
        SCOPED_TRACE(traceOf(row.bytes, placement, config));
        EXPECT_NE(m.status, CollMeasurement::Status::Failed) << m.reason;
        if (m.ok()) {
          EXPECT_EQ(m.wrong, 0);
          EXPECT_GT(m.timeUs, 0);
        } else {
          EXPECT_FALSE(m.reason.empty());
        }
      }
    }
  }
}

TEST(GpuCollBench, EveryCollectiveIsCorrectInEveryConfiguration) {
  PEERLINK_REQUIRE_GPUS(2);
  for (Collective collective : kEveryCollective) {
    SCOPED_TRACE(collectiveName(collective));
    CollBenchOptions options = smallRun(collective);
    options.root = 1;
    const CollRun run = runCollBench(Params::fromEnvironment(), options);
    ASSERT_EQ(run.ranks, 2);
    ASSERT_EQ(run.rows.size(), 3u);
    expectCorrect(run);
    if (!run.nccl.loaded) std::printf("NCCL not loaded: %s\n", run.nccl.reason.c_str());
  }
}

TEST(GpuCollBench, NvlsIsOffForNccl) {
  PEERLINK_REQUIRE_GPUS(2);
  CollBenchOptions options = smallRun(Collective::AllReduce);
  options.peerlink = false;
  options.sizes = {1024};
  const CollRun run = runCollBench(Params::fromEnvironment(), options);
  ASSERT_NE(std::getenv("NCCL_NVLS_ENABLE"), nullptr);
  EXPECT_FALSE(run.nccl.nvls.empty());
  if (!run.nccl.loaded) GTEST_SKIP() << "NCCL not loaded: " << run.nccl.reason;
  EXPECT_TRUE(run.configs[static_cast<int>(CollConfig::Nccl)].available);
  expectCorrect(run);
}

TEST(GpuCollBench, PerRankCaptureAndOtherTypes) {
  PEERLINK_REQUIRE_GPUS(2);
  for (DataType type : {DataType::BF16, DataType::F16, DataType::I8, DataType::F64}) {
    SCOPED_TRACE(dataTypeName(type));
    CollBenchOptions options = smallRun(Collective::AllReduce);
    options.type = type;
    options.op = type == DataType::I8 ? ReduceOp::Max : ReduceOp::Sum;
    options.capture = GraphCapture::PerRank;
    expectCorrect(runCollBench(Params::fromEnvironment(), options));
  }
}

// --iteration-times: every eager cell (peerlink's and NCCL's plain) holds one time per iteration, each
// positive, summing to about the cell's whole time; graph cells hold none.
TEST(GpuCollBench, IterationTimesForEagerCells) {
  PEERLINK_REQUIRE_GPUS(2);
  for (Collective collective : {Collective::AllReduce, Collective::SendRecv}) {
    SCOPED_TRACE(collectiveName(collective));
    CollBenchOptions options = smallRun(collective);
    options.iterations = 7;
    options.iterationTimes = true;
    const CollRun run = runCollBench(Params::fromEnvironment(), options);
    expectCorrect(run);
    for (const CollRow& row : run.rows) {
      for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
        for (CollConfig config : kCollConfigs) {
          const CollMeasurement& m = row.at(placement)[static_cast<int>(config)];
          SCOPED_TRACE(traceOf(row.bytes, placement, config));
          const bool eager = config == CollConfig::Peerlink || config == CollConfig::Nccl;
          if (!m.ok() || !eager) {
            EXPECT_TRUE(m.iterationUs.empty());
            continue;
          }
          ASSERT_EQ(m.iterationUs.size(), 7u);
          double sum = 0;
          for (double us : m.iterationUs) {
            EXPECT_GT(us, 0);
            sum += us;
          }
          // Each iteration is its slowest rank's; the whole, the slowest rank's over all of them.
          EXPECT_GE(sum / 7 * 1.0001, m.timeUs);
        }
      }
    }
  }
}

TEST(GpuCollBench, TooManyGpusIsAUsageError) {
  PEERLINK_REQUIRE_GPUS(1);
  CollBenchOptions options = smallRun(Collective::AllReduce);
  options.gpus = 1000;
  EXPECT_THROW(runCollBench(Params::fromEnvironment(), options), Error);
}

}  // namespace
}  // namespace peerlink::coll
