// Algorithm choice on every topology fixture and size class, the reasons it gives, PEERLINK_ALGO,
// algorithmsOf's agreement with the plans that exist, and the kernel (LL or not) under PEERLINK_PROTO
// (send/recv's: test_coll_sendrecv_select.cc).
// Expected choices are written out by hand.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/plan.hpp"
#include "coll_lists.hpp"
#include "peerlink/topology.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
const fs::path kFixtures = fs::path(PEERLINK_FIXTURES_DIR) / "topologies";

Topology load(const std::string& name) {
  return testing::loadTopologyFixture(name);
}
using testing::allDevices;

// Which fixtures are an NVLink mesh (every pair NVLink, directly or through NVSwitch). A new fixture must be
// added here, so its expectations are thought about.
const std::map<std::string, bool> kNvlinkMesh = {
    {"h100x8_nvswitch", true},
    {"h200x4_vm", true},
    {"dual_socket_pcie", false},
    {"pcie_10gpu", false},
    {"rtx4090x2", false},
    {"vm_flat_numa_unknown", false},
    {"a6000x8_nvlink_bridges", false},
};

Algorithm expected(Collective collective, std::size_t bytes, bool mesh, int n) {
  switch (collective) {
    case Collective::AllReduce:
      if (bytes <= (mesh ? 256 * kKiB : 64 * kKiB)) return Algorithm::OneShot;
      return mesh && (n <= 2 || bytes < 128 * kMiB) ? Algorithm::TwoShot : Algorithm::Ring;
    case Collective::ReduceScatter:
      if (mesh && n > 2 && bytes >= 32 * kMiB) return Algorithm::Ring;
      return mesh || bytes <= 64 * kKiB ? Algorithm::OneShot : Algorithm::Ring;
    case Collective::AllGather: return mesh || bytes <= 64 * kKiB ? Algorithm::OneShot : Algorithm::Ring;
    case Collective::Broadcast:
    case Collective::Reduce:
      if (n > 2 && mesh && bytes >= (collective == Collective::Broadcast ? 64 : 32) * kMiB) return Algorithm::Ring;
      return n > 2 && bytes > 256 * kKiB ? Algorithm::TwoShot : Algorithm::OneShot;
    case Collective::AllToAll:
    case Collective::SendRecv: return Algorithm::OneShot;
  }
  return Algorithm::Auto;
}

TEST(AlgorithmSelect, EveryFixtureEverySize) {
  int fixtures = 0;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    ASSERT_EQ(kNvlinkMesh.count(name), 1u) << "new fixture " << name << ": add it to kNvlinkMesh";
    const Topology topology = load(name);
    const std::vector<int> devices = allDevices(topology);
    const int n = static_cast<int>(devices.size());
    for (Collective collective : kEveryCollective) {
      for (std::size_t bytes :
           {std::size_t{0}, 4 * kKiB, 64 * kKiB, 64 * kKiB + 1, 256 * kKiB, 256 * kKiB + 1, 64 * kMiB, 8192 * kMiB}) {
        const AlgorithmChoice choice = chooseAlgorithm(collective, bytes, topology, devices);
        EXPECT_EQ(choice.algorithm, expected(collective, bytes, kNvlinkMesh.at(name), n))
            << name << " " << collectiveName(collective) << " " << bytes << ": " << choice.reason;
        EXPECT_FALSE(choice.reason.empty());
        const std::vector<Algorithm> available = algorithmsOf(collective);
        EXPECT_NE(std::find(available.begin(), available.end(), choice.algorithm), available.end());
      }
    }
    ++fixtures;
  }
  EXPECT_EQ(fixtures, static_cast<int>(kNvlinkMesh.size()));
}

TEST(AlgorithmSelect, ReasonsNameSizesAndLinks) {
  const Topology nvswitch = load("h100x8_nvswitch");
  const Topology pcie = load("dual_socket_pcie");
  EXPECT_EQ(chooseAlgorithm(Collective::AllReduce, 64 * kKiB, nvswitch, allDevices(nvswitch)).reason,
            "64 KiB per rank <= 256 KiB (NVLink between every pair): one-shot (latency-bound)");
  EXPECT_EQ(chooseAlgorithm(Collective::AllReduce, 3 * kMiB / 2, nvswitch, allDevices(nvswitch)).reason,
            "1.5 MiB per rank > 256 KiB on an NVLink mesh: two-shot (reads 1.75x the data per rank, 2 steps)");
  EXPECT_EQ(chooseAlgorithm(Collective::AllReduce, 16 * kMiB, pcie, allDevices(pcie)).reason,
            "16 MiB per rank > 64 KiB, no NVLink mesh (GPU 0 -> 1 PXB): ring (stores 1.5x the data per rank, "
            "neighbours only)");
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 1 * kMiB, pcie, allDevices(pcie)).reason,
            "1 MiB per rank > 256 KiB: two-shot (the root's link carries the data once, not 3x)");
  EXPECT_EQ(chooseAlgorithm(Collective::AllToAll, 1 * kMiB, pcie, allDevices(pcie)).reason,
            "the collective's only algorithm");
}

TEST(AlgorithmSelect, SubsetsOfDevices) {
  const Topology nvswitch = load("h100x8_nvswitch");
  // Two GPUs of the NVSwitch machine are still a mesh; one GPU is a local copy.
  EXPECT_EQ(chooseAlgorithm(Collective::AllGather, 64 * kMiB, nvswitch, {3, 5}).algorithm, Algorithm::OneShot);
  const AlgorithmChoice one = chooseAlgorithm(Collective::AllReduce, 64 * kMiB, nvswitch, {2});
  EXPECT_EQ(one.algorithm, Algorithm::OneShot);
  EXPECT_EQ(one.reason, "1 rank: a local copy");
  // A device the topology does not know is not assumed to be on NVLink.
  const AlgorithmChoice unknown = chooseAlgorithm(Collective::AllReduce, 64 * kMiB, nvswitch, {0, 99});
  EXPECT_EQ(unknown.algorithm, Algorithm::Ring);
  EXPECT_NE(unknown.reason.find("GPU 0 -> 99 unknown to the topology"), std::string::npos) << unknown.reason;
}

