// placeGpus (include/peerlink/placement.hpp) on every topology fixture: the partition it chooses, why, how much
// worse the next best is, each rank's lines, the doctor's verdicts honoured, and bad requests refused.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "peerlink/placement.hpp"
#include "place/partition_search.hpp"
#include "topology_fixture.hpp"

namespace peerlink {
namespace {

using testing::loadTopologyFixture;
using Groups = std::vector<std::vector<int>>;

GpuPlacement place(const Topology& topology, int size, int groups = 0,
                   std::optional<std::vector<PairVerdict>> verdicts = std::nullopt) {
  PlacementRequest request;
  request.groupSize = size;
  request.groups = groups;
  request.verdicts = std::move(verdicts);
  return placeGpus(topology, request);
}

Groups groupsOf(const GpuPlacement& placement) {
  Groups groups;
  for (const PlacedGroup& group : placement.groups) groups.push_back(group.gpus);
  return groups;
}

bool hasNote(const GpuPlacement& placement, const std::string& text) {
  for (const std::string& note : placement.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string allNotes(const GpuPlacement& placement) {
  std::string text;
  for (const std::string& note : placement.notes) text += note + "\n";
  return text;
}

PairVerdict verdict(int src, int dst, Verdict value) {
  PairVerdict pair;
  pair.src = src;
  pair.dst = dst;
  pair.verdict = value;
  return pair;
}

// Every directed pair OK, except those given.
std::vector<PairVerdict> verdictsOf(const Topology& topology, const std::vector<PairVerdict>& exceptions) {
  std::vector<PairVerdict> verdicts;
  const int n = static_cast<int>(topology.gpus.size());
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      Verdict value = Verdict::Ok;
      for (const PairVerdict& exception : exceptions) {
        if (exception.src == a && exception.dst == b) value = exception.verdict;
      }
      verdicts.push_back(verdict(a, b, value));
    }
  }
  return verdicts;
}

TEST(GpuPlacement, H100NvSwitchEveryGroupingIsEqual) {
  const Topology topology = loadTopologyFixture("h100x8_nvswitch");
  const GpuPlacement pairs = place(topology, 2);
  EXPECT_EQ(groupsOf(pairs), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_TRUE(pairs.exhaustive);
  EXPECT_EQ(pairs.partitions, 105);
  EXPECT_EQ(pairs.partitionsTried, 105u);
  EXPECT_EQ(pairs.equallyGood, 105u);
  EXPECT_FALSE(pairs.nextBest.has_value());
  EXPECT_NE(pairs.summary.find("every pair of GPUs is linked alike (NV18, 478.1 GB/s)"), std::string::npos)
      << pairs.summary;
  for (const PlacedGroup& group : pairs.groups) {
    EXPECT_EQ(worstLinkName(group.score), "NVL");
    EXPECT_DOUBLE_EQ(group.score.weakestGBps, 478.125);
    EXPECT_NE(group.reason.find("NV18: NVLink through NVSwitch; 478.1 GB/s"), std::string::npos) << group.reason;
  }

  const GpuPlacement quads = place(topology, 4);
  EXPECT_EQ(groupsOf(quads), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(quads.partitions, 35);
  EXPECT_EQ(quads.equallyGood, 35u);
  EXPECT_FALSE(quads.nextBest.has_value());
  EXPECT_NE(quads.groups[0].reason.find("all 6 pairs NV18"), std::string::npos) << quads.groups[0].reason;
  // Each rank binds to its own GPU's socket.
  EXPECT_EQ(quads.groups[0].ranks[3].line, "CUDA_VISIBLE_DEVICES=3 numactl --cpunodebind=0 --membind=0");
  EXPECT_EQ(quads.groups[1].ranks[0].line, "CUDA_VISIBLE_DEVICES=4 numactl --cpunodebind=1 --membind=1");
  EXPECT_EQ(quads.groups[1].ranks[0].taskset, "taskset -c 56-111,168-223");
  EXPECT_EQ(quads.groups[1].visibleDevices, "4,5,6,7");
}

TEST(GpuPlacement, H200VmAllGroupsEqualAndSaysWhy) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const GpuPlacement placement = place(topology, 2);
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(placement.partitions, 3);
  EXPECT_EQ(placement.equallyGood, 3u);
  EXPECT_FALSE(placement.nextBest.has_value());
  EXPECT_EQ(placement.summary,
            "every pair of GPUs is linked alike (NV18, 478.1 GB/s): every partition is as good as another (3 "
            "partitions, every one tried)");
  EXPECT_EQ(placement.groups[1].ranks[1].line, "CUDA_VISIBLE_DEVICES=3 numactl --cpunodebind=0 --membind=0");
  // NVLink decides here: the flat PCI tree of the VM is not worth a note.
  EXPECT_FALSE(hasNote(placement, "PCI tree is flat")) << allNotes(placement);
  EXPECT_TRUE(hasNote(placement, "discovery: sysfs gives numa_node -1")) << allNotes(placement);
  EXPECT_TRUE(hasNote(placement, "no doctor verdicts: a pair that is broken in fact could not be kept apart"))
      << allNotes(placement);
}

TEST(GpuPlacement, DualSocketPcieGroupsWithinASwitchAndASocket) {
  const Topology topology = loadTopologyFixture("dual_socket_pcie");
  const GpuPlacement placement = place(topology, 2);
  // GPUs 1 and 2 share switch B; GPU 3 is alone on socket 1, so one group must cross the sockets.
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 3}, {1, 2}}));
  EXPECT_EQ(placement.equallyGood, 1u);
  ASSERT_TRUE(placement.nextBest.has_value());
  EXPECT_EQ(placement.nextBest->groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(placement.nextBest->difference,
            "its 2nd weakest group has a PXB pair where this partition's has at worst PIX");
  const PlacedGroup& pix = placement.groups[1];
  EXPECT_EQ(pix.reason, "PIX: below one PCIe switch (0000:04:00.0); 31.5 GB/s (PCIe Gen4 x16)");
  const PlacedGroup& crossing = placement.groups[0];
  EXPECT_TRUE(crossing.score.worstWithoutP2p);
  EXPECT_EQ(worstLinkName(crossing.score), "SYS without P2P");
  EXPECT_EQ(crossing.reason, "SYS without P2P: across sockets (NUMA nodes 0 and 1); no P2P: through host memory");
  EXPECT_EQ(crossing.ranks[1].line, "CUDA_VISIBLE_DEVICES=3 numactl --cpunodebind=1 --membind=1");

  // The best three of the four: the socket with a switch each.
  const GpuPlacement three = place(topology, 3, 1);
  EXPECT_EQ(groupsOf(three), (Groups{{0, 1, 2}}));
  EXPECT_EQ(three.unused, std::vector<int>{3});
  EXPECT_EQ(three.partitions, 4);
  EXPECT_EQ(three.groups[0].reason,
            "3 pairs: 1 PIX, 2 PXB; weakest 0-1, PXB: through several PCIe switches below 0000:01:00.0; 31.5 GB/s "
            "(PCIe Gen4 x16)");
  ASSERT_TRUE(three.nextBest.has_value());
  EXPECT_EQ(three.nextBest->difference,
            "its weakest group has a SYS without P2P pair where this partition's has at worst PXB");

  const GpuPlacement whole = place(topology, 4);
  EXPECT_EQ(whole.summary, "the only partition: every GPU in one group");
}

