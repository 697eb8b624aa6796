// Topology JSON: round trips, every fixture loads, and malformed input fails with one line naming the
// file, the field and the problem.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Gpu makeGpu(int ordinal) {
  Gpu gpu;
  gpu.cudaOrdinal = ordinal;
  gpu.nvmlIndex = 3 - ordinal;
  gpu.uuid = "GPU-0000000" + std::to_string(ordinal) + "-aaaa-bbbb-cccc-dddddddddddd";
  gpu.pciBusId = "0000:0" + std::to_string(ordinal + 1) + ":00.0";
  gpu.name = "NVIDIA Test " + std::to_string(ordinal);
  gpu.ccMajor = 9;
  gpu.ccMinor = ordinal;
  gpu.smCount = 130 + ordinal;
  gpu.memoryBytes = 150109880320ULL + static_cast<std::uint64_t>(ordinal);
  gpu.numaNode = ordinal == 2 ? -1 : ordinal;
  gpu.cpuAffinity = ordinal == 2 ? "" : "0-31,64-95";
  gpu.pcie = {5, 16, 5 + ordinal, 8 * ordinal};
  gpu.nvlink = {4, 18 - ordinal, 17, 26.5625};
  gpu.pciPath = {"pci0000:00", "0000:00:01.0", gpu.pciBusId};
  if (ordinal == 2) gpu.pciPath.clear();
  return gpu;
}

// Three GPUs, every field away from its default, and optionals set.
Topology makeSample() {
  Topology t;
  t.source = "discovered";
  t.host = "node-7";
  t.driverVersion = "580.159.04";
  t.cudaDriverVersion = 13000;
  t.cudaRuntimeVersion = 12080;
  t.cudaVisibleDevices = "2,0,1";
  t.cudaDeviceOrder = "PCI_BUS_ID";
  for (int i = 0; i < 3; ++i) {
    t.gpus.push_back(makeGpu(i));
    t.nvmlGpus.push_back({i, t.gpus.back().uuid, t.gpus.back().pciBusId});
  }
  t.nvmlGpus.push_back({3, "GPU-hidden", "0000:09:00.0"});
  const PathClass paths[] = {PathClass::NVL, PathClass::PIX, PathClass::SYS};
  int k = 0;
  for (int s = 0; s < 3; ++s) {
    for (int d = 0; d < 3; ++d) {
      if (s == d) continue;
      GpuPair p;
      p.src = s;
      p.dst = d;
      p.canAccessPeer = k % 2 == 0;
      p.p2p = {k % 2 == 0, k % 3 == 0, k % 4 == 0, k};
      p.nvlinks = 18 - k;
      p.viaNvswitch = k % 2 == 1;
      p.path = paths[k % 3];
      p.expectedGBps = 478.125 - k * 0.5;
      p.bandwidthBasis = "basis " + std::to_string(k);
      t.pairs.push_back(p);
      ++k;
    }
  }
  t.notes = {"first note", "second note with \"quotes\" and \\ backslash"};
  return t;
}

void expectSameGpu(const Gpu& a, const Gpu& b) {
  EXPECT_EQ(a.cudaOrdinal, b.cudaOrdinal);
  EXPECT_EQ(a.nvmlIndex, b.nvmlIndex);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.pciBusId, b.pciBusId);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.ccMajor, b.ccMajor);
  EXPECT_EQ(a.ccMinor, b.ccMinor);
  EXPECT_EQ(a.smCount, b.smCount);
  EXPECT_EQ(a.memoryBytes, b.memoryBytes);
  EXPECT_EQ(a.numaNode, b.numaNode);
  EXPECT_EQ(a.cpuAffinity, b.cpuAffinity);
  EXPECT_EQ(a.pcie.gen, b.pcie.gen);
  EXPECT_EQ(a.pcie.width, b.pcie.width);
  EXPECT_EQ(a.pcie.maxGen, b.pcie.maxGen);
  EXPECT_EQ(a.pcie.maxWidth, b.pcie.maxWidth);
  EXPECT_EQ(a.nvlink.version, b.nvlink.version);
  EXPECT_EQ(a.nvlink.activeLinks, b.nvlink.activeLinks);
  EXPECT_EQ(a.nvlink.switchLinks, b.nvlink.switchLinks);
  EXPECT_EQ(a.nvlink.linkRateGBps, b.nvlink.linkRateGBps);
  EXPECT_EQ(a.pciPath, b.pciPath);
}

