// The LL line format (withLineFormat, ll128Capable): LL128 only where every pair talks over NVLink and every
// GPU is compute capability 9.0+, forced by PEERLINK_PROTO=LL128 or under AUTO for all-reduce and reduce at
// every size and for the other collectives from a size on; LL128 never replaces anything but LL. Expected
// choices are written out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/choice_rules.hpp"
#include "coll_lists.hpp"
#include "kernels/coll_kernels.cuh"
#include "peerlink/topology.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

Topology load(const std::string& name) {
  return testing::loadTopologyFixture(name);
}
using testing::allDevices;

// A one-shot choice of `kernel` whose reasons so far are "why".
KernelChoice choiceOf(Kernel kernel) {
  KernelChoice choice;
  choice.kernel = kernel;
  choice.wanted = kernel;
  choice.add("why");
  return choice;
}

// The whole choice as the communicator makes it for aligned buffers, with push stages and the LL scratch.
CollectiveChoice callChoiceOf(Collective collective, std::size_t bytes, bool inPlace, const Topology& topology,
                              const std::vector<int>& devices, const ChoiceSettings& settings) {
  ChoiceResources resources;
  resources.pushStages = true;
  resources.llMaxBytes = kernels::kCollLlMaxBytes;
  resources.maxBlocks = 132;
  const CallShape call{collective, bytes, static_cast<int>(devices.size()), inPlace ? Fact::Yes : Fact::No, Fact::Yes};
  return chooseCollective(call, fabricOf(topology, devices), resources, settings);
}

TEST(LineFormat, ProtocolSpellings) {
  EXPECT_EQ(parseProtocol("ll128"), Protocol::Ll128);
  EXPECT_EQ(parseProtocol("LL128"), Protocol::Ll128);
  EXPECT_STREQ(protocolName(Protocol::Ll128), "LL128");
  EXPECT_EQ(parseProtocol("LL12"), std::nullopt);
  EXPECT_STREQ(kernelName(Kernel::Ll128OneShot), "ll128");
}

TEST(LineFormat, CapableOnlyOnAnNvlinkMeshOfHopper) {
  const Topology h200 = load("h200x4_vm");
  EXPECT_TRUE(fabricOf(h200, allDevices(h200)).ll128Capable);
  EXPECT_TRUE(fabricOf(h200, {1, 3}).ll128Capable);
  const Topology h100 = load("h100x8_nvswitch");
  EXPECT_TRUE(fabricOf(h100, allDevices(h100)).ll128Capable);
  for (const char* name : {"rtx4090x2", "dual_socket_pcie", "pcie_10gpu", "vm_flat_numa_unknown"}) {
    const Topology pcie = load(name);
    EXPECT_FALSE(fabricOf(pcie, allDevices(pcie)).ll128Capable) << name;
  }
  // An NVLink mesh of an older GPU: the 128-byte ordering is trusted only where it has been run.
  Topology older = h200;
  older.gpus[2].ccMajor = 8;
  EXPECT_FALSE(fabricOf(older, allDevices(older)).ll128Capable);
  EXPECT_TRUE(fabricOf(older, {0, 1}).ll128Capable);
}