TEST(GpuPlacement, Rtx4090PairHasNoP2pAndGroupsOfOneNeedNoJudging) {
  const Topology topology = loadTopologyFixture("rtx4090x2");
  const GpuPlacement pair = place(topology, 2);
  ASSERT_EQ(pair.groups.size(), 1u);
  EXPECT_EQ(worstLinkName(pair.groups[0].score), "PHB without P2P");
  EXPECT_EQ(pair.groups[0].reason, "PHB without P2P: through the host bridge pci0000:00; no P2P: through host memory");
  const GpuPlacement singles = place(topology, 1);
  EXPECT_EQ(groupsOf(singles), (Groups{{0}, {1}}));
  EXPECT_EQ(singles.summary, "groups of one GPU: no traffic between GPUs to judge (1 partition, every one tried)");
  EXPECT_EQ(singles.groups[1].reason, "one GPU: no traffic between GPUs to judge");
}

TEST(GpuPlacement, TenGpuBoxGroupsBySwitch) {
  const Topology topology = loadTopologyFixture("pcie_10gpu");
  const GpuPlacement fives = place(topology, 5);
  EXPECT_EQ(groupsOf(fives), (Groups{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}));
  EXPECT_EQ(fives.partitions, 126);
  EXPECT_EQ(fives.equallyGood, 1u);
  ASSERT_TRUE(fives.nextBest.has_value());
  EXPECT_EQ(fives.nextBest->difference, "its weakest group has a PHB pair where this partition's has at worst PIX");
  EXPECT_NE(fives.groups[0].reason.find("all 10 pairs PIX: below one PCIe switch (0000:01:00.0)"), std::string::npos)
      << fives.groups[0].reason;

  // Pairs: each switch has an odd GPU out, so one pair must cross; the best have exactly one such pair.
  const GpuPlacement pairs = place(topology, 2);
  EXPECT_EQ(pairs.partitions, 945);
  EXPECT_EQ(pairs.equallyGood, 5u * 5u * 3u * 3u);
  int crossing = 0;
  for (const PlacedGroup& group : pairs.groups) crossing += group.gpus[0] / 5 != group.gpus[1] / 5;
  EXPECT_EQ(crossing, 1);
  ASSERT_TRUE(pairs.nextBest.has_value());
  EXPECT_EQ(pairs.nextBest->difference, "its 2nd weakest group has a PHB pair where this partition's has at worst PIX");
}

