#include <gtest/gtest.h>

#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

Topology gpusWithBusIds(const std::vector<std::string>& busIds) {
  Topology topology;
  for (size_t i = 0; i < busIds.size(); ++i) {
    Gpu gpu;
    gpu.cudaOrdinal = static_cast<int>(i);
    gpu.nvmlIndex = static_cast<int>(i);
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.pciBusId = busIds[i];
    topology.gpus.push_back(gpu);
    topology.nvmlGpus.push_back({static_cast<int>(i), gpu.uuid, gpu.pciBusId});
  }
  return topology;
}

TEST(OrderingWarnings, NoneWhenCudaNvmlAndPciAgree) {
  EXPECT_TRUE(orderingWarnings(gpusWithBusIds({"0000:06:00.0", "0000:07:00.0"})).empty());
}

TEST(OrderingWarnings, CudaOrderDifferentFromPciOrder) {
  Topology topology = gpusWithBusIds({"0000:81:00.0", "0000:06:00.0"});
  const auto warnings = orderingWarnings(topology);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("CUDA 0 = 0000:81:00.0"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("CUDA_DEVICE_ORDER is unset"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos) << warnings[0];
}

TEST(OrderingWarnings, CudaNumbersDifferentFromNvidiaSmi) {
  Topology topology = gpusWithBusIds({"0000:06:00.0", "0000:07:00.0"});
  topology.gpus[0].nvmlIndex = 1;
  topology.gpus[1].nvmlIndex = 0;
  const auto warnings = orderingWarnings(topology);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("CUDA 0 is nvidia-smi GPU 1"), std::string::npos) << warnings[0];
}

TEST(OrderingWarnings, GpusHiddenByCudaVisibleDevices) {
  Topology topology = gpusWithBusIds({"0000:06:00.0", "0000:07:00.0", "0000:08:00.0"});
  topology.gpus.erase(topology.gpus.begin() + 1, topology.gpus.end());
  topology.cudaVisibleDevices = "0";
  const auto warnings = orderingWarnings(topology);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("CUDA_VISIBLE_DEVICES=0 hides 2 of 3 GPUs"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("nvidia-smi GPU 2 (0000:08:00.0)"), std::string::npos) << warnings[0];
}

TEST(OrderingWarnings, GpusHiddenWithoutCudaVisibleDevices) {
  Topology topology = gpusWithBusIds({"0000:06:00.0", "0000:07:00.0"});
  topology.gpus.pop_back();
  const auto warnings = orderingWarnings(topology);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("sees 1 of the 2 GPUs"), std::string::npos) << warnings[0];
}

TEST(OrderingWarnings, WithoutNvmlOnlyPciOrderIsChecked) {
  Topology topology = gpusWithBusIds({"0000:06:00.0", "0000:07:00.0"});
  topology.nvmlGpus.clear();
  for (Gpu& gpu : topology.gpus) gpu.nvmlIndex = -1;
  EXPECT_TRUE(orderingWarnings(topology).empty());
}

}  // namespace
}  // namespace peerlink
