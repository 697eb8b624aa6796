// Route selection from the topology fixtures: the auto route of every ordered pair of every fixture, each
// override, the error cases and the connection line. Expected routes are written out by hand.
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "peerlink/error.hpp"
#include "peerlink/params.hpp"
#include "peerlink/route.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBig = 256u << 20;
constexpr std::size_t kSmall = 8;
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr ProcessBoundary kHere = ProcessBoundary::SameProcess;
constexpr ProcessBoundary kCross = ProcessBoundary::CrossProcess;

const fs::path kFixtures = fs::path(PEERLINK_FIXTURES_DIR) / "topologies";

Topology load(const std::string& name) {
  return loadTopologyFile((kFixtures / (name + ".json")).string());
}

std::vector<std::string> fixtureNames() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  return names;
}

Params with(const std::map<std::string, std::string>& settings) {
  Params params;
  for (const auto& [name, value] : settings) params.set(name, value);
  return params;
}
Params with(const std::string& name, const std::string& value) {
  return with({{name, value}});
}

Route route(const Topology& topology, const Params& params, int src, int dst, std::size_t bytes,
            ProcessBoundary boundary = kHere) {
  return selectRoute(topology, params, RouteRequest{src, dst, bytes, boundary});
}

// The message of the Error(InvalidUsage) that routing src -> dst (256 MiB) throws.
std::string errorOf(const Topology& topology, const Params& params, int src, int dst,
                    ProcessBoundary boundary = kHere) {
  try {
    route(topology, params, src, dst, kBig, boundary);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return {};
}

testing::AssertionResult has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" lacks \"" << part << "\"";
}

// What the tables below assert of a route: mode, engine, direction, put-with-signal.
std::string summary(const Route& route) {
  return std::string(routeModeName(route.mode)) + " " + engineName(route.engine) + " " +
         directionName(route.direction) + (route.putWithSignal ? " put-with-signal" : "");
}

// clang-format off
const std::map<char, std::string> kCodes = {
    {'R', "DIRECT CE read"},  {'W', "DIRECT CE write"}, {'P', "DIRECT SM write put-with-signal"},
    {'M', "DIRECT SM read"},  {'C', "CUMEM CE read"},   {'c', "CUMEM CE write"}, {'N', "CUMEM SM read"},
    {'I', "IPC CE read"},     {'L', "RELAY CE read"},   {'l', "RELAY CE write"}, {'S', "STAGED CE write"},
    {'i', "IPC CE write"},    {'w', "DIRECT SM write"}, {'r', "RELAY SM read"}};
// clang-format on

void expectRoute(const Route& actual, char code) {
  EXPECT_EQ(summary(actual), kCodes.at(code)) << actual.reason;
}

using Matrix = std::vector<std::string>;  // row = source, column = destination, '.' on the diagonal

void expectMatrix(const Topology& topology, const Params& params, std::size_t bytes, ProcessBoundary boundary,
                  const Matrix& rows) {
  const int n = static_cast<int>(topology.gpus.size());
  ASSERT_EQ(static_cast<int>(rows.size()), n);
  for (int src = 0; src < n; ++src) {
    ASSERT_EQ(static_cast<int>(rows[src].size()), n) << "row " << src;
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      SCOPED_TRACE(testing::Message() << "GPU " << src << " -> GPU " << dst << ", " << bytes << " bytes");
      const Route r = route(topology, params, src, dst, bytes, boundary);
      expectRoute(r, rows[src][dst]);
      EXPECT_EQ(r.relayGpu, -1);
      EXPECT_EQ(r.chunkBytes, r.mode == RouteMode::Staged ? (bytes == kBig ? 8 * kMiB : 256 * kKiB) : 0u);
      EXPECT_FALSE(r.reason.empty());
    }
  }
}

struct FixtureRoutes {
  Matrix big;    // 256 MiB, one process
  Matrix small;  // 8 bytes, one process
  Matrix cross;  // two processes, at 256 MiB and at 8 bytes alike (put-with-signal is DIRECT only)
};