TEST(GpuPlacement, NvlinkBridgesComeFirstThenSwitchesThenSockets) {
  const Topology topology = loadTopologyFixture("a6000x8_nvlink_bridges");
  const GpuPlacement pairs = place(topology, 2);
  EXPECT_EQ(groupsOf(pairs), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(pairs.equallyGood, 1u);
  EXPECT_EQ(pairs.groups[0].reason, "NV4: direct NVLink; 56.2 GB/s (4 x NVLink3 at 14.06 GB/s)");
  ASSERT_TRUE(pairs.nextBest.has_value());
  EXPECT_EQ(pairs.nextBest->difference, "its weakest group has a PIX pair where this partition's has at worst NVL");
  EXPECT_EQ(pairs.groups[0].ranks[1].line, "CUDA_VISIBLE_DEVICES=2 numactl --cpunodebind=0 --membind=0");
  EXPECT_EQ(pairs.groups[0].visibleDevices, "0,2");

  const GpuPlacement quads = place(topology, 4);
  EXPECT_EQ(groupsOf(quads), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(quads.equallyGood, 1u);
  EXPECT_EQ(quads.groups[0].reason,
            "6 pairs: 2 NV4, 2 PIX, 2 PHB; weakest 0-3, PHB: through the host bridge pci0000:00; 31.5 GB/s (PCIe "
            "Gen4 x16)");
  ASSERT_TRUE(quads.nextBest.has_value());
  EXPECT_EQ(quads.nextBest->difference,
            "its weakest group has a SYS without P2P pair where this partition's has at worst PHB");

  // Four of the eight: either socket's GPUs, equally.
  const GpuPlacement four = place(topology, 4, 1);
  EXPECT_EQ(groupsOf(four), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(four.unused, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(four.partitions, 70);
  EXPECT_EQ(four.equallyGood, 2u);
}

TEST(GpuPlacement, FlatVmWithoutPcieOrNumaFactsSaysWhatItCouldNotJudge) {
  const Topology topology = loadTopologyFixture("vm_flat_numa_unknown");
  const GpuPlacement placement = place(topology, 2);
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 1}, {2, 3}}));
  EXPECT_FALSE(placement.nextBest.has_value());
  EXPECT_NE(placement.summary.find("linked alike (PHB, bandwidth unknown)"), std::string::npos) << placement.summary;
  EXPECT_TRUE(hasNote(placement, "PCIe link speed or width unknown for GPU 0, 1, 2, 3")) << allNotes(placement);
  EXPECT_TRUE(hasNote(placement, "the PCI tree is flat")) << allNotes(placement);
  EXPECT_TRUE(hasNote(placement, "NUMA node and local CPUs unknown for GPU 0, 1, 2, 3")) << allNotes(placement);
  for (const PlacedGroup& group : placement.groups) {
    for (const RankPlacement& rank : group.ranks) {
      EXPECT_EQ(rank.line, "CUDA_VISIBLE_DEVICES=" + std::to_string(rank.gpu)) << "no binding it could not know";
      EXPECT_TRUE(rank.numactl.empty());
      EXPECT_TRUE(rank.taskset.empty());
    }
  }
}

