// Each pair's way (coll/pair_transport.hpp) on every topology fixture and under every override: the consumer
// GPUs without P2P, the dual-socket PCIe server, the VMs, the 10-GPU PCIe box, the NVSwitch machines, and
// synthetic machines whose doctor found a pair BROKEN (or every pair, as in a VM advertising P2P that does not
// work). Then the staged plans over each fixture's ways, run by the host executor.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "coll/pair_transport.hpp"
#include "coll/peer_verdicts.hpp"
#include "coll/plan_staged.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"
#include "plan_test_support.hpp"
#include "topology_fixture.hpp"

namespace peerlink::coll {
namespace {

using peerlink::testing::allDevices;
using peerlink::testing::loadTopologyFixture;

constexpr ProcessBoundary kHere = ProcessBoundary::SameProcess;
constexpr ProcessBoundary kCross = ProcessBoundary::CrossProcess;

Params with(const std::map<std::string, std::string>& settings = {}) {
  Params params;
  for (const auto& [name, value] : settings) params.set(name, value);
  return params;
}

PeerVerdicts verdicts(std::vector<PairVerdict> pairs) {
  return {std::move(pairs), "synthetic verdicts", ""};
}

PairVerdict verdict(int src, int dst, Verdict value, std::vector<std::string> codes = {}) {
  return {src, dst, value, std::move(codes)};
}

// Every pair of `devices` OK but the ones given.
PeerVerdicts allOkBut(const std::vector<int>& devices, const std::vector<PairVerdict>& others) {
  std::vector<PairVerdict> pairs = others;
  for (int s : devices) {
    for (int d : devices) {
      bool given = s == d;
      for (const PairVerdict& other : others) given = given || (other.src == s && other.dst == d);
      if (!given) pairs.push_back(verdict(s, d, Verdict::Ok));
    }
  }
  return verdicts(pairs);
}

PairTransport choose(const std::string& fixture, const Params& params = with(), const PeerVerdicts* given = nullptr,
                     ProcessBoundary boundary = kHere, std::vector<int> devices = {}) {
  const Topology topology = loadTopologyFixture(fixture);
  if (devices.empty()) devices = allDevices(topology);
  return choosePairTransport(topology, devices, params, boundary, given);
}

// "D" direct, "R" relay, "S" host-staged per ordered pair, rows by source rank, "." on the diagonal.
std::string ways(const PairTransport& transport) {
  const int n = static_cast<int>(transport.devices.size());
  std::string text;
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) {
        text += '.';
        continue;
      }
      const PairWay way = transport.at(s, d).way;
      text += way == PairWay::Direct ? 'D' : way == PairWay::Relay ? 'R' : 'S';
    }
    text += s + 1 < n ? "/" : "";
  }
  return text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string errorOf(const std::string& fixture, const Params& params, const PeerVerdicts* given = nullptr,
                    std::vector<int> devices = {}) {
  try {
    choose(fixture, params, given, kHere, std::move(devices));
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
    return error.what();
  }
  return "(no error)";
}

TEST(PairTransport, EveryFixtureByDefault) {
  EXPECT_EQ(ways(choose("rtx4090x2")), ".S/S.");
  EXPECT_EQ(ways(choose("dual_socket_pcie")), ".DDS/D.DS/DD.S/SSS.");
  EXPECT_EQ(ways(choose("h200x4_vm")), ".DDD/D.DD/DD.D/DDD.");
  EXPECT_EQ(ways(choose("vm_flat_numa_unknown")), ".DDD/D.DD/DD.D/DDD.");
  const std::string direct8 = ".DDDDDDD/D.DDDDDD/DD.DDDDD/DDD.DDDD/DDDD.DDD/DDDDD.DD/DDDDDD.D/DDDDDDD.";
  EXPECT_EQ(ways(choose("h100x8_nvswitch")), direct8);
  EXPECT_EQ(ways(choose("a6000x8_nvlink_bridges")),
            ".DDDSSSS/D.DDSSSS/DD.DSSSS/DDD.SSSS/SSSS.DDD/SSSSD.DD/SSSSDD.D/SSSSDDD.");
  const PairTransport ten = choose("pcie_10gpu");
  for (const PairChoice& choice : ten.pairs) EXPECT_EQ(choice.way, PairWay::Direct) << describePairChoice(choice);
  EXPECT_EQ(ten.pairs.size(), 90u);
}