// clang-format off
const std::map<std::string, FixtureRoutes> kAutoRoutes = {
    // NVLink through NVSwitch, compute capability 9.0: the copy engine writes; small messages by put-with-signal.
    {"h100x8_nvswitch",
     {{".WWWWWWW", "W.WWWWWW", "WW.WWWWW", "WWW.WWWW", "WWWW.WWW", "WWWWW.WW", "WWWWWW.W", "WWWWWWW."},
      {".PPPPPPP", "P.PPPPPP", "PP.PPPPP", "PPP.PPPP", "PPPP.PPP", "PPPPP.PP", "PPPPPP.P", "PPPPPPP."},
      {".ccccccc", "c.cccccc", "cc.ccccc", "ccc.cccc", "cccc.ccc", "ccccc.cc", "cccccc.c", "ccccccc."}}},
    {"h200x4_vm",
     {{".WWW", "W.WW", "WW.W", "WWW."},
      {".PPP", "P.PP", "PP.P", "PPP."},
      {".ccc", "c.cc", "cc.c", "ccc."}}},
    // 0-1, 0-2 PXB, 1-2 PIX: P2P over PCIe writes. GPU 3 is across the socket (SYS, no peer access) and no
    // GPU reaches both sides, so it is staged.
    {"dual_socket_pcie",
     {{".WWS", "W.WS", "WW.S", "SSS."},
      {".PPS", "P.PS", "PP.S", "SSS."},
      {".ccS", "c.cS", "cc.S", "SSS."}}},
    // Consumer GPUs: no peer access and no third GPU.
    {"rtx4090x2", {{".S", "S."}, {".S", "S."}, {".S", "S."}}},
    // A VM showing everything as PHB (within AUTO), peer access reported.
    {"vm_flat_numa_unknown",
     {{".WWW", "W.WW", "WW.W", "WWW."},
      {".PPP", "P.PP", "PP.P", "PPP."},
      {".ccc", "c.cc", "cc.c", "ccc."}}},
    // Two PCIe switches of five GPUs (PIX within, PHB across): all within AUTO.
    {"pcie_10gpu",
     {{".WWWWWWWWW", "W.WWWWWWWW", "WW.WWWWWWW", "WWW.WWWWWW", "WWWW.WWWWW",
       "WWWWW.WWWW", "WWWWWW.WWW", "WWWWWWW.WW", "WWWWWWWW.W", "WWWWWWWWW."},
      {".PPPPPPPPP", "P.PPPPPPPP", "PP.PPPPPPP", "PPP.PPPPPP", "PPPP.PPPPP",
       "PPPPP.PPPP", "PPPPPP.PPP", "PPPPPPP.PP", "PPPPPPPP.P", "PPPPPPPPP."},
      {".ccccccccc", "c.cccccccc", "cc.ccccccc", "ccc.cccccc", "cccc.ccccc",
       "ccccc.cccc", "cccccc.ccc", "ccccccc.cc", "cccccccc.c", "ccccccccc."}}},
    // NVLink bridges on pairs, PCIe within a socket (all within AUTO); no peer access across the sockets and no GPU
    // that reaches both, so those pairs are staged.
    {"a6000x8_nvlink_bridges",
     {{".WWWSSSS", "W.WWSSSS", "WW.WSSSS", "WWW.SSSS", "SSSS.WWW", "SSSSW.WW", "SSSSWW.W", "SSSSWWW."},
      {".PPPSSSS", "P.PPSSSS", "PP.PSSSS", "PPP.SSSS", "SSSS.PPP", "SSSSP.PP", "SSSSPP.P", "SSSSPPP."},
      {".cccSSSS", "c.ccSSSS", "cc.cSSSS", "ccc.SSSS", "SSSS.ccc", "SSSSc.cc", "SSSScc.c", "SSSSccc."}}},
};
// clang-format on

// The topology with `src` unable to map `dst` (the driver reports no peer access that way).
Topology withoutAccess(Topology topology, int src, int dst) {
  GpuPair& pair = topology.pair(src, dst);
  pair.canAccessPeer = false;
  pair.p2p.accessSupported = false;
  return topology;
}

Topology withoutP2p(const Topology& topology, int a, int b) {
  return withoutAccess(withoutAccess(topology, a, b), b, a);
}

TEST(RouteSelect, AutoRouteOfEveryPairOfEveryFixture) {
  const std::vector<std::string> names = fixtureNames();
  EXPECT_EQ(names.size(), kAutoRoutes.size());
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const auto expected = kAutoRoutes.find(name);
    ASSERT_NE(expected, kAutoRoutes.end()) << "no expected routes for fixture " << name;
    const Topology topology = load(name);
    expectMatrix(topology, Params(), kBig, kHere, expected->second.big);
    expectMatrix(topology, Params(), kSmall, kHere, expected->second.small);
    expectMatrix(topology, Params(), kBig, kCross, expected->second.cross);
    expectMatrix(topology, Params(), kSmall, kCross, expected->second.cross);
  }
}