TEST(GpuPlacement, UnknownPciPathsAndNumaNodesAreNoted) {
  Topology topology = loadTopologyFixture("dual_socket_pcie");
  topology.gpus[2].pciPath.clear();
  topology.gpus[1].numaNode = -1;
  const GpuPlacement placement = place(topology, 2);
  EXPECT_TRUE(hasNote(placement, "PCI path unknown for GPU 2 (sysfs not read)")) << allNotes(placement);
  EXPECT_TRUE(hasNote(placement, "NUMA node unknown for GPU 1: taskset binds")) << allNotes(placement);
  for (const PlacedGroup& group : placement.groups) {
    for (const RankPlacement& rank : group.ranks) {
      if (rank.gpu == 1) {
        EXPECT_EQ(rank.line, "CUDA_VISIBLE_DEVICES=1 taskset -c 0-31");
      }
    }
  }
}

TEST(GpuPlacement, ANarrowedCudaNumberingNamesGpusByUuid) {
  Topology topology = loadTopologyFixture("h200x4_vm");
  topology.cudaVisibleDevices = "0,1,2,3";
  const GpuPlacement placement = place(topology, 2);
  EXPECT_EQ(placement.groups[0].ranks[0].visibleDevice, topology.gpus[0].uuid);
  EXPECT_EQ(placement.groups[0].visibleDevices, topology.gpus[0].uuid + "," + topology.gpus[1].uuid);
  EXPECT_TRUE(hasNote(placement, "CUDA_VISIBLE_DEVICES=0,1,2,3: the lines name GPUs by UUID")) << allNotes(placement);
}

TEST(GpuPlacement, BrokenPairsAreNeverGrouped) {
  const Topology topology = loadTopologyFixture("a6000x8_nvlink_bridges");
  // Broken in one direction is enough.
  const GpuPlacement placement = place(topology, 2, 0, verdictsOf(topology, {verdict(2, 0, Verdict::Broken)}));
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 1}, {2, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(placement.brokenPairs, (std::vector<std::pair<int, int>>{{0, 2}}));
  EXPECT_TRUE(hasNote(placement, "doctor verdicts for 28 of 28 pairs; BROKEN, never grouped: 0-2; DEGRADED"))
      << allNotes(placement);
  // The next best may not hold the broken pair either.
  ASSERT_TRUE(placement.nextBest.has_value());
  for (const auto& group : placement.nextBest->groups) EXPECT_NE(group, (std::vector<int>{0, 2}));
}