TEST(PairTransport, ReasonsSayWhy) {
  const PairTransport rtx = choose("rtx4090x2");
  EXPECT_EQ(describePairChoice(rtx.at(0, 1)),
            "GPU 0 -> GPU 1: host-staged: no usable P2P: no peer access reported by the driver; no third GPU to relay "
            "through");
  EXPECT_EQ(rtx.at(0, 1).link, "PHB");
  const PairTransport dual = choose("dual_socket_pcie");
  EXPECT_EQ(dual.at(0, 3).why,
            "no usable P2P: path SYS is farther than PEERLINK_P2P_LEVEL=AUTO (PHB); no other GPU has usable P2P with "
            "both");
  EXPECT_EQ(dual.at(1, 2).why, "peer access in one process");
  EXPECT_TRUE(
      contains(dual.verdicts, "no doctor verdicts: none given; peer access is trusted as the driver reports it"))
      << dual.verdicts;
  // Across processes peer access is cuMem's, and a pair without it is staged, never relayed.
  const PairTransport cross = choose("h200x4_vm", with(), nullptr, kCross);
  EXPECT_EQ(cross.at(0, 1).mode, RouteMode::Cumem);
  EXPECT_EQ(cross.at(0, 1).way, PairWay::Direct);
  EXPECT_EQ(cross.at(0, 1).link, "NV18");
}

TEST(PairTransport, SettingsOverride) {
  EXPECT_EQ(ways(choose("h200x4_vm", with({{"PEERLINK_P2P_DISABLE", "1"}}))), ".SSS/S.SS/SS.S/SSS.");
  EXPECT_EQ(choose("h200x4_vm", with({{"PEERLINK_P2P_DISABLE", "1"}})).at(2, 1).why,
            "no usable P2P: PEERLINK_P2P_DISABLE=1; no other GPU has usable P2P with both");
  EXPECT_EQ(ways(choose("h200x4_vm", with({{"PEERLINK_P2P_LEVEL", "LOC"}}))), ".SSS/S.SS/SS.S/SSS.");
  // PIX on the dual-socket server: only 1 <-> 2 share a switch; 0 reaches neither, so it has no relay either.
  EXPECT_EQ(ways(choose("dual_socket_pcie", with({{"PEERLINK_P2P_LEVEL", "PIX"}}))), ".SSS/S.DS/SD.S/SSS.");
  // SYS lets the level pass, but GPU 3's driver reports no peer access.
  const PairTransport sys = choose("dual_socket_pcie", with({{"PEERLINK_P2P_LEVEL", "SYS"}}));
  EXPECT_EQ(sys.at(3, 0).why,
            "no usable P2P: no peer access reported by the driver; no other GPU has usable P2P with both");
  // The 10-GPU box at PIX: two switches of five, joined through host memory.
  const PairTransport pix = choose("pcie_10gpu", with({{"PEERLINK_P2P_LEVEL", "PIX"}}), nullptr, kHere, {0, 1, 5, 6});
  EXPECT_EQ(ways(pix), ".DSS/D.SS/SS.D/SSD.");
  EXPECT_TRUE(contains(formatPairTransport(pix), "0 -> 1 -> 2 -> 3 -> 0 (2 host-staged hops: 1 -> 2, 3 -> 0)"))
      << formatPairTransport(pix);
  EXPECT_EQ(ways(choose("h200x4_vm", with({{"PEERLINK_P2P_MODE", "staged"}}))), ".SSS/S.SS/SS.S/SSS.");
  EXPECT_EQ(choose("h200x4_vm", with({{"PEERLINK_P2P_MODE", "staged"}})).at(0, 1).why, "PEERLINK_P2P_MODE=staged");
  // Forced modes a pair cannot use are errors naming the mode and the pair.
  EXPECT_TRUE(contains(errorOf("rtx4090x2", with({{"PEERLINK_P2P_MODE", "relay"}})),
                       "PEERLINK_P2P_MODE=relay: GPU 0 -> GPU 1"));
  EXPECT_TRUE(contains(errorOf("dual_socket_pcie", with({{"PEERLINK_P2P_MODE", "direct"}})),
                       "PEERLINK_P2P_MODE=direct: GPU 0 -> GPU 3 has no usable P2P"));
}