TEST(RouteSelect, RejectsGpusOutsideTheTopologyAndSelfRoutes) {
  const Topology h100 = load("h100x8_nvswitch");
  EXPECT_EQ(errorOf(h100, Params(), 0, 8), "route GPU 0 -> GPU 8: the topology has GPUs 0..7");
  EXPECT_EQ(errorOf(h100, Params(), -1, 1), "route GPU -1 -> GPU 1: the topology has GPUs 0..7");
  EXPECT_EQ(errorOf(h100, Params(), 3, 3), "route GPU 3 -> GPU 3: source and destination are the same GPU");
  EXPECT_EQ(errorOf(Topology{}, Params(), 0, 1), "route GPU 0 -> GPU 1: the topology has no GPUs");
  EXPECT_THROW(p2pUsable(h100, Params(), 0, 9, nullptr), Error);
}

TEST(RouteSelect, P2pDisableAndLevelLocStageEverything) {
  const std::map<std::string, Params> settings = {
      {"PEERLINK_P2P_DISABLE=1", with("PEERLINK_P2P_DISABLE", "1")},
      {"PEERLINK_P2P_LEVEL=LOC never uses P2P", with("PEERLINK_P2P_LEVEL", "LOC")}};
  for (const auto& [expectedWhy, params] : settings) {
    for (const std::string& name : fixtureNames()) {
      SCOPED_TRACE(name);
      const Topology topology = load(name);
      for (const GpuPair& pair : topology.pairs) {
        std::string why;
        EXPECT_FALSE(p2pUsable(topology, params, pair.src, pair.dst, &why));
        EXPECT_EQ(why, expectedWhy);
        for (ProcessBoundary boundary : {kHere, kCross}) {
          const Route r = route(topology, params, pair.src, pair.dst, kBig, boundary);
          expectRoute(r, 'S');
          EXPECT_EQ(r.reason.rfind("no usable P2P: " + expectedWhy + "; ", 0), 0u) << r.reason;
        }
      }
    }
  }
}

TEST(RouteSelect, P2pLevelLimitsThePathClass) {
  const Topology dual = load("dual_socket_pcie");
  const Topology pcie = load("pcie_10gpu");
  // PIX: the PXB pairs lose P2P. GPU 0 has no PIX neighbour, and a relay's hops must be usable themselves,
  // so no relay qualifies: staged.
  const Params pix = with("PEERLINK_P2P_LEVEL", "PIX");
  expectMatrix(dual, pix, kBig, kHere, {".SSS", "S.WS", "SW.S", "SSS."});
  EXPECT_EQ(route(dual, pix, 0, 1, kBig).reason,
            "no usable P2P: path PXB is farther than PEERLINK_P2P_LEVEL=PIX; no other GPU has usable P2P with both; "
            "8 MiB chunks");
  // Two switches: across them is PHB, and no GPU is PIX to both sides.
  expectMatrix(pcie, pix, kBig, kHere,
               {".WWWWSSSSS", "W.WWWSSSSS", "WW.WWSSSSS", "WWW.WSSSSS", "WWWW.SSSSS", "SSSSS.WWWW", "SSSSSW.WWW",
                "SSSSSWW.WW", "SSSSSWWW.W", "SSSSSWWWW."});
  // SYS admits the cross-socket path, but the driver still reports no peer access there.
  const Params sys = with("PEERLINK_P2P_LEVEL", "SYS");
  expectMatrix(dual, sys, kBig, kHere, {".WWS", "W.WS", "WW.S", "SSS."});
  EXPECT_TRUE(has(route(dual, sys, 3, 0, kBig).reason, "no usable P2P: no peer access reported by the driver;"));
  // NVL: NVLink pairs only.
  const Params nvl = with("PEERLINK_P2P_LEVEL", "NVL");
  expectRoute(route(load("h100x8_nvswitch"), nvl, 0, 7, kBig), 'W');
  std::string why;
  EXPECT_FALSE(p2pUsable(pcie, nvl, 0, 1, &why));
  EXPECT_EQ(why, "path PIX is farther than PEERLINK_P2P_LEVEL=NVL");
  // AUTO stops at PHB.
  EXPECT_TRUE(p2pUsable(pcie, Params(), 0, 9, &why));
  EXPECT_EQ(why, "");
  EXPECT_FALSE(p2pUsable(dual, Params(), 0, 3, &why));
  EXPECT_EQ(why, "path SYS is farther than PEERLINK_P2P_LEVEL=AUTO (PHB)");
}

