// The collectives' kernel choice, recorded: the algorithm and the kernel that really runs for every topology
// fixture (on one to three sets of its GPUs), every collective, sizes from 8 B to 1 GiB (every power of two and a
// few sizes that are not multiples of 16 bytes), out of place and in place, aligned and unaligned buffers, with
// and without push stages, under a grid of PEERLINK_ALGO, PEERLINK_PROTO, PEERLINK_COLL_PUSH and PEERLINK_COLL_CE,
// on the fixture's grid and on a one-block grid of 1 KiB ring chunks (whose rounds do not fit the flags).
//
// tests/fixtures/coll_choice/golden.txt holds what the choice gave when this test was written; any difference
// fails. A change meant to move a rule regenerates the file (the test writes what it computed beside itself
// and prints where) and its commit shows the diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "coll_lists.hpp"
#include "kernels/coll_kernels.cuh"
#include "peerlink/collective_choice.hpp"
#include "topology_fixture.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

struct DeviceSet {
  std::string fixture;
  std::vector<int> devices;  ///< empty: every GPU of the fixture, at most kCollMaxRanks
};

const std::vector<DeviceSet> kDeviceSets = {
    {"h100x8_nvswitch", {}},     {"h100x8_nvswitch", {0, 1, 2}},
    {"h100x8_nvswitch", {0, 1}}, {"h200x4_vm", {}},
    {"h200x4_vm", {0, 1}},       {"h200x4_vm", {0}},
    {"dual_socket_pcie", {}},    {"pcie_10gpu", {}},
    {"rtx4090x2", {}},           {"vm_flat_numa_unknown", {}},
};

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> list;
  for (std::size_t bytes = 8; bytes <= 1024 * kMiB; bytes *= 2) list.push_back(bytes);
  for (std::size_t odd :
       {std::size_t{12}, std::size_t{1000}, 3 * kMiB + 4, 40 * kMiB + 8, 100 * kMiB + 4, 600 * kMiB + 8}) {
    list.push_back(odd);
  }
  std::sort(list.begin(), list.end());
  return list;
}

std::vector<ChoiceSettings> settingsGrid() {
  std::vector<ChoiceSettings> grid;
  const Algorithm algorithms[] = {Algorithm::Auto, Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Ring};
  for (Algorithm algorithm : algorithms) {
    for (PushMode push : {PushMode::Auto, PushMode::Pull, PushMode::Push}) {
      for (CopyEngineMode engine : {CopyEngineMode::Auto, CopyEngineMode::Off, CopyEngineMode::On}) {
        grid.push_back({algorithm, Protocol::Auto, push, engine});
      }
    }
  }
  for (Protocol protocol : {Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
    for (Algorithm algorithm : algorithms) grid.push_back({algorithm, protocol, PushMode::Auto, CopyEngineMode::Auto});
  }
  grid.push_back({Algorithm::Auto, Protocol::Simple, PushMode::Push, CopyEngineMode::Auto});
  grid.push_back({Algorithm::Auto, Protocol::Ll, PushMode::Push, CopyEngineMode::Auto});
  grid.push_back({Algorithm::Auto, Protocol::Simple, PushMode::Auto, CopyEngineMode::On});
  return grid;
}

// The launch's grid and the rings' chunk settings.
struct Grid {
  int maxBlocks = 0;
  std::size_t ringChunkBytes = 0;
  int ringReduceBlocks = 0;
};

// One call's facts beyond the settings.
struct Buffers {
  bool inPlace = false;
  bool aligned = true;
  bool pushStages = true;
};

struct Case {
  CollectiveFabric fabric;
  std::vector<int> devices;
  Collective collective = Collective::AllReduce;
  ChoiceSettings settings;
  Grid grid;
};

std::string recorded(const CollectiveChoice& choice) {
  return std::string(algorithmName(choice.algorithm)) + "/" + kernelName(choice.kernel);
}

std::string recordedChoice(const Case& c, std::size_t bytes, const Buffers& buffers) {
  CallShape call;
  call.collective = c.collective;
  call.bytes = bytes;
  call.nranks = static_cast<int>(c.devices.size());
  call.inPlace = buffers.inPlace ? Fact::Yes : Fact::No;
  call.aligned = buffers.aligned ? Fact::Yes : Fact::No;
  ChoiceResources resources;
  resources.pushStages = buffers.pushStages;
  resources.llMaxBytes = kernels::kCollLlMaxBytes;
  resources.maxBlocks = c.grid.maxBlocks;
  resources.ringChunkBytes = c.grid.ringChunkBytes;
  resources.ringReduceBlocks = c.grid.ringReduceBlocks;
  return recorded(chooseCollective(call, c.fabric, resources, c.settings));
}

std::string sizeLabel(std::size_t bytes) {
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "MiB";
  if (bytes % kKiB == 0) return std::to_string(bytes / kKiB) + "KiB";
  return std::to_string(bytes) + "B";
}

// PEERLINK_ALGO/PEERLINK_PROTO/PEERLINK_COLL_PUSH/PEERLINK_COLL_CE as the registry spells them: "AUTO/LL128/1/0".
std::string settingsLabel(const ChoiceSettings& s) {
  return std::string(algorithmSetting(s.forced)) + "/" + protocolName(s.protocol) + "/" + pushModeName(s.push) + "/" +
         copyEngineModeName(s.copyEngine);
}

// A size's cell: the out-of-place choice with aligned buffers and push stages, then each other combination
// whose choice differs from that of the combination without its first tag, tagged i (in place), u
// (unaligned), s (no push stages): "iu" is listed where it differs from "u".
std::string cell(const Case& c, std::size_t bytes) {
  std::string choices[8];
  std::string text;
  for (int variant = 0; variant < 8; ++variant) {
    const Buffers buffers{(variant & 1) != 0, (variant & 2) == 0, (variant & 4) == 0};
    choices[variant] = recordedChoice(c, bytes, buffers);
    if (variant == 0) {
      text = choices[0];
      continue;
    }
    if (choices[variant] == choices[variant & (variant - 1)]) continue;
    std::string tag;
    if (buffers.inPlace) tag += "i";
    if (!buffers.aligned) tag += "u";
    if (!buffers.pushStages) tag += "s";
    text += " " + tag + "=" + choices[variant];
  }
  return text;
}

// The runs of sizes with the same cell.
std::string runs(const Case& c, const std::vector<std::size_t>& sizeList) {
  std::ostringstream out;
  std::size_t from = 0;
  std::string current = cell(c, sizeList[0]);
  for (std::size_t i = 1; i <= sizeList.size(); ++i) {
    const std::string next = i < sizeList.size() ? cell(c, sizeList[i]) : std::string();
    if (i < sizeList.size() && next == current) continue;
    out << " [" << sizeLabel(sizeList[from]) << ".." << sizeLabel(sizeList[i - 1]) << "] " << current << ";";
    from = i;
    current = next;
  }
  return out.str();
}

// The lines of one device set, collective and grid: one per distinct outcome, with the settings that give it.
void addLines(std::ostringstream& out, const std::string& head, Case c, const std::vector<ChoiceSettings>& grid,
              const std::vector<std::size_t>& sizeList) {
  std::vector<std::pair<std::string, std::string>> outcomes;  // runs, settings
  for (const ChoiceSettings& settings : grid) {
    c.settings = settings;
    const std::string result = runs(c, sizeList);
    auto same = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.first == result; });
    if (same == outcomes.end()) {
      outcomes.push_back({result, settingsLabel(settings)});
    } else {
      same->second += " " + settingsLabel(settings);
    }
  }
  for (const auto& [result, settings] : outcomes) out << head << " {" << settings << "}:" << result << "\n";
}