TEST(PairTransport, BrokenPairIsNeverPeerTraffic) {
  // The synthetic machine: 4x H200 whose doctor found GPU 0 -> GPU 2 corrupting data.
  const std::vector<int> all = {0, 1, 2, 3};
  const PeerVerdicts broken = allOkBut(all, {verdict(0, 2, Verdict::Broken, {"wrong_data"})});
  const PairTransport relayed = choose("h200x4_vm", with(), &broken);
  EXPECT_EQ(ways(relayed), ".DRD/D.DD/DD.D/DDD.");
  EXPECT_EQ(relayed.at(0, 2).relayGpu, 1);
  EXPECT_EQ(relayed.at(0, 2).relayRank, 1);
  EXPECT_TRUE(contains(relayed.at(0, 2).why,
                       "no usable P2P: the doctor found GPU 0 -> GPU 2 BROKEN: wrong_data (synthetic verdicts); GPU 1 "
                       "reaches both"))
      << relayed.at(0, 2).why;
  EXPECT_EQ(relayed.at(2, 0).why, "peer access in one process; the doctor found it OK");
  EXPECT_TRUE(contains(relayed.verdicts, "doctor verdicts for 12 pairs (synthetic verdicts), 1 BROKEN"))
      << relayed.verdicts;
  // Without relays, across processes, or with GPU 1 and 3 outside the communicator: host-staged.
  EXPECT_EQ(ways(choose("h200x4_vm", with({{"PEERLINK_RELAY", "0"}}), &broken)), ".DSD/D.DD/DD.D/DDD.");
  EXPECT_EQ(ways(choose("h200x4_vm", with(), &broken, kCross)), ".DSD/D.DD/DD.D/DDD.");
  const PairTransport pair = choose("h200x4_vm", with(), &broken, kHere, {0, 2});
  EXPECT_EQ(ways(pair), ".S/D.");
  EXPECT_EQ(describePairChoice(pair.at(0, 1)),
            "GPU 0 -> GPU 2: host-staged: no usable P2P: the doctor found GPU 0 -> GPU 2 BROKEN: wrong_data (synthetic "
            "verdicts); no other GPU has usable P2P with both");
  // A forced relay GPU outside the communicator is refused; one inside is taken.
  EXPECT_TRUE(contains(errorOf("h200x4_vm", with({{"PEERLINK_RELAY_GPU", "3"}}), &broken, {0, 1, 2}),
                       "PEERLINK_RELAY_GPU=3: GPU 3 cannot relay GPU 0 -> GPU 2 (GPU 0 -> GPU 3: GPU 3 is not in this "
                       "communicator)"));
  EXPECT_EQ(choose("h200x4_vm", with({{"PEERLINK_RELAY_GPU", "3"}}), &broken).at(0, 2).relayGpu, 3);
  // PEERLINK_VERIFY=off ignores the verdicts and says so.
  const PairTransport off = choose("h200x4_vm", with({{"PEERLINK_VERIFY", "off"}}), &broken);
  EXPECT_EQ(ways(off), ".DDD/D.DD/DD.D/DDD.");
  EXPECT_EQ(off.verdicts, "PEERLINK_VERIFY=off: the doctor's verdicts are not used");
  EXPECT_FALSE(off.at(0, 2).verdict.has_value());
}

TEST(PairTransport, BrokenPcieRelaysOrStages) {
  // The dual-socket server with GPU 0 -> GPU 2 BROKEN: relayed through GPU 1 (PXB then PIX); the other
  // direction keeps peer access. A DEGRADED pair still carries peer traffic, and says so.
  const PeerVerdicts given = verdicts(
      {verdict(0, 2, Verdict::Broken, {"acs_redirect"}), verdict(1, 0, Verdict::Degraded, {"link_trained_down"})});
  const PairTransport dual = choose("dual_socket_pcie", with(), &given);
  EXPECT_EQ(ways(dual), ".DRS/D.DS/DD.S/SSS.");
  EXPECT_EQ(dual.at(1, 0).why,
            "peer access in one process; the doctor found it DEGRADED: link_trained_down (works, slower than its link "
            "should)");
  EXPECT_EQ(dual.at(0, 2).verdict, Verdict::Broken);
  // A VM whose every pair the doctor found BROKEN (P2P advertised, not working): all host-staged.
  std::vector<PairVerdict> vm;
  for (int s = 0; s < 4; ++s) {
    for (int d = 0; d < 4; ++d) {
      if (s != d) vm.push_back(verdict(s, d, Verdict::Broken, {"iommu_translated"}));
    }
  }
  const PeerVerdicts allBroken = verdicts(vm);
  EXPECT_EQ(ways(choose("vm_flat_numa_unknown", with(), &allBroken)), ".SSS/S.SS/SS.S/SSS.");
  // Verdicts of GPUs the topology does not have deny nothing.
  const PeerVerdicts foreign = verdicts({verdict(7, 9, Verdict::Broken)});
  EXPECT_EQ(ways(choose("rtx4090x2", with(), &foreign)), ".S/S.");
}