TEST(RouteSelect, EngineOverrides) {
  const Topology h100 = load("h100x8_nvswitch");
  const Params sm = with("PEERLINK_P2P_ENGINE", "sm");
  expectRoute(route(h100, sm, 0, 1, kBig), 'M');
  expectRoute(route(h100, sm, 0, 1, kSmall), 'P');
  EXPECT_EQ(route(h100, sm, 0, 1, kSmall).reason,
            "peer access in one process; PEERLINK_P2P_ENGINE=sm; put-with-signal for small messages");
  expectRoute(route(h100, sm, 0, 1, kSmall, kCross), 'N');
  const Route staged = route(load("rtx4090x2"), sm, 0, 1, kBig);
  expectRoute(staged, 'S');
  EXPECT_TRUE(has(staged.reason, "PEERLINK_P2P_ENGINE=sm does not apply to host memory copies"));
  const Params ce = with("PEERLINK_P2P_ENGINE", "ce");
  expectRoute(route(h100, ce, 0, 1, kSmall), 'W');
  expectRoute(route(load("pcie_10gpu"), ce, 0, 1, kSmall), 'W');
}

TEST(RouteSelect, DirectionOverrides) {
  const Topology h100 = load("h100x8_nvswitch");
  expectRoute(route(h100, with("PEERLINK_P2P_READ", "0"), 0, 1, kBig), 'W');
  expectRoute(route(h100, with("PEERLINK_P2P_READ", "0"), 0, 1, kSmall), 'P');
  const Params read = with("PEERLINK_P2P_READ", "1");
  expectRoute(route(load("pcie_10gpu"), read, 0, 9, kBig), 'R');
  const Route smallRead = route(h100, read, 0, 1, kSmall);
  expectRoute(smallRead, 'M');
  EXPECT_EQ(smallRead.reason,
            "peer access in one process; small message: a kernel stores it without a copy-engine launch; SM copy "
            "kernel for small messages (no "
            "put-with-signal: PEERLINK_P2P_READ=1 and put-with-signal writes); PEERLINK_P2P_READ=1");
  const Route staged = route(load("rtx4090x2"), read, 0, 1, kBig);
  expectRoute(staged, 'S');
  EXPECT_TRUE(has(staged.reason, "PEERLINK_P2P_READ=1 does not apply to host memory copies"));
  // Auto by compute capability over NVLink.
  Topology ampere = load("h200x4_vm");
  for (Gpu& gpu : ampere.gpus) gpu.ccMajor = 8;
  EXPECT_EQ(route(ampere, Params(), 0, 1, kBig).reason,
            "peer access in one process; copy engine above 64 KiB; copy engine writes on NVLink");
  const Route ampereSm = route(ampere, with("PEERLINK_P2P_ENGINE", "sm"), 0, 1, kBig);
  expectRoute(ampereSm, 'M');
  EXPECT_TRUE(has(ampereSm.reason, "read preferred on NVLink"));
  Topology volta = ampere;
  for (Gpu& gpu : volta.gpus) gpu.ccMajor = 7;
  expectRoute(route(volta, Params(), 0, 1, kBig), 'W');
  EXPECT_TRUE(has(route(volta, Params(), 0, 1, kBig).reason, "write on NVLink before compute capability 8.0"));
}

