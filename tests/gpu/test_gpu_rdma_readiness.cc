// GPUDirect RDMA readiness on real GPUs: CUDA answers for every GPU (the attributes DMA-BUF and
// nvidia_peermem registration rest on), and `peerlink doctor` prints the section after the pairs.
#include <gtest/gtest.h>

#include <string>

#include "cpu/cli_runner.hpp"
#include "gpu_test_support.hpp"
#include "peerlink/params.hpp"
#include "peerlink/rdma_readiness.hpp"

namespace peerlink {
namespace {

TEST(RdmaReadinessGpu, CudaAnswersForEveryGpu) {
  PEERLINK_REQUIRE_GPUS(1);
  const Topology topology = discoverTopology(Params::fromEnvironment());
  const RdmaReadiness r = checkRdmaReadiness(topology);
  ASSERT_EQ(r.snapshot.gpus.size(), topology.gpus.size());
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    EXPECT_TRUE(r.snapshot.gpus[i].gpuDirectRdma.has_value()) << "GPU " << i;
    EXPECT_TRUE(r.snapshot.gpus[i].dmaBuf.has_value()) << "GPU " << i;
  }
  EXPECT_EQ(r.nearest.size(), topology.gpus.size());
  EXPECT_FALSE(r.summary.empty());
}

TEST(RdmaReadinessGpu, DoctorPrintsTheSectionAfterThePairs) {
  PEERLINK_REQUIRE_GPUS(2);
  const cli::CliResult r = cli::runCli({"doctor", "--no-cache", "--no-cross-process"});
  const std::size_t overall = r.out.find("\nOverall: ");
  const std::size_t rdma = r.out.find("\nGPUDirect RDMA");
  ASSERT_NE(overall, std::string::npos) << r.out;
  ASSERT_NE(rdma, std::string::npos) << r.out;
  EXPECT_LT(overall, rdma);
  const cli::CliResult quick = cli::runCli({"doctor", "--quick", "--no-cache", "--no-cross-process"});
  EXPECT_EQ(quick.out.find("GPUDirect RDMA"), std::string::npos) << quick.out;  // --quick checks no platform
}

}  // namespace
}  // namespace peerlink