TEST(LineFormat, ReplacesOnlyLl) {
  const KernelChoice ll = choiceOf(Kernel::LlOneShot);
  const KernelChoice copy = choiceOf(Kernel::Copy);
  const Collective gather = Collective::AllGather;
  // AUTO: LL128 once a rank's LL lines, 2 (n - 1) x the message, reach 32 KiB: 16 KiB messages on 2 ranks,
  // 5462 bytes on 4, 2341 on 8.
  EXPECT_EQ(withLineFormat(ll, gather, 16 * kKiB - 1, 2, Protocol::Auto, true).kernel, Kernel::LlOneShot);
  const KernelChoice auto128 = withLineFormat(ll, gather, 16 * kKiB, 2, Protocol::Auto, true);
  EXPECT_EQ(auto128.kernel, Kernel::Ll128OneShot);
  EXPECT_EQ(auto128.algorithm, Algorithm::OneShot);
  EXPECT_EQ(auto128.reason(),
            "why; in LL128 lines (LL's would put 32 KiB >= 32 KiB on a rank's links; LL128 carries 120 payload bytes "
            "per 128)");
  EXPECT_EQ(withLineFormat(ll, gather, 5461, 4, Protocol::Auto, true).kernel, Kernel::LlOneShot);
  EXPECT_EQ(withLineFormat(ll, gather, 5462, 4, Protocol::Auto, true).kernel, Kernel::Ll128OneShot);
  EXPECT_EQ(withLineFormat(ll, gather, 2340, 8, Protocol::Auto, true).kernel, Kernel::LlOneShot);
  EXPECT_EQ(withLineFormat(ll, gather, 2341, 8, Protocol::Auto, true).kernel, Kernel::Ll128OneShot);
  // One rank sends nothing: its lines count as one peer's, so it follows the 2-rank line.
  EXPECT_EQ(withLineFormat(ll, gather, 16 * kKiB, 1, Protocol::Auto, true).kernel, Kernel::Ll128OneShot);
  EXPECT_EQ(withLineFormat(ll, gather, 64 * kKiB, 2, Protocol::Auto, false).kernel, Kernel::LlOneShot);
  EXPECT_EQ(withLineFormat(ll, gather, 64 * kKiB, 2, Protocol::Auto, false).reason(), "why");
  // The line holds for every collective but the reductions of whole messages, which take LL128 at any size.
  for (Collective collective : {Collective::ReduceScatter, Collective::Broadcast, Collective::AllToAll}) {
    EXPECT_EQ(withLineFormat(ll, collective, 8, 4, Protocol::Auto, true).kernel, Kernel::LlOneShot)
        << collectiveName(collective);
  }
  for (Collective collective : {Collective::AllReduce, Collective::Reduce}) {
    const KernelChoice reduction = withLineFormat(ll, collective, 8, 4, Protocol::Auto, true);
    EXPECT_EQ(reduction.kernel, Kernel::Ll128OneShot) << collectiveName(collective);
    EXPECT_EQ(reduction.reason(),
              "why; in LL128 lines (a reduction of whole messages: LL128's as fast as LL's at one line)");
    EXPECT_EQ(withLineFormat(ll, collective, 8, 2, Protocol::Auto, true).kernel, Kernel::Ll128OneShot);
    EXPECT_EQ(withLineFormat(ll, collective, 8, 4, Protocol::Auto, false).kernel, Kernel::LlOneShot);
  }
  // PEERLINK_PROTO=LL keeps LL; =LL128 takes LL128 at every LL size where capable, says why not elsewhere.
  EXPECT_EQ(withLineFormat(ll, gather, 64 * kKiB, 2, Protocol::Ll, true).kernel, Kernel::LlOneShot);
  EXPECT_EQ(withLineFormat(ll, Collective::AllReduce, 8, 2, Protocol::Ll, true).kernel, Kernel::LlOneShot);
  EXPECT_EQ(withLineFormat(ll, gather, 8, 2, Protocol::Ll128, true).kernel, Kernel::Ll128OneShot);
  const KernelChoice refused = withLineFormat(ll, gather, 8, 2, Protocol::Ll128, false);
  EXPECT_EQ(refused.kernel, Kernel::LlOneShot);
  EXPECT_EQ(refused.reason(), "why; LL lines: LL128 needs NVLink between every pair and compute capability 9.0+");
  for (Protocol protocol : {Protocol::Auto, Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
    for (Collective collective : {gather, Collective::AllReduce}) {
      EXPECT_EQ(withLineFormat(copy, collective, 64 * kKiB, 4, protocol, true).kernel, Kernel::Copy);
    }
  }
}

// The whole choice as the communicator makes it, on the fixtures.
TEST(LineFormat, CallKernelOnFixtures) {
  const Topology h200 = load("h200x4_vm");
  const Topology pcie = load("rtx4090x2");
  ChoiceSettings forced;
  forced.protocol = Protocol::Ll128;
  for (Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;  // LL lines only (below)
    EXPECT_EQ(callChoiceOf(collective, 8, false, h200, allDevices(h200), forced).kernel, Kernel::Ll128OneShot)
        << collectiveName(collective);
    EXPECT_EQ(callChoiceOf(collective, 64 * kKiB, false, h200, allDevices(h200), {}).kernel, Kernel::Ll128OneShot)
        << collectiveName(collective);
    EXPECT_EQ(callChoiceOf(collective, 8, false, pcie, allDevices(pcie), forced).kernel, Kernel::LlOneShot)
        << collectiveName(collective);
    // Past LL's range nothing changes.
    EXPECT_NE(callChoiceOf(collective, 64 * kMiB, false, h200, allDevices(h200), forced).kernel, Kernel::Ll128OneShot)
        << collectiveName(collective);
  }
  EXPECT_EQ(callChoiceOf(Collective::SendRecv, 64 * kKiB, false, h200, allDevices(h200), forced).kernel,
            Kernel::LlPairs);
  EXPECT_EQ(callChoiceOf(Collective::SendRecv, 512 * kKiB, false, h200, allDevices(h200), forced).kernel, Kernel::Copy);
  // AUTO's line moves with the ranks: 16 KiB all-gathers on two GPUs, 8 KiB ones on four. All-reduce and
  // reduce take LL128 from one element, where the GPUs can.
  const std::vector<int> two = {0, 1};
  EXPECT_EQ(callChoiceOf(Collective::AllGather, 8 * kKiB, false, h200, two, {}).kernel, Kernel::LlOneShot);
  EXPECT_EQ(callChoiceOf(Collective::AllGather, 16 * kKiB, false, h200, two, {}).kernel, Kernel::Ll128OneShot);
  EXPECT_EQ(callChoiceOf(Collective::AllGather, 4 * kKiB, false, h200, allDevices(h200), {}).kernel, Kernel::LlOneShot);
  EXPECT_EQ(callChoiceOf(Collective::AllGather, 8 * kKiB, false, h200, allDevices(h200), {}).kernel,
            Kernel::Ll128OneShot);
  for (Collective collective : {Collective::AllReduce, Collective::Reduce}) {
    EXPECT_EQ(callChoiceOf(collective, 4, false, h200, allDevices(h200), {}).kernel, Kernel::Ll128OneShot);
    EXPECT_EQ(callChoiceOf(collective, 4, false, h200, two, {}).kernel, Kernel::Ll128OneShot);
    EXPECT_EQ(callChoiceOf(collective, 4, false, pcie, allDevices(pcie), {}).kernel, Kernel::LlOneShot);
  }
  // LL's size limit counts LL128 lines where they carry the message, with their own budget: 1.75 MiB of
  // them per rank is 573360-byte messages on four GPUs (LL lines, 1 MiB: 174762), past one-shot's own
  // 256 KiB for all-reduce and broadcast, and the whole LL scratch (1 MiB) on two.
  for (Collective collective : {Collective::AllGather, Collective::AllReduce, Collective::Broadcast}) {
    EXPECT_EQ(callChoiceOf(collective, 573360, false, h200, allDevices(h200), {}).kernel, Kernel::Ll128OneShot)
        << collectiveName(collective);
    EXPECT_NE(callChoiceOf(collective, 573361, false, h200, allDevices(h200), {}).kernel, Kernel::Ll128OneShot)
        << collectiveName(collective);
  }
  ChoiceSettings ll;
  ll.protocol = Protocol::Ll;
  // Counted in LL lines (chooseKernel without ll128Lines) the LL budget ends at 174762 bytes.
  const AlgorithmChoice direct{Algorithm::OneShot, "why"};
  EXPECT_EQ(kernelForAlgorithm(Collective::AllGather, 174762, false, 4, true, direct, Protocol::Auto, kMiB).kernel,
            Kernel::LlOneShot);
  EXPECT_EQ(kernelForAlgorithm(Collective::AllGather, 174763, false, 4, true, direct, Protocol::Auto, kMiB).kernel,
            Kernel::Copy);
  EXPECT_EQ(kernelForAlgorithm(Collective::AllGather, 174763, false, 4, true, direct, Protocol::Auto, kMiB,
                               PushMode::Auto, true)
                .kernel,
            Kernel::LlOneShot);
  EXPECT_EQ(callChoiceOf(Collective::AllGather, 256 * kKiB, false, h200, allDevices(h200), ll).kernel,
            Kernel::LlOneShot);
  const CollectiveChoice twoGpus = callChoiceOf(Collective::AllReduce, kMiB, false, h200, two, {});
  EXPECT_EQ(twoGpus.kernel, Kernel::Ll128OneShot);
  EXPECT_NE(reasonText(twoGpus).find("but LL one-shot puts 1.1 MiB <= 1.8 MiB of LL128 lines"), std::string::npos)
      << reasonText(twoGpus);
  EXPECT_EQ(callChoiceOf(Collective::AllReduce, kMiB + 1, false, h200, two, {}).kernel, Kernel::TwoShot);
  // A reduce's ranks send to the root alone: its LL128 lines may put 3.5 MiB on the root's links, the
  // whole LL scratch on four GPUs, 480 KiB messages on eight.
  const CollectiveChoice reduce = callChoiceOf(Collective::Reduce, kMiB, false, h200, allDevices(h200), {});
  EXPECT_EQ(reduce.kernel, Kernel::Ll128OneShot);
  EXPECT_NE(reasonText(reduce).find("but LL one-shot puts 3.2 MiB <= 3.5 MiB of LL128 lines"), std::string::npos)
      << reasonText(reduce);
  const AlgorithmChoice twoShot{Algorithm::TwoShot, "why"};
  EXPECT_EQ(kernelForAlgorithm(Collective::Reduce, 480 * kKiB, false, 8, true, twoShot, Protocol::Auto, kMiB,
                               PushMode::Auto, true)
                .kernel,
            Kernel::LlOneShot);
  EXPECT_EQ(kernelForAlgorithm(Collective::Reduce, 480 * kKiB + 1, false, 8, true, twoShot, Protocol::Auto, kMiB,
                               PushMode::Auto, true)
                .kernel,
            Kernel::TwoShot);
  EXPECT_EQ(callChoiceOf(Collective::Reduce, kMiB + 1, false, h200, allDevices(h200), {}).kernel, Kernel::TwoShot);
  EXPECT_EQ(callChoiceOf(Collective::Reduce, 256 * kKiB + 1, false, h200, allDevices(h200), ll).kernel,
            Kernel::TwoShot);
}

}  // namespace
}  // namespace peerlink::coll