TEST(RouteSelect, DirectionFlipsWhenOnlyTheOtherSideCanMap) {
  // GPU 0 cannot map GPU 1; GPU 1 can map GPU 0.
  const Topology oneWay = withoutAccess(load("h200x4_vm"), 0, 1);
  EXPECT_TRUE(p2pUsable(oneWay, Params(), 0, 1, nullptr));
  EXPECT_TRUE(p2pUsable(oneWay, Params(), 1, 0, nullptr));
  // 0 -> 1: the copy engine would write, which needs GPU 0 to map GPU 1; GPU 1 pulls instead.
  const Route flipped = route(oneWay, Params(), 0, 1, kBig);
  expectRoute(flipped, 'R');
  EXPECT_TRUE(has(flipped.reason,
                  "copy engine writes: faster than reads on Hopper NVLink, but GPU 0 cannot map GPU 1: read instead"));
  const Route forcedWrite = route(oneWay, with("PEERLINK_P2P_READ", "0"), 0, 1, kBig);
  expectRoute(forcedWrite, 'R');
  EXPECT_TRUE(has(forcedWrite.reason, "PEERLINK_P2P_READ=0, but GPU 0 cannot map GPU 1: read instead"));
  // 1 -> 0: the copy engine writes, which GPU 1 can; a copy kernel would read, which needs GPU 0 to map
  // GPU 1: write instead.
  expectRoute(route(oneWay, Params(), 1, 0, kBig), 'W');
  const Route back = route(oneWay, with("PEERLINK_P2P_ENGINE", "sm"), 1, 0, kBig);
  expectRoute(back, 'w');
  EXPECT_TRUE(has(back.reason, "read preferred on Hopper NVLink, but GPU 0 cannot map GPU 1: write instead"));
  // Put-with-signal stores from the source, impossible 0 -> 1: a kernel on GPU 1 pulls instead.
  const Route small = route(oneWay, Params(), 0, 1, kSmall);
  expectRoute(small, 'M');
  EXPECT_TRUE(has(small.reason, "no put-with-signal: GPU 0 cannot map GPU 1 to write"));
  expectRoute(route(oneWay, Params(), 1, 0, kSmall), 'P');
  expectRoute(route(oneWay, Params(), 0, 1, kBig, kCross), 'C');
}

TEST(RouteSelect, CrossProcessHandles) {
  const Topology h100 = load("h100x8_nvswitch");
  const Route ipc = route(h100, with("PEERLINK_CUMEM", "0"), 0, 1, kBig, kCross);
  expectRoute(ipc, 'i');
  EXPECT_TRUE(has(ipc.reason, "legacy IPC handles (PEERLINK_CUMEM=0);"));
  Topology noFd = h100;
  noFd.gpus[1].handles.posixFd = false;
  const Route fallback = route(noFd, Params(), 0, 1, kBig, kCross);
  expectRoute(fallback, 'i');
  EXPECT_TRUE(has(fallback.reason, "legacy IPC handles: GPU 1 has no cuMem POSIX-fd handles (vmm 1, posix_fd 0);"));
  expectRoute(route(noFd, Params(), 0, 2, kBig, kCross), 'c');
}

TEST(RouteSelect, RelayThroughTheBestConnectedGpu) {
  Topology noPeer = withoutP2p(load("h200x4_vm"), 0, 1);
  // Over NVLink the relay GPU runs one kernel that reads the source and writes the destination.
  const Route relay = route(noPeer, Params(), 0, 1, kBig);
  expectRoute(relay, 'r');
  EXPECT_EQ(relay.relayGpu, 2);  // 2 and 3 tie: the lower ordinal
  EXPECT_EQ(relay.chunkBytes, 0u);
  EXPECT_EQ(relay.reason,
            "no usable P2P: no peer access reported by the driver; GPU 2 reaches both (478 GB/s per hop); a kernel on "
            "GPU 2 reads the source and writes the destination (no staging); split across GPUs 2, 3");
  EXPECT_EQ(relay.relayStripes, (std::vector<int>{2, 3}));
  // A forced relay GPU is used alone.
  EXPECT_EQ(route(noPeer, with("PEERLINK_RELAY_GPU", "3"), 0, 1, kBig).relayStripes, (std::vector<int>{3}));
  const Route small = route(noPeer, Params(), 1, 0, kSmall);
  expectRoute(small, 'r');
  EXPECT_EQ(small.relayGpu, 2);
  // Forced copy engines: two pipelined hops through staging slots on the relay GPU.
  const Route staged = route(noPeer, with("PEERLINK_P2P_ENGINE", "ce"), 0, 1, kBig);
  expectRoute(staged, 'l');
  EXPECT_EQ(staged.chunkBytes, 8 * kMiB);
  EXPECT_EQ(staged.reason,
            "no usable P2P: no peer access reported by the driver; GPU 2 reaches both (478 GB/s per hop); "
            "PEERLINK_P2P_ENGINE=ce; copy engine writes: faster than reads on Hopper NVLink; 8 MiB chunks");
  EXPECT_EQ(route(noPeer, with("PEERLINK_P2P_ENGINE", "sm"), 0, 1, kBig).engine, Engine::Sm);
  // The narrower hop counts: 0->2 is fast but 2->1 slow, so 3 wins.
  noPeer.pair(0, 2).expectedGBps = 900;
  noPeer.pair(2, 1).expectedGBps = 100;
  EXPECT_EQ(route(noPeer, Params(), 0, 1, kBig).relayGpu, 3);
  // Link bandwidth unknown everywhere (the VM fixture): the lowest ordinal; over PCIe the copy engines
  // relay (kernel reads across PCIe are slow), and their hops write.
  const Route vm = route(withoutP2p(load("vm_flat_numa_unknown"), 0, 1), Params(), 0, 1, kBig);
  expectRoute(vm, 'l');
  EXPECT_EQ(vm.relayGpu, 2);
  EXPECT_TRUE(has(vm.reason, "; GPU 2 reaches both;"));
  EXPECT_TRUE(has(vm.reason, "copy engine for relay hops: GPU 2 cannot map both ends over NVLink"));
  // Not across processes, not when switched off.
  const Route cross = route(noPeer, Params(), 0, 1, kBig, kCross);
  expectRoute(cross, 'S');
  EXPECT_TRUE(has(cross.reason, "relay across processes is not supported yet"));
  const Route off = route(noPeer, with("PEERLINK_RELAY", "0"), 0, 1, kBig);
  expectRoute(off, 'S');
  EXPECT_TRUE(has(off.reason, "relay off (PEERLINK_RELAY=0)"));
}