TEST(AlgorithmSelect, ForcedAlgorithm) {
  const Topology nvswitch = load("h100x8_nvswitch");
  const std::vector<int> devices = allDevices(nvswitch);
  const AlgorithmChoice ring = chooseAlgorithm(Collective::AllReduce, 4 * kKiB, nvswitch, devices, Algorithm::Ring);
  EXPECT_EQ(ring.algorithm, Algorithm::Ring);
  EXPECT_EQ(ring.reason, "forced by PEERLINK_ALGO=RING");
  const AlgorithmChoice fallback =
      chooseAlgorithm(Collective::AllGather, 4 * kKiB, nvswitch, devices, Algorithm::TwoShot);
  EXPECT_EQ(fallback.algorithm, Algorithm::OneShot);
  EXPECT_EQ(fallback.reason.rfind("PEERLINK_ALGO=TWOSHOT is not an algorithm of all_gather; 4 KiB per rank", 0), 0u)
      << fallback.reason;
  // Broadcast has a ring (the chain of stores): below 64 MiB only when asked for.
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 32 * kMiB, nvswitch, devices, Algorithm::Ring).algorithm,
            Algorithm::Ring);
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 32 * kMiB, nvswitch, devices).algorithm, Algorithm::TwoShot);
  const KernelChoice ringKernel =
      kernelForAlgorithm(Collective::Broadcast, 32 * kMiB, false, 8, true,
                         chooseAlgorithm(Collective::Broadcast, 32 * kMiB, nvswitch, devices, Algorithm::Ring),
                         Protocol::Auto, 1024 * kKiB);
  EXPECT_EQ(ringKernel.kernel, Kernel::RingBroadcast);
  EXPECT_EQ(ringKernel.algorithm, Algorithm::Ring);
  EXPECT_EQ(chooseAlgorithm(Collective::AllReduce, 4 * kKiB, nvswitch, devices, Algorithm::Auto).algorithm,
            Algorithm::OneShot);
}

// From 64 MiB a broadcast, from 16 MiB a reduce, from 128 MiB an all-reduce, over 3 or more ranks of an NVLink
// mesh is a ring; on 2 ranks, off a mesh and below it stays two-shot or direct.
TEST(AlgorithmSelect, RingForLargeBroadcastsAndReducesOnAMesh) {
  const Topology nvswitch = load("h100x8_nvswitch");
  const std::vector<int> devices = allDevices(nvswitch);
  const AlgorithmChoice ring = chooseAlgorithm(Collective::Broadcast, 64 * kMiB, nvswitch, devices);
  EXPECT_EQ(ring.algorithm, Algorithm::Ring);
  EXPECT_EQ(ring.reason, "64 MiB per rank >= 64 MiB on an NVLink mesh: ring (pipelined along the ranks)");
  EXPECT_EQ(
      kernelForAlgorithm(Collective::Broadcast, 64 * kMiB, false, 8, true, ring, Protocol::Auto, 1024 * kKiB).kernel,
      Kernel::RingBroadcast);
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 64 * kMiB - 1, nvswitch, devices).algorithm, Algorithm::TwoShot);
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 1024 * kMiB, nvswitch, {0, 1, 2}).algorithm, Algorithm::Ring);
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 1024 * kMiB, nvswitch, {0, 1}).algorithm, Algorithm::OneShot);
  const Topology pcie = load("dual_socket_pcie");
  ASSERT_GT(pcie.gpus.size(), 2u);
  EXPECT_EQ(chooseAlgorithm(Collective::Broadcast, 1024 * kMiB, pcie, allDevices(pcie)).algorithm, Algorithm::TwoShot);
  const AlgorithmChoice reduce = chooseAlgorithm(Collective::Reduce, 16 * kMiB, nvswitch, devices);
  EXPECT_EQ(reduce.algorithm, Algorithm::Ring);
  EXPECT_EQ(reduce.reason, "16 MiB per rank >= 16 MiB on an NVLink mesh: ring (pipelined along the ranks)");
  EXPECT_EQ(
      kernelForAlgorithm(Collective::Reduce, 16 * kMiB, false, 8, true, reduce, Protocol::Auto, 1024 * kKiB).kernel,
      Kernel::RingReduce);
  EXPECT_EQ(chooseAlgorithm(Collective::Reduce, 16 * kMiB - 1, nvswitch, devices).algorithm, Algorithm::TwoShot);
  EXPECT_EQ(chooseAlgorithm(Collective::Reduce, 1024 * kMiB, pcie, allDevices(pcie)).algorithm, Algorithm::TwoShot);
  // The ring all-reduce from 128 MiB on 3+ ranks of a mesh (below, the split two-shot); small messages forced
  // to the ring still take LL.
  const AlgorithmChoice ringAllReduce = chooseAlgorithm(Collective::AllReduce, 128 * kMiB, nvswitch, devices);
  EXPECT_EQ(ringAllReduce.algorithm, Algorithm::Ring);
  EXPECT_EQ(ringAllReduce.reason,
            "128 MiB per rank >= 128 MiB on an NVLink mesh: ring (stores 1.75x the data per rank along the ranks)");
  EXPECT_EQ(chooseAlgorithm(Collective::AllReduce, 128 * kMiB - 1, nvswitch, devices).algorithm, Algorithm::TwoShot);
  EXPECT_EQ(chooseAlgorithm(Collective::AllReduce, 1024 * kMiB, nvswitch, {0, 1}).algorithm, Algorithm::TwoShot);
  // The ring reduce-scatter from 32 MiB blocks on 3+ ranks of a mesh.
  const AlgorithmChoice ringScatter = chooseAlgorithm(Collective::ReduceScatter, 32 * kMiB, nvswitch, devices);
  EXPECT_EQ(ringScatter.algorithm, Algorithm::Ring);
  EXPECT_EQ(ringScatter.reason,
            "32 MiB per rank >= 32 MiB on an NVLink mesh: ring (stores 7x the block per rank along the ranks)");
  EXPECT_EQ(
      kernelForAlgorithm(Collective::ReduceScatter, 32 * kMiB, false, 8, true, ringScatter, Protocol::Auto, 1024 * kKiB)
          .kernel,
      Kernel::RingReduceScatter);
  EXPECT_EQ(chooseAlgorithm(Collective::ReduceScatter, 32 * kMiB - 1, nvswitch, devices).algorithm, Algorithm::OneShot);
  EXPECT_EQ(chooseAlgorithm(Collective::ReduceScatter, 1024 * kMiB, nvswitch, {0, 1}).algorithm, Algorithm::OneShot);
  // Its second half on the copy engines (CopyEnginesForLargeCopiesAndTheRingsGather) unless PEERLINK_COLL_CE=0.
  EXPECT_EQ(kernelForAlgorithm(Collective::AllReduce, 128 * kMiB, false, 8, true, ringAllReduce, Protocol::Auto,
                               1024 * kKiB, PushMode::Auto, false, CopyEngineMode::Off)
                .kernel,
            Kernel::RingAllReduce);
  EXPECT_EQ(
      kernelForAlgorithm(Collective::AllReduce, 128 * kMiB, false, 8, true, ringAllReduce, Protocol::Auto, 1024 * kKiB)
          .kernel,
      Kernel::CeRingAllReduce);
  EXPECT_EQ(kernelForAlgorithm(Collective::AllReduce, 4 * kKiB, false, 8, true,
                               chooseAlgorithm(Collective::AllReduce, 4 * kKiB, nvswitch, devices, Algorithm::Ring),
                               Protocol::Auto, 1024 * kKiB)
                .kernel,
            Kernel::LlOneShot);
  const AlgorithmChoice forced = chooseAlgorithm(Collective::Reduce, 4 * kKiB, nvswitch, devices, Algorithm::Ring);
  EXPECT_EQ(
      kernelForAlgorithm(Collective::Reduce, 4 * kKiB, false, 8, true, forced, Protocol::Auto, 1024 * kKiB).kernel,
      Kernel::LlOneShot);
  EXPECT_EQ(
      kernelForAlgorithm(Collective::Reduce, 4 * kKiB, false, 8, true, forced, Protocol::Simple, 1024 * kKiB).kernel,
      Kernel::RingReduce);
}