void expectSamePair(const GpuPair& a, const GpuPair& b) {
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.canAccessPeer, b.canAccessPeer);
  EXPECT_EQ(a.p2p.accessSupported, b.p2p.accessSupported);
  EXPECT_EQ(a.p2p.nativeAtomics, b.p2p.nativeAtomics);
  EXPECT_EQ(a.p2p.cudaArrayAccess, b.p2p.cudaArrayAccess);
  EXPECT_EQ(a.p2p.performanceRank, b.p2p.performanceRank);
  EXPECT_EQ(a.nvlinks, b.nvlinks);
  EXPECT_EQ(a.viaNvswitch, b.viaNvswitch);
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.expectedGBps, b.expectedGBps);
  EXPECT_EQ(a.bandwidthBasis, b.bandwidthBasis);
}

// Everything but `source`, which a loaded topology takes from where it was loaded.
void expectSameTopology(const Topology& a, const Topology& b) {
  EXPECT_EQ(a.schemaVersion, b.schemaVersion);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.driverVersion, b.driverVersion);
  EXPECT_EQ(a.cudaDriverVersion, b.cudaDriverVersion);
  EXPECT_EQ(a.cudaRuntimeVersion, b.cudaRuntimeVersion);
  EXPECT_EQ(a.cudaVisibleDevices, b.cudaVisibleDevices);
  EXPECT_EQ(a.cudaDeviceOrder, b.cudaDeviceOrder);
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (size_t i = 0; i < a.gpus.size(); ++i) {
    SCOPED_TRACE("gpu " + std::to_string(i));
    expectSameGpu(a.gpus[i], b.gpus[i]);
  }
  ASSERT_EQ(a.nvmlGpus.size(), b.nvmlGpus.size());
  for (size_t i = 0; i < a.nvmlGpus.size(); ++i) {
    EXPECT_EQ(a.nvmlGpus[i].index, b.nvmlGpus[i].index);
    EXPECT_EQ(a.nvmlGpus[i].uuid, b.nvmlGpus[i].uuid);
    EXPECT_EQ(a.nvmlGpus[i].pciBusId, b.nvmlGpus[i].pciBusId);
  }
  ASSERT_EQ(a.pairs.size(), b.pairs.size());
  for (size_t i = 0; i < a.pairs.size(); ++i) {
    SCOPED_TRACE("pair " + std::to_string(i));
    expectSamePair(a.pairs[i], b.pairs[i]);
  }
  EXPECT_EQ(a.notes, b.notes);
}

TEST(TopologyJson, RoundTripKeepsEveryField) {
  const Topology original = makeSample();
  const Topology loaded = topologyFromJson(topologyToJson(original), "sample.json");
  expectSameTopology(original, loaded);
  EXPECT_EQ(loaded.source, "sample.json");
}

TEST(TopologyJson, RoundTripWithOptionalsUnsetAndNothingKnown) {
  Topology original = makeSample();
  original.cudaVisibleDevices.reset();
  original.cudaDeviceOrder.reset();
  original.nvmlGpus.clear();
  original.notes.clear();
  original.driverVersion.clear();
  const std::string text = topologyToJson(original);
  EXPECT_NE(text.find("\"cuda_visible_devices\": null"), std::string::npos) << text;
  EXPECT_NE(text.find("\"cuda_device_order\": null"), std::string::npos) << text;
  const Topology loaded = topologyFromJson(text, "sample.json");
  expectSameTopology(original, loaded);
  EXPECT_FALSE(loaded.cudaVisibleDevices.has_value());
}

TEST(TopologyJson, WritesAllFieldsWithSchemaAndVersion) {
  const Json j = Json::parse(topologyToJson(makeSample()));
  EXPECT_EQ(j.at("schema"), "peerlink.topology");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("source"), "discovered");
  EXPECT_EQ(j.at("gpus").at(1).at("compute_capability"), "9.1");
  EXPECT_EQ(j.at("gpus").at(0).at("memory_bytes"), 150109880320ULL);
  for (const char* key : {"cuda_ordinal", "nvml_index", "uuid", "pci_bus_id", "name", "compute_capability", "sm_count",
                          "memory_bytes", "numa_node", "cpu_affinity", "pcie", "nvlink", "pci_path"}) {
    EXPECT_TRUE(j.at("gpus").at(2).contains(key)) << key;
  }
  for (const char* key : {"src", "dst", "can_access_peer", "p2p", "nvlinks", "via_nvswitch", "path", "expected_gbps",
                          "bandwidth_basis"}) {
    EXPECT_TRUE(j.at("pairs").at(0).contains(key)) << key;
  }
  EXPECT_EQ(j.at("pairs").at(0).at("path"), "NVL");
  EXPECT_EQ(j.at("pairs").at(0).at("p2p").size(), 4u);
}