TEST(RouteSelect, RelayGpuOverride) {
  const Topology noPeer = withoutP2p(load("h200x4_vm"), 0, 1);
  const Route forced = route(noPeer, with("PEERLINK_RELAY_GPU", "3"), 0, 1, kBig);
  EXPECT_EQ(forced.relayGpu, 3);
  EXPECT_TRUE(has(forced.reason, "through GPU 3 (PEERLINK_RELAY_GPU)"));
  EXPECT_EQ(errorOf(noPeer, with("PEERLINK_RELAY_GPU", "7"), 0, 1),
            "PEERLINK_RELAY_GPU=7: no GPU 7 (the topology has GPUs 0..3)");
  EXPECT_EQ(errorOf(noPeer, with("PEERLINK_RELAY_GPU", "1"), 0, 1),
            "PEERLINK_RELAY_GPU=1: GPU 1 is an end of GPU 0 -> GPU 1, not between them");
  const Topology cutOff = withoutP2p(noPeer, 0, 2);
  EXPECT_EQ(errorOf(cutOff, with("PEERLINK_RELAY_GPU", "2"), 0, 1),
            "PEERLINK_RELAY_GPU=2: GPU 2 cannot relay GPU 0 -> GPU 1 (GPU 0 -> GPU 2: no peer access reported by the "
            "driver)");
  EXPECT_EQ(route(cutOff, Params(), 0, 1, kBig).relayGpu, 3);
  // Only consulted where a relay is considered.
  expectRoute(route(load("h100x8_nvswitch"), with("PEERLINK_RELAY_GPU", "1"), 0, 1, kBig), 'W');
}