// The kernel for each collective and size on the 4-GPU NVSwitch VM fixture, under each PEERLINK_PROTO.
TEST(KernelSelect, LlForSmallMessagesOfEveryCollective) {
  const Topology vm = load("h200x4_vm");
  const std::vector<int> devices = allDevices(vm);
  const int n = static_cast<int>(devices.size());
  const std::size_t llMax = 1024 * kKiB;
  // LL while a rank's links carry at most 1 MiB of lines, 2 (n-1) x the message (broadcast, which loads only
  // the root's links, 1.5 MiB).
  const std::size_t wireLimit = 1024 * kKiB / (2 * 3);
  const std::size_t rootLimit = 1536 * kKiB / (2 * 3);
  const auto kernelOf = [&](Collective collective, std::size_t bytes, Protocol protocol, bool inPlace = false) {
    return kernelForAlgorithm(collective, bytes, inPlace, n, true, chooseAlgorithm(collective, bytes, vm, devices),
                              protocol, llMax)
        .kernel;
  };
  for (Collective collective : {Collective::AllReduce, Collective::Reduce}) {
    EXPECT_EQ(kernelOf(collective, 8, Protocol::Auto), Kernel::LlOneShot);
    EXPECT_EQ(kernelOf(collective, wireLimit, Protocol::Auto), Kernel::LlOneShot);
    // Past the budget, direct reads while one-shot's size rule holds (256 KiB on a mesh), then two-shot.
    EXPECT_EQ(kernelOf(collective, wireLimit + 1, Protocol::Auto), Kernel::OneShotReduce);
    EXPECT_EQ(kernelOf(collective, 256 * kKiB, Protocol::Auto), Kernel::OneShotReduce);
    EXPECT_EQ(kernelOf(collective, 256 * kKiB + 1, Protocol::Auto), Kernel::TwoShot);
    EXPECT_EQ(kernelOf(collective, 256 * kKiB + 1, Protocol::Simple), Kernel::TwoShot);
    EXPECT_EQ(kernelOf(collective, 8, Protocol::Simple), Kernel::OneShotReduce);
    EXPECT_EQ(kernelOf(collective, 256 * kKiB, Protocol::Ll), Kernel::LlOneShot);  // forced: wherever one-shot runs
  }
  // 2 ranks: LL one-shot past one-shot's 256 KiB while the lines fit (512 KiB), then two-shot.
  const std::vector<int> two = {0, 1};
  const auto kernelOfTwo = [&](Collective collective, std::size_t bytes, const AlgorithmChoice& algorithm) {
    return kernelForAlgorithm(collective, bytes, false, 2, true, algorithm, Protocol::Auto, llMax);
  };
  EXPECT_EQ(kernelOfTwo(Collective::AllReduce, 512 * kKiB, chooseAlgorithm(Collective::AllReduce, 512 * kKiB, vm, two))
                .kernel,
            Kernel::LlOneShot);
  EXPECT_EQ(kernelOfTwo(Collective::AllReduce, 512 * kKiB + 1,
                        chooseAlgorithm(Collective::AllReduce, 512 * kKiB + 1, vm, two))
                .kernel,
            Kernel::TwoShot);
  const KernelChoice overTwoShot =
      kernelOfTwo(Collective::AllReduce, 320 * kKiB, chooseAlgorithm(Collective::AllReduce, 320 * kKiB, vm, two));
  EXPECT_EQ(overTwoShot.algorithm, Algorithm::OneShot);
  EXPECT_EQ(overTwoShot.reason(),
            "320 KiB per rank > 256 KiB on an NVLink mesh: two-shot (reads 1x the data per rank, 2 steps); but LL "
            "one-shot puts 640 KiB <= 1 MiB of lines on a rank's links: one step, no barrier");
  // PEERLINK_ALGO=TWOSHOT keeps two-shot where LL would otherwise take over.
  const AlgorithmChoice forced = chooseAlgorithm(Collective::AllReduce, 320 * kKiB, vm, two, Algorithm::TwoShot);
  EXPECT_TRUE(forced.forced);
  EXPECT_EQ(kernelOfTwo(Collective::AllReduce, 320 * kKiB, forced).kernel, Kernel::TwoShot);
  // One-shot in place without LL would overwrite inputs the peers still read.
  EXPECT_EQ(kernelOf(Collective::AllReduce, 8, Protocol::Simple, true), Kernel::TwoShot);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 8, Protocol::Auto, true), Kernel::LlOneShot);
  EXPECT_EQ(kernelOf(Collective::AllReduce, wireLimit + 1, Protocol::Auto, true), Kernel::TwoShot);
  const std::vector<std::pair<Collective, Kernel>> copies = {{Collective::AllGather, Kernel::Copy},
                                                             {Collective::AllToAll, Kernel::Copy},
                                                             {Collective::ReduceScatter, Kernel::ShardReduce},
                                                             {Collective::Broadcast, Kernel::Copy}};
  for (const auto& [collective, simple] : copies) {
    const std::size_t limit = collective == Collective::Broadcast ? rootLimit : wireLimit;
    EXPECT_EQ(kernelOf(collective, 8, Protocol::Auto), Kernel::LlOneShot) << collectiveName(collective);
    EXPECT_EQ(kernelOf(collective, limit, Protocol::Auto), Kernel::LlOneShot) << collectiveName(collective);
    EXPECT_EQ(kernelOf(collective, limit + 1, Protocol::Auto), simple) << collectiveName(collective);
    EXPECT_EQ(kernelOf(collective, llMax, Protocol::Ll), Kernel::LlOneShot) << collectiveName(collective);
    EXPECT_EQ(kernelOf(collective, llMax + 1, Protocol::Ll), simple) << collectiveName(collective);
    EXPECT_EQ(kernelOf(collective, 8, Protocol::Simple), simple) << collectiveName(collective);
  }
  EXPECT_EQ(kernelOf(Collective::SendRecv, 8, Protocol::Ll), Kernel::LlPairs);  // its own lines (below)
  const AlgorithmChoice large = chooseAlgorithm(Collective::Broadcast, 1024 * kKiB, vm, devices);
  EXPECT_EQ(
      kernelForAlgorithm(Collective::Broadcast, 1024 * kKiB, false, n, true, large, Protocol::Auto, llMax).algorithm,
      Algorithm::TwoShot);
  // 2 ranks: the root's link carries up to 1.5 MiB of lines.
  EXPECT_EQ(kernelForAlgorithm(Collective::Broadcast, 768 * kKiB, false, 2, true, large, Protocol::Auto, llMax).kernel,
            Kernel::LlOneShot);
  EXPECT_EQ(
      kernelForAlgorithm(Collective::Broadcast, 768 * kKiB + 1, false, 2, true, large, Protocol::Auto, llMax).kernel,
      Kernel::Copy);
  // 8 ranks: the limit shrinks to 1 MiB / 14.
  EXPECT_EQ(
      kernelForAlgorithm(Collective::AllGather, 1024 * kKiB / 14, false, 8, true,
                         chooseAlgorithm(Collective::AllGather, 1024 * kKiB / 14, vm, devices), Protocol::Auto, llMax)
          .kernel,
      Kernel::LlOneShot);
  EXPECT_EQ(kernelForAlgorithm(Collective::AllGather, 1024 * kKiB / 14 + 1, false, 8, true,
                               chooseAlgorithm(Collective::AllGather, 1024 * kKiB / 14 + 1, vm, devices),
                               Protocol::Auto, llMax)
                .kernel,
            Kernel::Copy);
  // 2 ranks: up to 512 KiB.
  for (Collective collective : {Collective::AllGather, Collective::AllToAll, Collective::ReduceScatter}) {
    EXPECT_EQ(kernelOfTwo(collective, 512 * kKiB, chooseAlgorithm(collective, 512 * kKiB, vm, two)).kernel,
              Kernel::LlOneShot)
        << collectiveName(collective);
    EXPECT_NE(kernelOfTwo(collective, 512 * kKiB + 1, chooseAlgorithm(collective, 512 * kKiB + 1, vm, two)).kernel,
              Kernel::LlOneShot)
        << collectiveName(collective);
  }
  const KernelChoice small =
      kernelForAlgorithm(Collective::AllGather, 4 * kKiB, false, n, true,
                         chooseAlgorithm(Collective::AllGather, 4 * kKiB, vm, devices), Protocol::Auto, llMax);
  EXPECT_EQ(small.reason(),
            "4 KiB per rank on an NVLink mesh: direct (every peer one hop, one step); LL protocol (<= 170.7 KiB per "
            "message: one flag wait, no barrier)");
}