TEST(GpuPlacement, DegradedPairsCountAgainstTheirGroup) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const GpuPlacement placement = place(topology, 2, 0, verdictsOf(topology, {verdict(0, 1, Verdict::Degraded)}));
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(placement.equallyGood, 2u);
  ASSERT_TRUE(placement.nextBest.has_value());
  EXPECT_EQ(placement.nextBest->groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(placement.nextBest->difference,
            "its weakest group has 1 pair(s) the doctor found DEGRADED where this partition's has 0");
  EXPECT_EQ(placement.degradedPairs, (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(GpuPlacement, NoPartitionAvoidingBrokenPairsIsARefusal) {
  const Topology topology = loadTopologyFixture("rtx4090x2");
  const GpuPlacement placement = place(topology, 2, 0, verdictsOf(topology, {verdict(0, 1, Verdict::Broken)}));
  EXPECT_TRUE(placement.groups.empty());
  EXPECT_TRUE(placement.unused.empty());
  EXPECT_NE(placement.refusal.find("keeps apart the pairs the doctor found BROKEN (0-1)"), std::string::npos)
      << placement.refusal;
  EXPECT_EQ(placement.summary, placement.refusal);

  // The heuristic cannot prove there is none, and says so.
  PlacementRequest request;
  request.groupSize = 2;
  request.verdicts = verdictsOf(topology, {verdict(0, 1, Verdict::Broken)});
  request.exhaustiveLimit = 0;
  const GpuPlacement heuristic = placeGpus(topology, request);
  EXPECT_TRUE(heuristic.groups.empty());
  EXPECT_EQ(heuristic.refusal.rfind("the heuristic found no partition into 1 group(s) of 2 that keeps apart", 0), 0u)
      << heuristic.refusal;
  EXPECT_NE(heuristic.refusal.find("(one may exist: there are too many to try each)"), std::string::npos)
      << heuristic.refusal;
}

TEST(GpuPlacement, PartialVerdictsNameThePairsWithout) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const GpuPlacement placement = place(topology, 2, 0, std::vector<PairVerdict>{verdict(0, 1, Verdict::Ok)});
  EXPECT_TRUE(hasNote(placement, "doctor verdicts for 1 of 6 pairs")) << allNotes(placement);
  EXPECT_TRUE(hasNote(placement, "no verdict for 0-2, 0-3, 1-2, 1-3, 2-3")) << allNotes(placement);
}

TEST(GpuPlacement, BadRequestsAreRefusedClearly) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  auto message = [&](int size, int groups) {
    try {
      place(topology, size, groups);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(0, 0), "a group size of 0: a group needs a GPU at least");
  EXPECT_EQ(message(-2, 0), "a group size of -2: a group needs a GPU at least");
  EXPECT_EQ(message(5, 0), "groups of 5 GPUs: the topology has only 4 GPU(s)");
  EXPECT_EQ(message(3, 0),
            "groups of 3 do not divide the 4 GPUs evenly: choose a size that does (1, 2, 4), or place 3 of them in 1 "
            "group(s) with --groups 1x3");
  EXPECT_EQ(message(2, 3), "3 groups of 2 need 6 GPUs: the topology has 4");
  EXPECT_EQ(message(2, -1), "-1 groups: the count must be positive");
  Topology empty;
  EXPECT_THROW(place(empty, 1), Error);
}

TEST(GpuPlacement, GroupsCompareLinkFirstThenBandwidth) {
  GroupScore nvlink{PathClass::NVL, false, 50, 0, 1, 50};
  GroupScore fasterPix{PathClass::PIX, false, 60, 0, 1, 60};
  GroupScore sysP2p{PathClass::SYS, false, 10, 0, 1, 10};
  GroupScore phbHost{PathClass::PHB, true, 0, 0, 1, 0};
  GroupScore sysHost{PathClass::SYS, true, 0, 0, 1, 0};
  EXPECT_EQ(compareGroupScores(nvlink, fasterPix), -1);
  EXPECT_EQ(compareGroupScores(sysP2p, phbHost), -1) << "any P2P beats none";
  EXPECT_EQ(compareGroupScores(phbHost, sysHost), -1) << "host staging within a socket beats crossing it";
  GroupScore slower = nvlink;
  slower.weakestGBps = 40;
  EXPECT_EQ(compareGroupScores(nvlink, slower), -1);
  GroupScore degraded = nvlink;
  degraded.degradedPairs = 1;
  EXPECT_EQ(compareGroupScores(nvlink, degraded), -1);
  EXPECT_EQ(compareGroupScores(degraded, slower), -1) << "bandwidth before verdicts";
  EXPECT_EQ(compareGroupScores(nvlink, nvlink), 0);
}

// A machine of `switches` PCIe switches of `perSwitch` GPUs each, every pair with P2P: PIX within a switch, PHB
// across. GPU i sits on switch i / perSwitch, or i % switches when `interleaved`.
Topology switchesMachine(int switches, int perSwitch, bool interleaved = false) {
  Topology topology;
  const int n = switches * perSwitch;
  auto switchOf = [&](int gpu) { return interleaved ? gpu % switches : gpu / perSwitch; };
  for (int i = 0; i < n; ++i) {
    Gpu gpu;
    gpu.cudaOrdinal = i;
    gpu.numaNode = 0;
    gpu.cpuAffinity = "0-63";
    gpu.pcie = {4, 16, 4, 16};
    const int sw = switchOf(i);
    gpu.pciPath = {"pci0000:00", fmt::format("0000:00:{:02x}.0", sw), fmt::format("0000:{:02x}:00.0", 2 * sw + 1),
                   fmt::format("0000:{:02x}:{:02x}.0", 2 * sw + 2, i), fmt::format("0000:{:02x}:00.0", 0x40 + i)};
    topology.gpus.push_back(gpu);
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      GpuPair pair;
      pair.src = a;
      pair.dst = b;
      pair.canAccessPeer = true;
      pair.path = switchOf(a) == switchOf(b) ? PathClass::PIX : PathClass::PHB;
      pair.expectedGBps = 31.5;
      pair.bandwidthBasis = "PCIe Gen4 x16";
      topology.pairs.push_back(pair);
    }
  }
  return topology;
}

TEST(GpuPlacement, SixteenGpusAreSearchedExhaustively) {
  const Topology topology = switchesMachine(4, 4);
  // The work is bounded by the partitions tried, not timed: a time would fail on a loaded machine or a sanitizer build.
  const GpuPlacement placement = place(topology, 4);
  EXPECT_TRUE(placement.exhaustive);
  EXPECT_EQ(placement.partitions, 2627625);
  EXPECT_EQ(placement.partitionsTried, 2627625u);
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  EXPECT_EQ(placement.equallyGood, 1u);
}

TEST(GpuPlacement, LargerMachinesUseTheHeuristicAndSaySo) {
  // 32 GPUs on 4 switches, numbered round-robin across them: grouping consecutive GPUs would be the worst choice.
  const Topology topology = switchesMachine(4, 8, true);
  const GpuPlacement placement = place(topology, 8);
  EXPECT_FALSE(placement.exhaustive);
  EXPECT_GT(placement.partitions, 1e15);
  EXPECT_EQ(groupsOf(placement), (Groups{{0, 4, 8, 12, 16, 20, 24, 28},
                                         {1, 5, 9, 13, 17, 21, 25, 29},
                                         {2, 6, 10, 14, 18, 22, 26, 30},
                                         {3, 7, 11, 15, 19, 23, 27, 31}}));
  for (const PlacedGroup& group : placement.groups) EXPECT_EQ(worstLinkName(group.score), "PIX");
  EXPECT_TRUE(hasNote(placement, "not proven best")) << allNotes(placement);

  // Where the exhaustive search also answers, the heuristic finds the same.
  const Topology ten = loadTopologyFixture("pcie_10gpu");
  PlacementRequest request;
  request.groupSize = 5;
  request.exhaustiveLimit = 10;
  const GpuPlacement heuristic = placeGpus(ten, request);
  EXPECT_FALSE(heuristic.exhaustive);
  EXPECT_EQ(groupsOf(heuristic), (Groups{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}));
}

TEST(PartitionSearch, CountsPartitions) {
  EXPECT_EQ(place::countPartitions(8, 2, 4), 105);
  EXPECT_EQ(place::countPartitions(8, 4, 1), 70);
  EXPECT_EQ(place::countPartitions(16, 2, 8), 2027025);
  EXPECT_EQ(place::countPartitions(10, 2, 2), 210 * 3) << "4 of the 10, then 3 ways to pair them";
  EXPECT_EQ(place::countPartitions(4, 1, 4), 1);
}

TEST(PartitionSearch, EveryPartitionIsTriedOnce) {
  const place::GroupScorer scorer = [](const std::vector<int>&) { return GroupScore{}; };
  // Every group scores alike, so every partition is as good as the first.
  const place::SearchResult result = place::searchPartitions(7, 2, 3, scorer, 1000000);
  EXPECT_EQ(result.tried, static_cast<std::uint64_t>(place::countPartitions(7, 2, 3)));
  EXPECT_EQ(result.equallyGood, result.tried);
  EXPECT_FALSE(result.nextBest.has_value());
}

}  // namespace
}  // namespace peerlink