TEST(PairTransport, BadDevices) {
  EXPECT_TRUE(contains(errorOf("rtx4090x2", with(), nullptr, {0, 2}), "rank 1 is on GPU 2"));
  EXPECT_TRUE(contains(errorOf("rtx4090x2", with(), nullptr, {1, 1}), "GPU 1 is given for more than one rank"));
  EXPECT_THROW(choose("rtx4090x2").at(0, 0), Error);
}

TEST(PairTransport, TableNamesEveryPair) {
  const PeerVerdicts given = verdicts({verdict(0, 2, Verdict::Broken, {"acs_redirect"})});
  const std::string table = formatPairTransport(choose("dual_socket_pcie", with(), &given));
  EXPECT_TRUE(
      contains(table, "# Each pair's way (one process): doctor verdicts for 1 pair (synthetic verdicts), 1 BROKEN"))
      << table;
  EXPECT_TRUE(contains(
      table, "# Ring of the staged plans, by rank: 0 -> 1 -> 2 -> 3 -> 0 (2 host-staged hops: 2 -> 3, 3 -> 0)"))
      << table;
  EXPECT_TRUE(contains(table, "  0 -> 2    0 -> 2    PXB   relay 1     no usable P2P: the doctor found")) << table;
  EXPECT_TRUE(contains(table, "  3 -> 0    3 -> 0    SYS   host-staged no usable P2P: path SYS")) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3 + 12);
}

// The staged plans over every fixture's ways (first 8 GPUs), with and without P2P, and with one pair BROKEN.
TEST(PairTransport, StagedPlansRunOnEveryFixture) {
  for (const char* fixture : {"rtx4090x2", "dual_socket_pcie", "h200x4_vm", "vm_flat_numa_unknown", "h100x8_nvswitch",
                              "a6000x8_nvlink_bridges", "pcie_10gpu"}) {
    const Topology topology = loadTopologyFixture(fixture);
    std::vector<int> devices = allDevices(topology);
    devices.resize(std::min<std::size_t>(devices.size(), 8));
    const PeerVerdicts broken = verdicts({verdict(devices[0], devices[1], Verdict::Broken, {"wrong_data"})});
    for (const Params& params : {with(), with({{"PEERLINK_P2P_DISABLE", "1"}})}) {
      const RankLinks links = rankLinksOf(choosePairTransport(topology, devices, params, kHere, &broken));
      EXPECT_NE(links.way(0, 1), PairWay::Direct) << fixture;
      const int n = links.nranks;
      std::uint32_t seed = 0;
      for (Collective collective : kEveryCollective) {
        const DataType type = reduces(collective) ? DataType::F32 : DataType::U8;
        const Plan plan = buildStagedPlan(collective, n, 1001, n - 1, false, 96, type, links);
        ASSERT_NO_THROW(checkPlanLinks(plan, links)) << fixture << ": " << planName(plan);
        ASSERT_EQ(runAndCompare(plan, ReduceOp::Sum, ++seed), "") << fixture;
      }
    }
  }
}

// PEERLINK_VERIFY=off gathers nothing; cached reads the cache only (here switched off, so none, saying why).
TEST(PairTransport, GatheringVerdictsFollowsPeerlinkVerify) {
  const Topology topology = loadTopologyFixture("h200x4_vm");
  const PeerVerdicts off = gatherPeerVerdicts(topology, {0, 1}, with({{"PEERLINK_VERIFY", "off"}}));
  EXPECT_TRUE(off.pairs.empty());
  EXPECT_EQ(off.absence, "PEERLINK_VERIFY=off");
  const PeerVerdicts cached = gatherPeerVerdicts(topology, {0, 1}, with({{"PEERLINK_DOCTOR_CACHE", "off"}}));
  EXPECT_TRUE(cached.pairs.empty());
  EXPECT_EQ(cached.absence, "the doctor's verdict cache is off (PEERLINK_DOCTOR_CACHE=off)");
  const PairTransport transport = choosePairTransport(topology, {0, 1}, with(), kHere, &cached);
  EXPECT_EQ(transport.verdicts,
            "no doctor verdicts: the doctor's verdict cache is off (PEERLINK_DOCTOR_CACHE=off); peer access is trusted "
            "as the driver reports it (PEERLINK_VERIFY=quick probes it)");
}