// Off an NVLink mesh the copy collectives stop using LL sooner (its doubled bytes share PCIe links); the
// reductions' one-shot limit already is lower there.
TEST(KernelSelect, LlLimitOffAMesh) {
  const Topology pcie = load("dual_socket_pcie");
  const std::vector<int> devices = allDevices(pcie);
  const int n = static_cast<int>(devices.size());
  ASSERT_FALSE(fabricOf(pcie, devices).nvlinkMesh);
  EXPECT_TRUE(fabricOf(load("h200x4_vm"), allDevices(load("h200x4_vm"))).nvlinkMesh);
  const auto kernelOf = [&](Collective collective, std::size_t bytes) {
    return kernelForAlgorithm(collective, bytes, false, n, false, chooseAlgorithm(collective, bytes, pcie, devices),
                              Protocol::Auto, 1024 * kKiB)
        .kernel;
  };
  EXPECT_EQ(kernelOf(Collective::AllGather, 64 * kKiB), Kernel::LlOneShot);
  EXPECT_EQ(kernelOf(Collective::AllGather, 64 * kKiB + 1), Kernel::Copy);
  EXPECT_EQ(kernelOf(Collective::ReduceScatter, 64 * kKiB + 1), Kernel::RingReduceScatter);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 64 * kKiB), Kernel::LlOneShot);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 64 * kKiB + 1), Kernel::RingAllReduce);
}