TEST(TopologyJson, OptionalFieldsTakeTheirDefaultsAndUnknownKeysAreIgnored) {
  const Json j = {
      {"schema", "peerlink.topology"},
      {"version", 1},
      {"future_field", {{"anything", true}}},
      {"gpus",
       Json::array(
           {{{"cuda_ordinal", 0}, {"uuid", "GPU-a"}, {"pci_bus_id", "0000:01:00.0"}, {"name", "A"}, {"extra", 1}},
            {{"cuda_ordinal", 1}, {"uuid", "GPU-b"}, {"pci_bus_id", "0000:02:00.0"}, {"name", "B"}}})},
      {"pairs", Json::array({{{"src", 0}, {"dst", 1}}, {{"src", 1}, {"dst", 0}, {"path", "pix"}}})}};
  const Topology t = topologyFromJson(j.dump(), "minimal.json");
  const Gpu defaults;
  Gpu expected = defaults;
  expected.cudaOrdinal = 1;
  expected.uuid = "GPU-b";
  expected.pciBusId = "0000:02:00.0";
  expected.name = "B";
  expectSameGpu(t.gpus[1], expected);
  GpuPair expectedPair;
  expectedPair.src = 0;
  expectedPair.dst = 1;
  expectSamePair(t.pair(0, 1), expectedPair);
  EXPECT_EQ(t.pair(1, 0).path, PathClass::PIX);
  EXPECT_TRUE(t.nvmlGpus.empty());
  EXPECT_TRUE(t.notes.empty());
  EXPECT_FALSE(t.cudaVisibleDevices.has_value());
  EXPECT_EQ(t.source, "minimal.json");
}

TEST(TopologyJson, EveryFixtureLoadsAndRoundTrips) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PEERLINK_FIXTURES_DIR) / "topologies")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const Topology t = loadTopologyFile(entry.path().string());
    EXPECT_EQ(t.source, entry.path().string());
    EXPECT_FALSE(t.gpus.empty());
    expectSameTopology(t, topologyFromJson(topologyToJson(t), "again.json"));
    ++count;
  }
  EXPECT_GE(count, 6);
}

// ---- malformed input -----------------------------------------------------------------------------