// `peerlink coll --explain` prints the table and writes the pairs to its JSON.
TEST(PairTransport, CollExplainShowsEachPairsWay) {
  const std::string rtx = std::string(PEERLINK_FIXTURES_DIR) + "/topologies/rtx4090x2.json";
  const cli::CliResult text = cli::runCli({"coll", "--explain", "--topo-file", rtx, "-b", "1M", "-e", "1M"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "# Each pair's way (one process): no doctor verdicts: ")) << text.out;
  EXPECT_TRUE(contains(text.out,
                       "# Some pair is not direct (the table below): a communicator of these GPUs runs every call "
                       "through host\n"))
      << text.out;
  // What runs at the size instead of a kernel: the host ring (1 MiB is past the LL lines' 256 KiB).
  EXPECT_TRUE(contains(
      text.out, "     1048576      1048576  host ring: slots through host memory (one kernel a rank, no step)\n"))
      << text.out;
  EXPECT_TRUE(contains(text.out,
                       "  0 -> 1    0 -> 1    PHB   host-staged no usable P2P: no peer access reported by the "
                       "driver; no third GPU to relay through\n"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "  1 -> 0    1 -> 0    PHB   host-staged no usable P2P: no peer access reported"))
      << text.out;
  const cli::CliResult json =
      cli::runCli({"coll", "--explain", "--topo-file", rtx, "-b", "1M", "-e", "1M", "--json", "-"});
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json document = nlohmann::json::parse(json.out);
  EXPECT_EQ(document.at("version"), 5);
  EXPECT_EQ(document.at("rows").at(0).at("staged").at("how"), "host_ring");
  EXPECT_TRUE(document.at("rows").at(0).at("across_processes").is_null());  // one process
  // Past the host ring (PEERLINK_COLL_HOST_RING, 8 MiB by default), the plan's steps.
  const cli::CliResult large =
      cli::runCli({"coll", "--explain", "--topo-file", rtx, "-b", "64M", "-e", "64M", "--json", "-"});
  ASSERT_EQ(large.code, 0) << large.err;
  const nlohmann::json plan = nlohmann::json::parse(large.out).at("rows").at(0).at("staged");
  EXPECT_EQ(plan.at("how"), "plan");
  EXPECT_EQ(plan.at("steps"), 13);  // 8 chunks of 4 MiB a shard, pipelined through 6 phases
  // Small calls go in LL lines through host memory.
  const cli::CliResult small =
      cli::runCli({"coll", "--explain", "--topo-file", rtx, "-b", "64K", "-e", "64K", "--json", "-"});
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_EQ(nlohmann::json::parse(small.out).at("rows").at(0).at("staged").at("how"), "ll_lines");
  const nlohmann::json& pairs = document.at("pair_ways").at("pairs");
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].at("way"), "host-staged");
  EXPECT_EQ(pairs[0].at("mode"), "STAGED");
  EXPECT_TRUE(pairs[0].at("relay_gpu").is_null());
  EXPECT_TRUE(pairs[0].at("verdict").is_null());
  EXPECT_EQ(document.at("staged_plans"), true);
  // An NVSwitch machine: every pair direct, the kernels' rows are what runs.
  const std::string h200 = std::string(PEERLINK_FIXTURES_DIR) + "/topologies/h200x4_vm.json";
  const cli::CliResult direct =
      cli::runCli({"coll", "--explain", "--topo-file", h200, "-b", "1M", "-e", "1M", "--json", "-"});
  ASSERT_EQ(direct.code, 0) << direct.err;
  EXPECT_EQ(nlohmann::json::parse(direct.out).at("staged_plans"), false);
  EXPECT_TRUE(nlohmann::json::parse(direct.out).at("rows").at(0).at("staged").is_null());
}

}  // namespace
}  // namespace peerlink::coll