// Two-shot all-reduce and reduce-scatter past LL push under PEERLINK_COLL_PUSH=1; AUTO pushes only AUTO's own
// all-reduce two-shot on 3+ ranks of an NVLink mesh from 16 MiB while every shard fits a 16 MiB stage slot
// (the two-phase kernel); 0 never. Reduce, the copy collectives and LL sizes never push.
TEST(KernelSelect, ReductionsPushWhenAskedToOrWhereTwoPhasesWin) {
  const Topology vm = load("h200x4_vm");
  const std::vector<int> devices = allDevices(vm);
  const int n = static_cast<int>(devices.size());
  const auto choiceOf = [&](Collective collective, std::size_t bytes, PushMode push, bool mesh = true) {
    return kernelForAlgorithm(collective, bytes, false, n, mesh, chooseAlgorithm(collective, bytes, vm, devices),
                              Protocol::Auto, 1024 * kKiB, push);
  };
  for (const std::size_t bytes : {2 * kMiB, 96 * kMiB}) {
    // From 64 MiB the direct reads run as two kernels (a reduce-scatter, then a pushing all-gather); from
    // 128 MiB all-reduce is a ring (RingForLargeBroadcastsAndReducesOnAMesh).
    const Kernel reading = bytes >= 64 * kMiB ? Kernel::SplitTwoShot : Kernel::TwoShot;
    EXPECT_EQ(choiceOf(Collective::AllReduce, bytes, PushMode::Auto).kernel, reading) << bytes;
    EXPECT_EQ(choiceOf(Collective::AllReduce, bytes, PushMode::Pull).kernel, reading) << bytes;
    EXPECT_EQ(choiceOf(Collective::AllReduce, bytes, PushMode::Push).kernel, Kernel::PushReduce) << bytes;
    EXPECT_EQ(choiceOf(Collective::AllReduce, bytes, PushMode::Push, false).kernel, Kernel::PushReduce) << bytes;
    // From 32 MiB per block a reduce-scatter is a ring, pushed or not (the ring stores only).
    const Kernel scatter = bytes >= 32 * kMiB ? Kernel::RingReduceScatter : Kernel::ShardReduce;
    EXPECT_EQ(choiceOf(Collective::ReduceScatter, bytes, PushMode::Auto).kernel, scatter) << bytes;
    EXPECT_EQ(choiceOf(Collective::ReduceScatter, bytes, PushMode::Push).kernel,
              bytes >= 32 * kMiB ? Kernel::RingReduceScatter : Kernel::PushReduce)
        << bytes;
  }
  EXPECT_EQ(choiceOf(Collective::AllReduce, 16 * kMiB, PushMode::Push).algorithm, Algorithm::TwoShot);
  // The split needs the mesh (its thresholds were measured there) and starts at 64 MiB; below it and from
  // 16 MiB AUTO pushes in two phases, up to shards of 16 MiB (64 MiB on 4 ranks).
  EXPECT_EQ(choiceOf(Collective::AllReduce, 16 * kMiB - 16, PushMode::Auto).kernel, Kernel::TwoShot);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 16 * kMiB, PushMode::Auto).kernel, Kernel::PushReduce);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 16 * kMiB, PushMode::Pull).kernel, Kernel::TwoShot);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 64 * kMiB - 1, PushMode::Auto).kernel, Kernel::PushReduce);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 64 * kMiB, PushMode::Auto).kernel, Kernel::PushReduce);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 64 * kMiB + 64, PushMode::Auto).kernel, Kernel::SplitTwoShot);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 64 * kMiB, PushMode::Auto, false).kernel, Kernel::TwoShot);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 64 * kMiB, PushMode::Auto).algorithm, Algorithm::TwoShot);
  EXPECT_EQ(choiceOf(Collective::ReduceScatter, 16 * kMiB, PushMode::Auto).kernel, Kernel::ShardReduce);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 16 * kMiB, PushMode::Auto).reason(),
            "16 MiB per rank > 256 KiB on an NVLink mesh: two-shot (reads 1.5x the data per rank, 2 steps); pushed "
            "in two phases (>= 16 MiB on 3+ ranks of an NVLink mesh, every shard within a 16 MiB stage slot): each "
            "rank stores its pieces into the owners' stages, they reduce locally and store the result into every "
            "output (stores only)");
  // Not on 2 ranks (unmeasured there), nor under a forced algorithm (PEERLINK_ALGO=TWOSHOT keeps the direct
  // reads), nor before an explicit PEERLINK_COLL_CE=1.
  const std::vector<int> pair = {0, 1};
  EXPECT_NE(kernelForAlgorithm(Collective::AllReduce, 32 * kMiB, false, 2, true,
                               chooseAlgorithm(Collective::AllReduce, 32 * kMiB, vm, pair), Protocol::Auto, 1024 * kKiB,
                               PushMode::Auto)
                .kernel,
            Kernel::PushReduce);
  EXPECT_EQ(kernelForAlgorithm(Collective::AllReduce, 32 * kMiB, false, n, true,
                               chooseAlgorithm(Collective::AllReduce, 32 * kMiB, vm, devices, Algorithm::TwoShot),
                               Protocol::Auto, 1024 * kKiB, PushMode::Auto)
                .kernel,
            Kernel::TwoShot);
  EXPECT_EQ(kernelForAlgorithm(Collective::AllReduce, 32 * kMiB, false, n, true,
                               chooseAlgorithm(Collective::AllReduce, 32 * kMiB, vm, devices), Protocol::Auto,
                               1024 * kKiB, PushMode::Auto, true, CopyEngineMode::On)
                .kernel,
            Kernel::CeTwoShot);
  EXPECT_EQ(choiceOf(Collective::ReduceScatter, 16 * kMiB, PushMode::Push).algorithm, Algorithm::OneShot);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 64 * kKiB, PushMode::Push).kernel, Kernel::LlOneShot);
  EXPECT_EQ(choiceOf(Collective::Reduce, 8 * kMiB, PushMode::Push).kernel, Kernel::TwoShot);  // no push reduce
  EXPECT_EQ(choiceOf(Collective::AllGather, 32 * kMiB, PushMode::Push).kernel, Kernel::Copy);
  EXPECT_EQ(choiceOf(Collective::AllReduce, 16 * kMiB, PushMode::Push).reason(),
            "16 MiB per rank > 256 KiB on an NVLink mesh: two-shot (reads 1.5x the data per rank, 2 steps); pushed "
            "(PEERLINK_COLL_PUSH=1): each rank stores its pieces into the owners' stages and they reduce locally");
  // Past the split kernels' size the push replaces them, and its reason no longer names them.
  const std::string split = choiceOf(Collective::AllReduce, 64 * kMiB, PushMode::Pull).reason();
  const std::string pushed = choiceOf(Collective::AllReduce, 64 * kMiB, PushMode::Push).reason();
  EXPECT_NE(split.find("as two kernels"), std::string::npos) << split;
  EXPECT_EQ(pushed.find("as two kernels"), std::string::npos) << pushed;
  EXPECT_EQ(pushed.rfind("64 MiB per rank > 256 KiB on an NVLink mesh: two-shot", 0), 0u) << pushed;
  EXPECT_NE(pushed.find("pushed (PEERLINK_COLL_PUSH=1)"), std::string::npos) << pushed;
  EXPECT_EQ(parsePushMode("auto"), PushMode::Auto);
  EXPECT_EQ(parsePushMode("1"), PushMode::Push);
  EXPECT_EQ(parsePushMode("0"), PushMode::Pull);
  EXPECT_FALSE(parsePushMode("yes").has_value());
}