TEST(RouteSelect, ForcedModes) {
  const Topology h100 = load("h100x8_nvswitch");
  const Topology rtx = load("rtx4090x2");
  const Topology dual = load("dual_socket_pcie");
  const auto mode = [](const std::string& value) { return with("PEERLINK_P2P_MODE", value); };

  EXPECT_EQ(route(h100, mode("direct"), 0, 1, kBig).mode, RouteMode::Direct);
  EXPECT_EQ(errorOf(rtx, mode("direct"), 0, 1),
            "PEERLINK_P2P_MODE=direct: GPU 0 -> GPU 1 has no usable P2P (no peer access reported by the driver)");
  EXPECT_EQ(errorOf(h100, mode("direct"), 0, 1, kCross),
            "PEERLINK_P2P_MODE=direct: GPU 0 -> GPU 1 crosses processes (DIRECT needs both buffers in one process)");
  EXPECT_EQ(errorOf(h100, with({{"PEERLINK_P2P_MODE", "direct"}, {"PEERLINK_P2P_DISABLE", "1"}}), 0, 1),
            "PEERLINK_P2P_MODE=direct: GPU 0 -> GPU 1 has no usable P2P (PEERLINK_P2P_DISABLE=1)");

  const Route ipcHere = route(h100, mode("ipc"), 0, 1, kBig);
  expectRoute(ipcHere, 'i');
  EXPECT_TRUE(has(ipcHere.reason, "PEERLINK_P2P_MODE=ipc in one process (the transport opens its own handles);"));
  expectRoute(route(h100, mode("ipc"), 0, 1, kBig, kCross), 'i');
  EXPECT_EQ(errorOf(dual, mode("ipc"), 0, 3, kCross),
            "PEERLINK_P2P_MODE=ipc: GPU 0 -> GPU 3 has no usable P2P (path SYS is farther than "
            "PEERLINK_P2P_LEVEL=AUTO (PHB))");

  expectRoute(route(h100, mode("cumem"), 0, 1, kBig), 'c');
  const Params cumemOverIpc = with({{"PEERLINK_P2P_MODE", "cumem"}, {"PEERLINK_CUMEM", "0"}});
  expectRoute(route(h100, cumemOverIpc, 0, 1, kBig, kCross), 'c');
  Topology noVmm = h100;
  noVmm.gpus[0].handles.vmm = false;
  EXPECT_EQ(errorOf(noVmm, mode("cumem"), 0, 1, kCross),
            "PEERLINK_P2P_MODE=cumem: GPU 0 -> GPU 1 cannot use CUMEM (GPU 0 has no cuMem POSIX-fd handles (vmm 0, "
            "posix_fd 1))");

  const Route relay = route(h100, mode("relay"), 0, 1, kBig);
  expectRoute(relay, 'r');
  EXPECT_EQ(relay.relayGpu, 2);
  EXPECT_TRUE(has(relay.reason, "PEERLINK_P2P_MODE=relay; GPU 2 reaches both (478 GB/s per hop);"));
  EXPECT_EQ(route(h100, mode("relay"), 2, 0, kBig).relayGpu, 1);
  EXPECT_EQ(errorOf(rtx, mode("relay"), 0, 1),
            "PEERLINK_P2P_MODE=relay: GPU 0 -> GPU 1 cannot relay (no third GPU to relay through)");
  EXPECT_EQ(errorOf(dual, mode("relay"), 0, 3),
            "PEERLINK_P2P_MODE=relay: GPU 0 -> GPU 3 cannot relay (no other GPU has usable P2P with both)");
  EXPECT_EQ(errorOf(h100, mode("relay"), 0, 1, kCross),
            "PEERLINK_P2P_MODE=relay: GPU 0 -> GPU 1 crosses processes (relay across processes is not supported yet)");

  for (const std::string& name : fixtureNames()) {
    const Topology topology = load(name);
    for (const GpuPair& pair : topology.pairs) {
      expectRoute(route(topology, mode("staged"), pair.src, pair.dst, kSmall, kCross), 'S');
    }
  }
}

TEST(RouteSelect, ChunkSizes) {
  const Topology rtx = load("rtx4090x2");
  const auto chunk = [&](std::size_t bytes) { return route(rtx, Params(), 0, 1, bytes).chunkBytes; };
  // bytes / 8 within [256 KiB, 8 MiB], rounded up to 64 KiB (3000000 / 8 = 375000 -> 384 KiB).
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {
      {0, 256 * kKiB},          {kSmall, 256 * kKiB},  {2 * kMiB + 1, 256 * kKiB}, {3000000, 384 * kKiB},
      {10 * kMiB, 1280 * kKiB}, {64 * kMiB, 8 * kMiB}, {1024 * kMiB, 8 * kMiB}};
  for (const auto& [bytes, chunkBytes] : expected) EXPECT_EQ(chunk(bytes), chunkBytes) << bytes;
  const Params forced = with("PEERLINK_CHUNK_BYTES", "1048576");
  const Route staged = route(rtx, forced, 0, 1, kBig);
  EXPECT_EQ(staged.chunkBytes, 1 * kMiB);
  EXPECT_TRUE(has(staged.reason, "1 MiB chunks (PEERLINK_CHUNK_BYTES)"));
  EXPECT_EQ(route(withoutP2p(load("h200x4_vm"), 0, 1), forced, 0, 1, kBig).chunkBytes, 0u);  // pass-through relay
  const Params forcedCe = with({{"PEERLINK_CHUNK_BYTES", "1048576"}, {"PEERLINK_P2P_ENGINE", "ce"}});
  EXPECT_EQ(route(withoutP2p(load("h200x4_vm"), 0, 1), forcedCe, 0, 1, kBig).chunkBytes, 1 * kMiB);
  EXPECT_EQ(route(load("h100x8_nvswitch"), forced, 0, 1, kBig).chunkBytes, 0u);
}