std::string everyChoice() {
  std::ostringstream out;
  out << "# The collectives' kernel choice (test_coll_choice_golden.cc): per device set and collective (and grid\n"
         "# where it is not the GPUs' own), a line per outcome with the settings that give it\n"
         "# {PEERLINK_ALGO/PEERLINK_PROTO/PEERLINK_COLL_PUSH/PEERLINK_COLL_CE ...}, then runs of sizes (bytes per\n"
         "# rank as the choice counts them) with the algorithm/kernel that runs out of place with 16-byte aligned\n"
         "# buffers and push stages, then each other case whose choice differs from that of the case without its\n"
         "# first tag: i in place, u unaligned buffers, s no push stages.\n";
  const std::vector<std::size_t> sizeList = sizes();
  for (const DeviceSet& set : kDeviceSets) {
    const Topology topology = testing::loadTopologyFixture(set.fixture);
    std::vector<int> devices = set.devices.empty() ? testing::allDevices(topology) : set.devices;
    if (devices.size() > static_cast<std::size_t>(kernels::kCollMaxRanks)) devices.resize(kernels::kCollMaxRanks);
    int maxBlocks = kernels::kCollMaxBlocks;
    for (int device : devices) maxBlocks = std::min(maxBlocks, topology.gpus[static_cast<std::size_t>(device)].smCount);
    const CollectiveFabric fabric = fabricOf(topology, devices);
    std::string name = set.fixture + "[";
    for (std::size_t i = 0; i < devices.size(); ++i) name += (i ? "," : "") + std::to_string(devices[i]);
    name += "]";
    for (Collective collective : kEveryCollective) {
      const std::string head = name + " " + collectiveName(collective);
      addLines(out, head, {fabric, devices, collective, {}, {maxBlocks, 0, 0}}, settingsGrid(), sizeList);
      if (set.devices.empty() && (set.fixture == "h200x4_vm" || set.fixture == "dual_socket_pcie")) {
        const std::vector<ChoiceSettings> forced = {
            {}, {Algorithm::Ring, Protocol::Auto, PushMode::Auto, CopyEngineMode::Auto}};
        addLines(out, head + " grid=1 chunk=1024", {fabric, devices, collective, {}, {1, 1024, 0}}, forced, sizeList);
      }
    }
  }
  return out.str();
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CollChoiceGolden, EveryFixtureCollectiveSizeAndSettingAsRecorded) {
  const fs::path golden = fs::path(PEERLINK_FIXTURES_DIR) / "coll_choice" / "golden.txt";
  const std::string actual = everyChoice();
  std::ifstream in(golden);
  std::stringstream expected;
  expected << in.rdbuf();
  if (actual == expected.str()) return;
  const fs::path written = fs::absolute("coll_choice_golden.actual.txt");
  std::ofstream(written) << actual;
  const std::vector<std::string> want = linesOf(expected.str());
  const std::vector<std::string> got = linesOf(actual);
  int shown = 0;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()) && shown < 20; ++i) {
    const std::string wanted = i < want.size() ? want[i] : "(none)";
    const std::string computed = i < got.size() ? got[i] : "(none)";
    if (wanted == computed) continue;
    ADD_FAILURE() << "recorded: " << wanted << "\ncomputed: " << computed;
    ++shown;
  }
  FAIL() << "the choice differs from " << golden << "; what it computed is in " << written
         << " (copy it over the golden file where a rule is meant to change, and commit the diff)";
}

}  // namespace
}  // namespace peerlink