// PEERLINK_COLL_CE: AUTO moves all-gather's and all-to-all's data on the copy engines from 192 MiB pushed per
// rank (n - 1 messages) and gathers an all-reduce's segments with them from 96 MiB, on an NVLink mesh only;
// 1 wherever a copy-engine form exists (never instead of LL, the rooted collectives or reduce-scatter); 0
// never.
TEST(KernelSelect, CopyEnginesForLargeCopiesAndTheRingsGather) {
  const Topology vm = load("h200x4_vm");
  const std::vector<int> devices = allDevices(vm);
  const auto kernelOf = [&](Collective collective, std::size_t bytes, CopyEngineMode mode, bool mesh = true,
                            int n = 4) {
    return kernelForAlgorithm(collective, bytes, false, n, mesh, chooseAlgorithm(collective, bytes, vm, devices),
                              Protocol::Auto, 1024 * kKiB, PushMode::Auto, true, mode)
        .kernel;
  };
  const CopyEngineMode autoMode = CopyEngineMode::Auto;
  // 64 MiB to each of 3 peers: 192 MiB pushed.
  EXPECT_EQ(kernelOf(Collective::AllGather, 64 * kMiB, autoMode), Kernel::CeCopy);
  EXPECT_EQ(kernelOf(Collective::AllGather, 64 * kMiB - 4, autoMode), Kernel::Copy);
  EXPECT_EQ(kernelOf(Collective::AllToAll, 64 * kMiB, autoMode), Kernel::CeCopy);
  EXPECT_EQ(kernelOf(Collective::AllToAll, 32 * kMiB, autoMode), Kernel::Copy);
  EXPECT_EQ(kernelOf(Collective::AllGather, 64 * kMiB, autoMode, false), Kernel::Copy);  // no mesh: unmeasured
  // 7 peers: 28 MiB messages already push 196 MiB.
  EXPECT_EQ(kernelOf(Collective::AllGather, 28 * kMiB, autoMode, true, 8), Kernel::CeCopy);
  // All-reduce: the ring from 128 MiB (32 MiB segments to 3 peers: 96 MiB); below it the two-shot's shards
  // push less.
  EXPECT_EQ(kernelOf(Collective::AllReduce, 128 * kMiB, autoMode), Kernel::CeRingAllReduce);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 128 * kMiB - 16, autoMode), Kernel::SplitTwoShot);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 16 * kMiB, autoMode), Kernel::PushReduce);  // pushed: no copies
  // On 2 ranks (no ring) the split two-shot's shard gathered by the copy engines from 192 MiB messages.
  const auto pairKernel = [&](std::size_t bytes) {
    return kernelForAlgorithm(Collective::AllReduce, bytes, false, 2, true,
                              chooseAlgorithm(Collective::AllReduce, bytes, vm, {0, 1}), Protocol::Auto, 1024 * kKiB,
                              PushMode::Auto, true, CopyEngineMode::Auto)
        .kernel;
  };
  EXPECT_EQ(pairKernel(192 * kMiB), Kernel::CeTwoShot);
  EXPECT_EQ(pairKernel(192 * kMiB - 16), Kernel::SplitTwoShot);
  EXPECT_EQ(pairKernel(1024 * kMiB), Kernel::CeTwoShot);
  // Forced on.
  const CopyEngineMode on = CopyEngineMode::On;
  EXPECT_EQ(kernelOf(Collective::AllGather, 2 * kMiB, on), Kernel::CeCopy);
  EXPECT_EQ(kernelOf(Collective::AllGather, 2 * kMiB, on, false), Kernel::CeCopy);
  EXPECT_EQ(kernelOf(Collective::AllToAll, 2 * kMiB, on), Kernel::CeCopy);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 16 * kMiB, on), Kernel::CeTwoShot);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 96 * kMiB, on), Kernel::CeTwoShot);  // the split two-shot's too
  EXPECT_EQ(kernelOf(Collective::AllReduce, 512 * kMiB, on), Kernel::CeRingAllReduce);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 4 * kKiB, on), Kernel::LlOneShot);  // LL stays
  EXPECT_EQ(kernelOf(Collective::AllGather, 4 * kKiB, on), Kernel::LlOneShot);
  EXPECT_EQ(kernelOf(Collective::Broadcast, 512 * kMiB, on), Kernel::RingBroadcast);
  EXPECT_EQ(kernelOf(Collective::Broadcast, 8 * kMiB, on), Kernel::Copy);  // the two-shot broadcast
  EXPECT_EQ(kernelOf(Collective::Reduce, 512 * kMiB, on), Kernel::RingReduce);
  EXPECT_EQ(kernelOf(Collective::ReduceScatter, 512 * kMiB, on), Kernel::RingReduceScatter);
  // Off.
  const CopyEngineMode off = CopyEngineMode::Off;
  EXPECT_EQ(kernelOf(Collective::AllGather, 512 * kMiB, off), Kernel::Copy);
  EXPECT_EQ(kernelOf(Collective::AllToAll, 512 * kMiB, off), Kernel::Copy);
  EXPECT_EQ(kernelOf(Collective::AllReduce, 512 * kMiB, off), Kernel::RingAllReduce);
  // The reasons say why.
  const KernelChoice gather =
      kernelForAlgorithm(Collective::AllGather, 64 * kMiB, false, 4, true,
                         chooseAlgorithm(Collective::AllGather, 64 * kMiB, vm, devices), Protocol::Auto, 1024 * kKiB);
  EXPECT_EQ(gather.algorithm, Algorithm::OneShot);
  EXPECT_NE(gather.reason().find("; a rank pushes 192 MiB >= 192 MiB: the copy engines push each rank's data to its "
                                 "peers, the next rank first, between two barrier kernels"),
            std::string::npos)
      << gather.reason();
  const KernelChoice forced = kernelForAlgorithm(Collective::AllReduce, 16 * kMiB, false, 4, true,
                                                 chooseAlgorithm(Collective::AllReduce, 16 * kMiB, vm, devices),
                                                 Protocol::Auto, 1024 * kKiB, PushMode::Auto, true, on);
  EXPECT_EQ(forced.algorithm, Algorithm::TwoShot);
  EXPECT_NE(forced.reason().find("; copies on the copy engines (PEERLINK_COLL_CE=1): a direct-read reduce-scatter "
                                 "kernel, then the copy engines push each rank's shard to its peers"),
            std::string::npos)
      << forced.reason();
  // PEERLINK_COLL_PUSH=1 wins over it for the two-shot (the push kernel has no copies to move).
  EXPECT_EQ(kernelForAlgorithm(Collective::AllReduce, 16 * kMiB, false, 4, true,
                               chooseAlgorithm(Collective::AllReduce, 16 * kMiB, vm, devices), Protocol::Auto,
                               1024 * kKiB, PushMode::Push, true, on)
                .kernel,
            Kernel::PushReduce);
  EXPECT_EQ(parseCopyEngineMode("auto"), CopyEngineMode::Auto);
  EXPECT_EQ(parseCopyEngineMode("1"), CopyEngineMode::On);
  EXPECT_EQ(parseCopyEngineMode("0"), CopyEngineMode::Off);
  EXPECT_FALSE(parseCopyEngineMode("on").has_value());
  EXPECT_STREQ(copyEngineModeName(CopyEngineMode::On), "1");
}

