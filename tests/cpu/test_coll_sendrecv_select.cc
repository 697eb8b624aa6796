// Send/recv groups' kernel (chooseKernel for Collective::SendRecv, by the most one rank of the group sends):
// LL lines for small groups, the receivers' copy kernel between, the senders' copy engines for large groups,
// under PEERLINK_PROTO and PEERLINK_COLL_CE. Expected choices are written out by hand.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

using testing::allDevices;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

Topology load(const std::string& name) {
  return testing::loadTopologyFixture(name);
}

// Send/recv: AUTO pushes a group's sends with the copy engines once one rank sends 64 MiB in it (round 50:
// the pulling kernels fell to 0.92x NCCL from 256 MiB), on an NVLink mesh only; 1 at any size; 0 never.
TEST(KernelSelect, CopyEnginesForLargeSends) {
  const Topology vm = load("h200x4_vm");
  const std::vector<int> devices = allDevices(vm);
  const auto choiceOf = [&](std::size_t bytes, CopyEngineMode mode, bool mesh = true) {
    return kernelForAlgorithm(Collective::SendRecv, bytes, false, 4, mesh,
                              chooseAlgorithm(Collective::SendRecv, bytes, vm, devices), Protocol::Auto, 1024 * kKiB,
                              PushMode::Auto, true, mode);
  };
  EXPECT_EQ(choiceOf(64 * kMiB, CopyEngineMode::Auto).kernel, Kernel::CeCopy);
  EXPECT_EQ(choiceOf(64 * kMiB - 1, CopyEngineMode::Auto).kernel, Kernel::Copy);
  EXPECT_EQ(choiceOf(8, CopyEngineMode::Auto).kernel, Kernel::LlPairs);                // LL lines, not the copy engines
  EXPECT_EQ(choiceOf(1024 * kMiB, CopyEngineMode::Auto, false).kernel, Kernel::Copy);  // no mesh: unmeasured
  EXPECT_EQ(choiceOf(8, CopyEngineMode::On).kernel, Kernel::CeCopy);
  EXPECT_EQ(choiceOf(1024 * kMiB, CopyEngineMode::Off).kernel, Kernel::Copy);
  const KernelChoice large = choiceOf(96 * kMiB, CopyEngineMode::Auto);
  EXPECT_EQ(large.algorithm, Algorithm::OneShot);
  EXPECT_NE(large.reason().find("; a rank pushes 96 MiB >= 64 MiB: each rank's copy engine pushes its sends into the "
                                "receivers' buffers between two barrier kernels"),
            std::string::npos)
      << large.reason();
  // The copy engines write into the receivers.
  const auto stores = [&](std::size_t bytes) {
    ChoiceResources resources;
    resources.llMaxBytes = 1024 * kKiB;
    resources.maxBlocks = 132;
    return storesIntoPeers(chooseCollective({Collective::SendRecv, bytes, 4, Fact::No, Fact::Unknown},
                                            fabricOf(vm, devices), resources, {}));
  };
  EXPECT_TRUE(stores(96 * kMiB));
  EXPECT_FALSE(stores(kMiB));  // receivers pull
}

// Send/recv groups in which no rank sends more than a pair's slot of LL lines holds (256 KiB) run in them
// (3.3-4.9 us a group in a graph on 4x H100 against the copy kernel's 5.1-7.1, round 51), off an NVLink mesh
// up to 64 KiB, whatever PEERLINK_PROTO says but SIMPLE; PEERLINK_COLL_CE=1 keeps every group on the copy
// engines; never LL128 lines.
TEST(KernelSelect, LlLinesForSmallSendRecvGroups) {
  const Topology vm = load("h200x4_vm");
  const std::vector<int> devices = allDevices(vm);
  const auto choiceOf = [&](std::size_t bytes, Protocol protocol, CopyEngineMode mode = CopyEngineMode::Auto,
                            bool mesh = true) {
    return kernelForAlgorithm(Collective::SendRecv, bytes, false, 4, mesh,
                              chooseAlgorithm(Collective::SendRecv, bytes, vm, devices), protocol, 1024 * kKiB,
                              PushMode::Auto, true, mode);
  };
  EXPECT_EQ(choiceOf(0, Protocol::Auto).kernel, Kernel::LlPairs);
  EXPECT_EQ(choiceOf(256 * kKiB, Protocol::Auto).kernel, Kernel::LlPairs);
  EXPECT_EQ(choiceOf(256 * kKiB + 1, Protocol::Auto).kernel, Kernel::Copy);
  EXPECT_EQ(choiceOf(256 * kKiB, Protocol::Ll).kernel, Kernel::LlPairs);
  EXPECT_EQ(choiceOf(256 * kKiB, Protocol::Ll128).kernel, Kernel::LlPairs);
  EXPECT_EQ(choiceOf(256 * kKiB + 1, Protocol::Ll).kernel, Kernel::Copy);
  // Off an NVLink mesh as far as the copy collectives' LL (64 KiB), unless forced.
  EXPECT_EQ(choiceOf(64 * kKiB, Protocol::Auto, CopyEngineMode::Auto, false).kernel, Kernel::LlPairs);
  EXPECT_EQ(choiceOf(64 * kKiB + 1, Protocol::Auto, CopyEngineMode::Auto, false).kernel, Kernel::Copy);
  EXPECT_EQ(choiceOf(256 * kKiB, Protocol::Ll, CopyEngineMode::Auto, false).kernel, Kernel::LlPairs);
  EXPECT_EQ(choiceOf(8, Protocol::Simple).kernel, Kernel::Copy);
  EXPECT_EQ(choiceOf(8, Protocol::Auto, CopyEngineMode::On).kernel, Kernel::CeCopy);
  EXPECT_EQ(choiceOf(8, Protocol::Auto, CopyEngineMode::Off).kernel, Kernel::LlPairs);
  const KernelChoice small = choiceOf(4 * kKiB, Protocol::Auto);
  EXPECT_EQ(small.algorithm, Algorithm::OneShot);
  EXPECT_NE(small.reason().find("LL lines (a rank sends <= 256 KiB: one flag wait, no barrier)"), std::string::npos)
      << small.reason();
  EXPECT_NE(choiceOf(8, Protocol::Ll).reason().find("forced by PEERLINK_PROTO=LL"), std::string::npos);
  for (Protocol protocol : {Protocol::Auto, Protocol::Ll128}) {
    EXPECT_EQ(withLineFormat(choiceOf(8, protocol), Collective::SendRecv, 8, 4, protocol, true).kernel,
              Kernel::LlPairs);
  }
}

}  // namespace
}  // namespace peerlink::coll