TEST(RouteSelect, PutSignalThreshold) {
  const Topology h100 = load("h100x8_nvswitch");
  expectRoute(route(h100, Params(), 0, 1, 64 * kKiB), 'P');
  expectRoute(route(h100, Params(), 0, 1, 64 * kKiB + 1), 'W');
  const Params off = with("PEERLINK_PUT_SIGNAL_MAX_BYTES", "0");
  expectRoute(route(h100, off, 0, 1, 0), 'W');
  const Route small = route(h100, off, 0, 1, kSmall);
  expectRoute(small, 'W');
  EXPECT_TRUE(has(small.reason, "copy engine (put-with-signal off: PEERLINK_PUT_SIGNAL_MAX_BYTES=0)"));
  expectRoute(route(h100, with("PEERLINK_PUT_SIGNAL_MAX_BYTES", "1048576"), 0, 1, kMiB), 'P');
}

std::string line(const Topology& topology, const Params& params, int src, int dst, std::size_t bytes,
                 ProcessBoundary boundary = kHere) {
  const RouteRequest request{src, dst, bytes, boundary};
  return describeRoute(topology, request, selectRoute(topology, params, request));
}

TEST(RouteSelect, DescribeRoute) {
  const Topology h100 = load("h100x8_nvswitch");
  EXPECT_EQ(line(h100, Params(), 0, 1, kBig),
            "0[0] -> 1[1] via P2P/DIRECT/CE/write (NV18; peer access in one process; copy engine above 64 KiB; copy "
            "engine writes: faster than reads on Hopper NVLink)");
  EXPECT_EQ(line(h100, with("PEERLINK_P2P_ENGINE", "sm"), 0, 1, kBig, kCross),
            "0[0] -> 1[1] via P2P/CUMEM/SM/read (NV18; cuMem handles shared as POSIX fds; PEERLINK_P2P_ENGINE=sm; "
            "read preferred on Hopper NVLink)");
  EXPECT_EQ(line(h100, Params(), 3, 5, kSmall),
            "3[3] -> 5[5] via P2P/DIRECT/SM/write (NV18; peer access in one process; small message: a kernel stores "
            "it without a copy-engine launch; put-with-signal for small messages)");
  EXPECT_EQ(line(load("dual_socket_pcie"), Params(), 0, 3, kBig),
            "0[0] -> 3[3] via SHM/STAGED/CE/write (SYS; no usable P2P: path SYS is farther than "
            "PEERLINK_P2P_LEVEL=AUTO (PHB); no other GPU has usable P2P with both; 8 MiB chunks)");
  EXPECT_EQ(line(load("rtx4090x2"), Params(), 0, 1, kSmall),
            "0[0] -> 1[1] via SHM/STAGED/CE/write (PHB; no usable P2P: no peer access reported by the driver; no "
            "third GPU to relay through; 256 KiB chunks)");
  EXPECT_EQ(line(withoutP2p(load("h200x4_vm"), 0, 1), Params(), 1, 0, kBig),
            "1[1] -> 0[0] via RELAY/GPU2/SM/read (NV18; no usable P2P: no peer access reported by the driver; GPU 2 "
            "reaches both (478 GB/s per hop); a kernel on GPU 2 reads the source and writes the destination (no "
            "staging); split across GPUs 2, 3)");
  // nvidia-smi numbering differs from CUDA's, or is unknown.
  Topology renumbered = load("pcie_10gpu");
  renumbered.gpus[0].nvmlIndex = -1;
  renumbered.gpus[1].nvmlIndex = 7;
  EXPECT_EQ(line(renumbered, Params(), 0, 1, kBig),
            "0[0] -> 1[7] via P2P/DIRECT/CE/write (PIX; peer access in one process; copy engine above 64 KiB; posted "
            "writes cross PCIe better than reads)");
}

TEST(RouteSelect, Names) {
  std::string names;
  for (RouteMode mode : {RouteMode::Direct, RouteMode::Ipc, RouteMode::Cumem, RouteMode::Relay, RouteMode::Staged}) {
    names += std::string(routeModeName(mode)) + " ";
  }
  names += std::string(engineName(Engine::CopyEngine)) + " " + engineName(Engine::Sm) + " ";
  names += std::string(directionName(Direction::Write)) + " " + directionName(Direction::Read);
  EXPECT_EQ(names, "DIRECT IPC CUMEM RELAY STAGED CE SM write read");
}

}  // namespace
}  // namespace peerlink