// The end barrier releases and acquires only for calls that store into a peer's memory: a missing release
// would let a peer read a stale output, a needless one costs a microsecond (round 25).
TEST(KernelSelect, EndBarrierOrdersStoresOnlyWhereTheCallPushes) {
  const Topology vm = load("h200x4_vm");
  const std::vector<int> devices = allDevices(vm);
  const auto stores = [&](Collective collective, std::size_t bytes, Protocol protocol, PushMode push = PushMode::Auto) {
    ChoiceResources resources;
    resources.pushStages = true;
    resources.llMaxBytes = 1024 * kKiB;
    resources.maxBlocks = 132;
    const CollectiveChoice choice =
        chooseCollective({collective, bytes, 4, Fact::No, Fact::Yes}, fabricOf(vm, devices), resources,
                         {Algorithm::Auto, protocol, push, CopyEngineMode::Auto});
    return storesIntoPeers(choice);
  };
  // LL lines, pushed copies, two-shot outputs and the push reduction's stages are stores into peers.
  for (Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;
    EXPECT_TRUE(stores(collective, 8, Protocol::Auto)) << collectiveName(collective);
  }
  EXPECT_TRUE(stores(Collective::AllReduce, 64 * kMiB, Protocol::Auto));
  EXPECT_TRUE(stores(Collective::Reduce, 64 * kMiB, Protocol::Auto));
  EXPECT_TRUE(stores(Collective::AllGather, 64 * kMiB, Protocol::Auto));
  EXPECT_TRUE(stores(Collective::AllToAll, 64 * kMiB, Protocol::Auto));
  EXPECT_TRUE(stores(Collective::Broadcast, 64 * kMiB, Protocol::Auto));      // two-shot
  EXPECT_TRUE(stores(Collective::Broadcast, 256 * kMiB, Protocol::Auto));     // ring
  EXPECT_TRUE(stores(Collective::Reduce, 256 * kMiB, Protocol::Auto));        // ring
  EXPECT_TRUE(stores(Collective::AllReduce, 128 * kMiB, Protocol::Auto));     // split: its all-gather pushes
  EXPECT_TRUE(stores(Collective::AllReduce, 256 * kMiB, Protocol::Auto));     // ring
  EXPECT_TRUE(stores(Collective::ReduceScatter, 64 * kMiB, Protocol::Auto));  // ring
  EXPECT_TRUE(stores(Collective::AllReduce, 64 * kMiB, Protocol::Auto, PushMode::Push));
  EXPECT_TRUE(stores(Collective::ReduceScatter, 16 * kMiB, Protocol::Auto, PushMode::Push));
  // Direct reads: one-shot without LL, reduce-scatter, the direct broadcast, send/recv.
  EXPECT_FALSE(stores(Collective::AllReduce, 8, Protocol::Simple));
  EXPECT_FALSE(stores(Collective::Reduce, 8, Protocol::Simple));
  EXPECT_FALSE(stores(Collective::ReduceScatter, 16 * kMiB, Protocol::Auto));
  EXPECT_FALSE(stores(Collective::Broadcast, 8, Protocol::Simple));
  EXPECT_FALSE(stores(Collective::SendRecv, 32 * kMiB, Protocol::Auto));
  // Send/recv from 64 MiB a rank: the senders' copy engines push.
  EXPECT_TRUE(stores(Collective::SendRecv, 64 * kMiB, Protocol::Auto));
}