// Asserts that loading fails with InvalidInput and a one-line message containing every fragment.
template <typename Load>
void expectInvalid(Load load, std::initializer_list<std::string> fragments) {
  try {
    load();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidInput) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

void expectInvalidText(const std::string& text, std::initializer_list<std::string> fragments) {
  expectInvalid([&] { topologyFromJson(text, "t.json"); }, fragments);
}

// The sample as a JSON document, to be broken one way per test.
Json sampleJson() {
  return Json::parse(topologyToJson(makeSample()));
}

class TempFile {
 public:
  explicit TempFile(const std::string& content)
      : path_((fs::temp_directory_path() /
               ("peerlink_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++) + ".json"))
                  .string()) {
    std::ofstream(path_) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// A file may list the pairs in any order; loaded, they are in (src, dst) order, where Topology::pair finds
// each by its index. A topology built by hand in another order is still searched.
TEST(TopologyJson, PairsAreOrderedAndFoundByIndex) {
  Json j = sampleJson();
  std::reverse(j["pairs"].begin(), j["pairs"].end());
  const Topology loaded = topologyFromJson(j.dump(), "reversed.json");
  for (std::size_t i = 1; i < loaded.pairs.size(); ++i) {
    EXPECT_LT(std::make_pair(loaded.pairs[i - 1].src, loaded.pairs[i - 1].dst),
              std::make_pair(loaded.pairs[i].src, loaded.pairs[i].dst));
  }
  Topology byHand = makeSample();
  std::reverse(byHand.pairs.begin(), byHand.pairs.end());
  for (int s = 0; s < 3; ++s) {
    for (int d = 0; d < 3; ++d) {
      if (s == d) {
        EXPECT_THROW(loaded.pair(s, d), Error);
        continue;
      }
      EXPECT_EQ(loaded.pair(s, d).src, s);
      EXPECT_EQ(loaded.pair(s, d).dst, d);
      expectSamePair(loaded.pair(s, d), byHand.pair(s, d));
    }
  }
  EXPECT_THROW(loaded.pair(0, 3), Error);
  EXPECT_THROW(loaded.pair(-1, 0), Error);
}

TEST(TopologyJsonErrors, MissingFile) {
  expectInvalid([] { loadTopologyFile("/nonexistent/missing.json"); },
                {"topology file /nonexistent/missing.json: cannot open: No such file or directory"});
}

TEST(TopologyJsonErrors, EmptyFile) {
  TempFile file("");
  expectInvalid([&] { loadTopologyFile(file.path()); }, {"topology file " + file.path() + ": ", "empty"});
  TempFile blank(" \n\t\n");
  expectInvalid([&] { loadTopologyFile(blank.path()); }, {blank.path(), "empty"});
}

TEST(TopologyJsonErrors, DirectoryIsNotAFile) {
  expectInvalid([] { loadTopologyFile(fs::temp_directory_path().string()); }, {fs::temp_directory_path().string()});
}

TEST(TopologyJsonErrors, NotJson) {
  expectInvalidText("{\n  \"schema\": \"peerlink.topology\",\n  \"version\": 1,,\n}",
                    {"topology file t.json: not JSON: parse error at line 3, column 16"});
  expectInvalidText("gpus: []", {"t.json: not JSON"});
  expectInvalidText("[1, 2]", {"t.json: expected a JSON object at the top level, got [1,2]"});
}

TEST(TopologyJsonErrors, WrongSchemaName) {
  Json j = sampleJson();
  j["schema"] = "nccl.topology";
  expectInvalidText(j.dump(), {"t.json: schema: expected \"peerlink.topology\", got \"nccl.topology\""});
}

TEST(TopologyJsonErrors, UnsupportedVersion) {
  Json j = sampleJson();
  j["version"] = 2;
  expectInvalidText(j.dump(), {"t.json: version: unsupported version 2"});
  j["version"] = "1";
  expectInvalidText(j.dump(), {"t.json: version: expected an integer, got \"1\""});
}

TEST(TopologyJsonErrors, MissingRequiredFields) {
  for (const char* key : {"schema", "version", "gpus", "pairs"}) {
    Json j = sampleJson();
    j.erase(key);
    expectInvalidText(j.dump(), {std::string("t.json: ") + key + ": required field is missing"});
  }
  for (const char* key : {"cuda_ordinal", "uuid", "pci_bus_id", "name"}) {
    Json j = sampleJson();
    j["gpus"][1].erase(key);
    expectInvalidText(j.dump(), {std::string("t.json: gpus[1].") + key + ": required field is missing"});
  }
  for (const char* key : {"src", "dst"}) {
    Json j = sampleJson();
    j["pairs"][4].erase(key);
    expectInvalidText(j.dump(), {std::string("t.json: pairs[4].") + key + ": required field is missing"});
  }
}

TEST(TopologyJsonErrors, WrongTypesNameTheField) {
  struct Case {
    Json::json_pointer pointer;
    Json value;
    std::string message;
  };
  const Case cases[] = {
      {Json::json_pointer("/gpus/2/sm_count"), "abc", "t.json: gpus[2].sm_count: expected an integer, got \"abc\""},
      {Json::json_pointer("/gpus/2/sm_count"), 132.5, "gpus[2].sm_count: expected an integer, got 132.5"},
      {Json::json_pointer("/gpus/0/sm_count"), 4294967296LL, "gpus[0].sm_count: 4294967296 is out of range"},
      {Json::json_pointer("/gpus/0/numa_node"), -4294967296LL, "gpus[0].numa_node: -4294967296 is out of range"},
      {Json::json_pointer("/gpus/0/memory_bytes"), -1, "gpus[0].memory_bytes: expected a non-negative integer, got -1"},
      {Json::json_pointer("/gpus/0/uuid"), 7, "gpus[0].uuid: expected a string, got 7"},
      {Json::json_pointer("/gpus/1/pcie/gen"), "5", "gpus[1].pcie.gen: expected an integer, got \"5\""},
      {Json::json_pointer("/gpus/1/pcie"), Json::array(), "gpus[1].pcie: expected an object, got []"},
      {Json::json_pointer("/gpus/1/nvlink/link_rate_gbps"), "fast", "gpus[1].nvlink.link_rate_gbps: expected a number"},
      {Json::json_pointer("/gpus/0/pci_path/1"), 7, "gpus[0].pci_path[1]: expected a string, got 7"},
      {Json::json_pointer("/gpus/0/pci_path"), "pci0000:00", "gpus[0].pci_path: expected an array"},
      {Json::json_pointer("/gpus/0/compute_capability"), 9.0, "gpus[0].compute_capability: expected a string"},
      {Json::json_pointer("/gpus/0/compute_capability"), "9", "gpus[0].compute_capability: expected \"major.minor\""},
      {Json::json_pointer("/gpus/0/compute_capability"), "9.x", "gpus[0].compute_capability: expected \"major.minor\""},
      {Json::json_pointer("/gpus/0/compute_capability"), "9.0 ",
       "gpus[0].compute_capability: expected \"major.minor\""},
      {Json::json_pointer("/gpus/0/compute_capability"), "-9.0",
       "gpus[0].compute_capability: expected \"major.minor\""},
      {Json::json_pointer("/gpus"), Json::object(), "t.json: gpus: expected an array, got {}"},
      {Json::json_pointer("/gpus/1"), "GPU-x", "t.json: gpus[1]: expected an object, got \"GPU-x\""},
      {Json::json_pointer("/pairs/3/p2p/native_atomics"), 1, "pairs[3].p2p.native_atomics: expected true or false"},
      {Json::json_pointer("/pairs/3/can_access_peer"), "yes", "pairs[3].can_access_peer: expected true or false"},
      {Json::json_pointer("/pairs/0/expected_gbps"), nullptr, "pairs[0].expected_gbps: expected a number, got null"},
      {Json::json_pointer("/cuda_visible_devices"), 5, "t.json: cuda_visible_devices: expected a string or null"},
      {Json::json_pointer("/notes"), "a note", "t.json: notes: expected an array"},
      {Json::json_pointer("/notes/1"), false, "t.json: notes[1]: expected a string, got false"},
      {Json::json_pointer("/nvml_gpus/0/index"), "0", "t.json: nvml_gpus[0].index: expected an integer"},
      {Json::json_pointer("/source"), 3, "t.json: source: expected a string, got 3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer.to_string());
    Json j = sampleJson();
    j[c.pointer] = c.value;
    expectInvalidText(j.dump(), {c.message});
  }
}

TEST(TopologyJsonErrors, LongValuesAreShortenedInMessages) {
  Json j = sampleJson();
  j["gpus"][0]["sm_count"] = std::string(500, 'x');
  try {
    topologyFromJson(j.dump(), "t.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 120u) << e.what();
  }
}

TEST(TopologyJsonErrors, UnknownPathClass) {
  Json j = sampleJson();
  j["pairs"][2]["path"] = "NV18";
  expectInvalidText(j.dump(), {"t.json: pairs[2].path: unknown path class \"NV18\""});
}

// Indices are checked against the GPUs they index while reading, naming the field.
TEST(TopologyJsonErrors, PairIndexOutOfRange) {
  Json j = sampleJson();
  j["pairs"][5]["dst"] = 9;
  expectInvalidText(j.dump(), {"t.json: pairs[5].dst: 9 is out of range (0..2)"});
  j["pairs"][5]["dst"] = -1;
  expectInvalidText(j.dump(), {"t.json: pairs[5].dst: -1 is out of range (0..2)"});
  j["pairs"][5]["dst"] = 2147483648LL;
  expectInvalidText(j.dump(), {"t.json: pairs[5].dst: 2147483648 is out of range (0..2)"});
}

// Values no hardware has are rejected, naming the field, instead of being shown or computed with.
TEST(TopologyJsonErrors, ImpossibleValuesNameTheField) {
  struct Case {
    Json::json_pointer pointer;
    Json value;
    std::string message;
  };
  const Case cases[] = {
      {Json::json_pointer("/gpus/1/sm_count"), -132, "gpus[1].sm_count: -132 is out of range (0..65536)"},
      {Json::json_pointer("/gpus/2/pcie/gen"), -5, "gpus[2].pcie.gen: -5 is out of range (0..16)"},
      {Json::json_pointer("/gpus/2/pcie/width"), 1024, "gpus[2].pcie.width: 1024 is out of range (0..64)"},
      {Json::json_pointer("/gpus/0/nvlink/active_links"), -1, "gpus[0].nvlink.active_links: -1 is out of range"},
      {Json::json_pointer("/gpus/0/nvlink/link_rate_gbps"), -26.5, "gpus[0].nvlink.link_rate_gbps: -26.5 is out of"},
      {Json::json_pointer("/gpus/0/numa_node"), -2, "gpus[0].numa_node: -2 is out of range (-1..65535)"},
      {Json::json_pointer("/gpus/0/mig_mode"), 2, "gpus[0].mig_mode: 2 is out of range (-1..1)"},
      {Json::json_pointer("/gpus/0/cuda_ordinal"), -1, "gpus[0].cuda_ordinal: -1 is out of range"},
      {Json::json_pointer("/gpus/0/compute_capability"), "999.0", "expected \"major.minor\""},
      {Json::json_pointer("/pairs/3/src"), 1.5, "pairs[3].src: expected an integer, got 1.5"},
      {Json::json_pointer("/pairs/3/nvlinks"), -18, "pairs[3].nvlinks: -18 is out of range (0..256)"},
      {Json::json_pointer("/pairs/3/expected_gbps"), -1.0, "pairs[3].expected_gbps: -1.0 is out of range"},
      {Json::json_pointer("/pairs/3/p2p/performance_rank"), -7, "pairs[3].p2p.performance_rank: -7 is out of range"},
      {Json::json_pointer("/cuda_driver_version"), -1, "cuda_driver_version: -1 is out of range"},
      {Json::json_pointer("/gpus/0/name"), "H200\u001b[2J", "gpus[0].name: \"H200\\x1b[2J\" has a control character"},
      {Json::json_pointer("/gpus/0/pci_path/0"), "pci\u0007", "gpus[0].pci_path[0]: \"pci\\x07\" has a control"},
      {Json::json_pointer("/gpus"), Json::array(), "t.json: gpus: no GPUs (a topology has at least one)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer.to_string());
    Json j = sampleJson();
    j[c.pointer] = c.value;
    if (c.pointer.to_string() == "/gpus") j["pairs"] = Json::array();
    expectInvalidText(j.dump(), {c.message});
  }
}

// A note from discovery is free text: its control characters are shown, not rejected.
TEST(TopologyJson, NotesAreMadePrintable) {
  Json j = sampleJson();
  j["notes"] = Json::array({"line one\nline two"});
  const Topology t = topologyFromJson(j.dump(), "t.json");
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "line one\\x0aline two");
}

// 70,000 nested brackets overflowed the stack in the message's quote of the value; a number out of range
// was an internal error. Both are input errors now, with short messages.
TEST(TopologyJsonErrors, DeepNestingAndHugeNumbersAreInputErrors) {
  expectInvalidText(std::string(70000, '[') + std::string(70000, ']'), {"t.json: not JSON", "nested more than 64"});
  Json j = sampleJson();
  std::string text = j.dump();
  text.replace(text.find("\"sm_count\":130"), 14, "\"sm_count\":1e999");
  expectInvalidText(text, {"t.json: not JSON: number overflow parsing '1e999'"});
  j["gpus"][0]["notes"] = Json::parse(std::string(60, '[') + std::string(60, ']'));
  EXPECT_NO_THROW(topologyFromJson(j.dump(), "t.json"));  // unknown keys, nested within the bound, are ignored
}

TEST(TopologyJsonErrors, PairDuplicatedOrMissing) {
  Json j = sampleJson();
  j["pairs"][1] = j["pairs"][0];
  expectInvalidText(j.dump(), {"t.json", "pair 0 -> 1 appears twice"});
  j = sampleJson();
  j["pairs"].erase(3);
  expectInvalidText(j.dump(), {"t.json", "5 pairs for 3 GPUs"});
  j = sampleJson();
  j["pairs"][0]["dst"] = 0;
  expectInvalidText(j.dump(), {"t.json", "pair 0 -> 0"});
}

TEST(TopologyJsonErrors, DuplicateUuidAndBusId) {
  Json j = sampleJson();
  j["gpus"][2]["uuid"] = j["gpus"][0]["uuid"];
  expectInvalidText(j.dump(), {"t.json", "uuid GPU-00000000-aaaa-bbbb-cccc-dddddddddddd appears twice"});
  j = sampleJson();
  j["gpus"][1]["pci_bus_id"] = "0000:01:00.0";
  expectInvalidText(j.dump(), {"t.json", "pci_bus_id 0000:01:00.0 appears twice"});
}

TEST(TopologyJsonErrors, CudaOrdinalMustBeTheIndex) {
  Json j = sampleJson();
  j["gpus"][1]["cuda_ordinal"] = 2;
  expectInvalidText(j.dump(), {"t.json", "gpus[1]", "cuda_ordinal 2"});
}

}  // namespace
}  // namespace peerlink