TEST(KernelSelect, ParsesProtocols) {
  EXPECT_EQ(parseProtocol("auto"), Protocol::Auto);
  EXPECT_EQ(parseProtocol("LL"), Protocol::Ll);
  EXPECT_EQ(parseProtocol("Simple"), Protocol::Simple);
  EXPECT_EQ(parseProtocol("ll128"), Protocol::Ll128);
  EXPECT_FALSE(parseProtocol("ll64").has_value());
  EXPECT_FALSE(parseProtocol("").has_value());
  // The names read back as what they name (peerlink coll --explain prints them as settings).
  for (Protocol protocol : {Protocol::Auto, Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
    EXPECT_EQ(parseProtocol(protocolName(protocol)), protocol);
  }
  for (PushMode push : {PushMode::Auto, PushMode::Push, PushMode::Pull})
    EXPECT_EQ(parsePushMode(pushModeName(push)), push);
}

// Two-shot reduce: the root reduces a shard too only below 4 MiB per rank; one rank always does.
TEST(KernelSelect, ReduceTwoShotSharesTheRootBelowFourMiB) {
  EXPECT_TRUE(reduceTwoShotSharesRoot(4 * kMiB - 1, 4));
  EXPECT_FALSE(reduceTwoShotSharesRoot(4 * kMiB, 4));
  EXPECT_FALSE(reduceTwoShotSharesRoot(512 * kMiB, 2));
  EXPECT_TRUE(reduceTwoShotSharesRoot(512 * kMiB, 1));
}

// The rooted two-shot kernels whose non-root ranks all work on the root at once run on 32 blocks from
// 4 MiB per rank on 3+ ranks; smaller messages, 2 ranks, a reduce whose root takes a shard, and other
// collectives are uncapped.
TEST(KernelSelect, RootedTwoShotGridsAreCappedFromFourMiB) {
  for (Collective collective : {Collective::Broadcast, Collective::Reduce}) {
    EXPECT_EQ(rootedTwoShotBlocks(collective, 4 * kMiB - 16, 4), 0) << collectiveName(collective);
    EXPECT_EQ(rootedTwoShotBlocks(collective, 4 * kMiB, 4), 32) << collectiveName(collective);
    EXPECT_EQ(rootedTwoShotBlocks(collective, 128 * kMiB, 8), 32) << collectiveName(collective);
  }
  EXPECT_EQ(rootedTwoShotBlocks(Collective::Reduce, 64 * kMiB, 1), 0);     // one rank reduces everything itself
  EXPECT_EQ(rootedTwoShotBlocks(Collective::Broadcast, 64 * kMiB, 2), 0);  // one reader does not crowd the root
  for (Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                Collective::AllToAll, Collective::SendRecv}) {
    EXPECT_EQ(rootedTwoShotBlocks(collective, 64 * kMiB, 4), 0) << collectiveName(collective);
  }
}

// Every algorithm algorithmsOf lists has a plan (test_coll_plan runs them all); Auto is never listed.
TEST(AlgorithmSelect, ListedAlgorithmsHavePlans) {
  for (Collective collective : kEveryCollective) {
    for (Algorithm algorithm : algorithmsOf(collective)) {
      EXPECT_NE(algorithm, Algorithm::Auto);
      EXPECT_NO_THROW(buildPlan(collective, algorithm, 4, 100, 1, false, 0, DataType::F32))
          << collectiveName(collective) << " " << algorithmName(algorithm);
    }
  }
}

}  // namespace
}  // namespace peerlink::coll
