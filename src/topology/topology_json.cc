// Topology <-> JSON (schema "peerlink.topology", version 1; docs/topology-format.md).
#include "topology/topology_json.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/input_file.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr const char* kSchemaName = "peerlink.topology";
constexpr int kSchemaVersion = 1;

// ---- writing ---------------------------------------------------------------------------------------

OrderedJson optionalString(const std::optional<std::string>& value) {
  return value ? OrderedJson(*value) : OrderedJson(nullptr);
}

OrderedJson gpuToJson(const Gpu& gpu) {
  OrderedJson j;
  j["cuda_ordinal"] = gpu.cudaOrdinal;
  j["nvml_index"] = gpu.nvmlIndex;
  j["uuid"] = gpu.uuid;
  j["pci_bus_id"] = gpu.pciBusId;
  j["name"] = gpu.name;
  j["compute_capability"] = fmt::format("{}.{}", gpu.ccMajor, gpu.ccMinor);
  j["sm_count"] = gpu.smCount;
  j["memory_bytes"] = gpu.memoryBytes;
  j["numa_node"] = gpu.numaNode;
  j["mig_mode"] = gpu.migMode;
  j["bar1_bytes"] = gpu.bar1Bytes;
  j["cpu_affinity"] = gpu.cpuAffinity;
  j["pcie"] = OrderedJson{
      {"gen", gpu.pcie.gen}, {"width", gpu.pcie.width}, {"max_gen", gpu.pcie.maxGen}, {"max_width", gpu.pcie.maxWidth}};
  j["nvlink"] = OrderedJson{{"version", gpu.nvlink.version},
                            {"active_links", gpu.nvlink.activeLinks},
                            {"switch_links", gpu.nvlink.switchLinks},
                            {"link_rate_gbps", gpu.nvlink.linkRateGBps}};
  j["memory_handles"] =
      OrderedJson{{"vmm", gpu.handles.vmm}, {"posix_fd", gpu.handles.posixFd}, {"fabric", gpu.handles.fabric}};
  j["pci_path"] = gpu.pciPath;
  if (gpu.failed.any()) {  // written only when a reading failed, so topologies of healthy machines stay as they were
    OrderedJson failed = OrderedJson::object();
    for (const auto& [key, why] : {std::pair<const char*, const std::string&>{"nvlink", gpu.failed.nvlink},
                                   {"numa", gpu.failed.numa},
                                   {"pcie_link", gpu.failed.pcieLink},
                                   {"pci_path", gpu.failed.pciPath}}) {
      if (!why.empty()) failed[key] = why;
    }
    j["failed_readings"] = failed;
  }
  return j;
}

OrderedJson pairToJson(const GpuPair& pair) {
  OrderedJson j;
  j["src"] = pair.src;
  j["dst"] = pair.dst;
  j["can_access_peer"] = pair.canAccessPeer;
  j["p2p"] = OrderedJson{{"access_supported", pair.p2p.accessSupported},
                         {"native_atomics", pair.p2p.nativeAtomics},
                         {"cuda_array_access", pair.p2p.cudaArrayAccess},
                         {"performance_rank", pair.p2p.performanceRank}};
  j["nvlinks"] = pair.nvlinks;
  j["via_nvswitch"] = pair.viaNvswitch;
  j["path"] = pathClassName(pair.path);
  j["expected_gbps"] = pair.expectedGBps;
  j["bandwidth_basis"] = pair.bandwidthBasis;
  return j;
}

// ---- reading ----------------------------------------------------------------------------------------

// What a field may hold. Counts and indices are bounded by what they index or by the hardware with room to
// spare; a value outside is an error naming the field, never truncated, wrapped or used as an index.
constexpr int kMaxGeneration = 16;  // PCIe and NVLink generations
constexpr int kMaxPcieWidth = 64;
constexpr int kMaxNvlinks = 256;
constexpr int kMaxSmCount = 65536;
constexpr int kMaxNumaNode = 65535;
constexpr int kMaxNvmlIndex = 4095;
constexpr double kMaxGBps = 1e6;
constexpr std::size_t kMaxPciPathLength = 64;
constexpr std::size_t kMaxNotes = 4096;

void read(const JsonNode& node, bool& out) {
  out = node.boolean();
}

void read(const JsonNode& node, std::string& out) {
  out = node.name();
}

void read(const JsonNode& node, std::optional<std::string>& out) {
  if (node.isNull()) {
    out.reset();
  } else if (!node.value().is_string()) {
    node.failType("a string or null");
  } else {
    out = node.name();
  }
}

// An optional member read by `readOne` when present.
template <typename ReadOne>
void ifPresent(const JsonNode& object, const char* key, ReadOne readOne) {
  if (std::optional<JsonNode> node = object.member(key)) readOne(*node);
}

template <typename T>
void readOptional(const JsonNode& object, const char* key, T& out) {
  ifPresent(object, key, [&](const JsonNode& node) { read(node, out); });
}

void readInt(const JsonNode& object, const char* key, int& out, int min, int max) {
  ifPresent(object, key, [&](const JsonNode& node) { out = node.smallInteger(min, max); });
}

void readPathClass(const JsonNode& node, PathClass& out) {
  const std::string name = node.name();
  std::optional<PathClass> path = parsePathClass(name);
  if (!path) {
    node.fail(fmt::format("unknown path class {} (one of LOC, NVL, NVB, PIX, PXB, PHB, NODE, SYS)",
                          jsonExcerpt(node.value())));
  }
  out = *path;
}

// "major.minor", each a small decimal number.
void readComputeCapability(const JsonNode& node, Gpu& gpu) {
  const std::string text = node.name();
  const std::size_t dot = text.find('.');
  auto digits = [](const std::string& part) {
    return !part.empty() && part.size() <= 2 && part.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(text.substr(0, dot)) || !digits(text.substr(dot + 1))) {
    node.fail(fmt::format("expected \"major.minor\" such as \"9.0\", got {}", jsonExcerpt(node.value())));
  }
  gpu.ccMajor = std::stoi(text.substr(0, dot));
  gpu.ccMinor = std::stoi(text.substr(dot + 1));
}

void readPcie(const JsonNode& node, PcieLink& pcie) {
  node.expectObject();
  readInt(node, "gen", pcie.gen, 0, kMaxGeneration);
  readInt(node, "width", pcie.width, 0, kMaxPcieWidth);
  readInt(node, "max_gen", pcie.maxGen, 0, kMaxGeneration);
  readInt(node, "max_width", pcie.maxWidth, 0, kMaxPcieWidth);
}

void readHandles(const JsonNode& node, MemoryHandles& handles) {
  node.expectObject();
  readOptional(node, "vmm", handles.vmm);
  readOptional(node, "posix_fd", handles.posixFd);
  readOptional(node, "fabric", handles.fabric);
}

void readNvlink(const JsonNode& node, NvlinkInfo& nvlink) {
  node.expectObject();
  readInt(node, "version", nvlink.version, 0, kMaxGeneration);
  readInt(node, "active_links", nvlink.activeLinks, 0, kMaxNvlinks);
  readInt(node, "switch_links", nvlink.switchLinks, 0, kMaxNvlinks);
  ifPresent(node, "link_rate_gbps", [&](const JsonNode& n) { nvlink.linkRateGBps = n.number(0, kMaxGBps); });
}

void readFailedReadings(const JsonNode& node, FailedReadings& failed) {
  node.expectObject();
  readOptional(node, "nvlink", failed.nvlink);
  readOptional(node, "numa", failed.numa);
  readOptional(node, "pcie_link", failed.pcieLink);
  readOptional(node, "pci_path", failed.pciPath);
}

void readStrings(const JsonNode& node, std::vector<std::string>& out, std::size_t maxElements) {
  out.clear();
  for (const JsonNode& element : node.elements(maxElements)) out.push_back(element.name());
}

Gpu readGpu(const JsonNode& node) {
  node.expectObject();
  Gpu gpu;
  gpu.cudaOrdinal = node.required("cuda_ordinal").smallInteger(0, kMaxTopologyGpus - 1);
  readInt(node, "nvml_index", gpu.nvmlIndex, -1, kMaxNvmlIndex);
  read(node.required("uuid"), gpu.uuid);
  read(node.required("pci_bus_id"), gpu.pciBusId);
  read(node.required("name"), gpu.name);
  ifPresent(node, "compute_capability", [&](const JsonNode& cc) { readComputeCapability(cc, gpu); });
  readInt(node, "sm_count", gpu.smCount, 0, kMaxSmCount);
  ifPresent(node, "memory_bytes", [&](const JsonNode& n) { gpu.memoryBytes = n.unsignedInteger(); });
  readInt(node, "numa_node", gpu.numaNode, -1, kMaxNumaNode);
  readInt(node, "mig_mode", gpu.migMode, -1, 1);
  ifPresent(node, "bar1_bytes", [&](const JsonNode& n) { gpu.bar1Bytes = n.unsignedInteger(); });
  readOptional(node, "cpu_affinity", gpu.cpuAffinity);
  ifPresent(node, "pcie", [&](const JsonNode& n) { readPcie(n, gpu.pcie); });
  ifPresent(node, "nvlink", [&](const JsonNode& n) { readNvlink(n, gpu.nvlink); });
  ifPresent(node, "memory_handles", [&](const JsonNode& n) { readHandles(n, gpu.handles); });
  ifPresent(node, "pci_path", [&](const JsonNode& n) { readStrings(n, gpu.pciPath, kMaxPciPathLength); });
  ifPresent(node, "failed_readings", [&](const JsonNode& n) { readFailedReadings(n, gpu.failed); });
  return gpu;
}

NvmlGpu readNvmlGpu(const JsonNode& node) {
  node.expectObject();
  NvmlGpu gpu;
  readInt(node, "index", gpu.index, -1, kMaxNvmlIndex);
  readOptional(node, "uuid", gpu.uuid);
  readOptional(node, "pci_bus_id", gpu.pciBusId);
  return gpu;
}

void readP2p(const JsonNode& node, P2pAttributes& p2p) {
  node.expectObject();
  readOptional(node, "access_supported", p2p.accessSupported);
  readOptional(node, "native_atomics", p2p.nativeAtomics);
  readOptional(node, "cuda_array_access", p2p.cudaArrayAccess);
  readInt(node, "performance_rank", p2p.performanceRank, -1, 1 << 16);
}

GpuPair readPair(const JsonNode& node, int gpus) {
  node.expectObject();
  GpuPair pair;
  pair.src = node.required("src").smallInteger(0, gpus - 1);
  pair.dst = node.required("dst").smallInteger(0, gpus - 1);
  readOptional(node, "can_access_peer", pair.canAccessPeer);
  ifPresent(node, "p2p", [&](const JsonNode& n) { readP2p(n, pair.p2p); });
  readInt(node, "nvlinks", pair.nvlinks, 0, kMaxNvlinks);
  readOptional(node, "via_nvswitch", pair.viaNvswitch);
  ifPresent(node, "path", [&](const JsonNode& n) { readPathClass(n, pair.path); });
  ifPresent(node, "expected_gbps", [&](const JsonNode& n) { pair.expectedGBps = n.number(0, kMaxGBps); });
  readOptional(node, "bandwidth_basis", pair.bandwidthBasis);
  return pair;
}

Topology readTopology(const JsonNode& root) {
  if (!root.value().is_object()) root.failType("a JSON object at the top level");
  const JsonNode schemaNode = root.required("schema");
  if (schemaNode.name() != kSchemaName) {
    schemaNode.fail(fmt::format("expected \"{}\", got {}", kSchemaName, jsonExcerpt(schemaNode.value())));
  }
  Topology topology;
  const JsonNode versionNode = root.required("version");
  topology.schemaVersion = versionNode.smallInteger(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  if (topology.schemaVersion != kSchemaVersion) {
    versionNode.fail(
        fmt::format("unsupported version {} (this peerlink reads version {})", topology.schemaVersion, kSchemaVersion));
  }
  // The recorded "source" is checked for its type only: a loaded topology's source is where it came from.
  std::string recordedSource;
  readOptional(root, "source", recordedSource);
  readOptional(root, "host", topology.host);
  readOptional(root, "driver_version", topology.driverVersion);
  readInt(root, "cuda_driver_version", topology.cudaDriverVersion, 0, std::numeric_limits<int>::max());
  readInt(root, "cuda_runtime_version", topology.cudaRuntimeVersion, 0, std::numeric_limits<int>::max());
  readOptional(root, "cuda_visible_devices", topology.cudaVisibleDevices);
  readOptional(root, "cuda_device_order", topology.cudaDeviceOrder);
  const JsonNode gpus = root.required("gpus");
  for (const JsonNode& gpu : gpus.elements(kMaxTopologyGpus)) topology.gpus.push_back(readGpu(gpu));
  if (topology.gpus.empty()) gpus.fail("no GPUs (a topology has at least one)");
  ifPresent(root, "nvml_gpus", [&](const JsonNode& list) {
    for (const JsonNode& gpu : list.elements(kMaxTopologyGpus)) topology.nvmlGpus.push_back(readNvmlGpu(gpu));
  });
  const auto n = static_cast<int>(topology.gpus.size());
  const std::size_t orderedPairs = static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1);
  for (const JsonNode& pair : root.required("pairs").elements(orderedPairs)) {
    topology.pairs.push_back(readPair(pair, n));
  }
  ifPresent(root, "notes", [&](const JsonNode& list) {
    for (const JsonNode& note : list.elements(kMaxNotes)) topology.notes.push_back(note.text());
  });
  return topology;
}

}  // namespace

std::string topologyToJson(const Topology& topology) {
  OrderedJson j;
  j["schema"] = kSchemaName;
  j["version"] = topology.schemaVersion;
  j["source"] = topology.source;
  j["host"] = topology.host;
  j["driver_version"] = topology.driverVersion;
  j["cuda_driver_version"] = topology.cudaDriverVersion;
  j["cuda_runtime_version"] = topology.cudaRuntimeVersion;
  j["cuda_visible_devices"] = optionalString(topology.cudaVisibleDevices);
  j["cuda_device_order"] = optionalString(topology.cudaDeviceOrder);
  j["gpus"] = OrderedJson::array();
  for (const Gpu& gpu : topology.gpus) j["gpus"].push_back(gpuToJson(gpu));
  j["nvml_gpus"] = OrderedJson::array();
  for (const NvmlGpu& gpu : topology.nvmlGpus) {
    j["nvml_gpus"].push_back(OrderedJson{{"index", gpu.index}, {"uuid", gpu.uuid}, {"pci_bus_id", gpu.pciBusId}});
  }
  j["pairs"] = OrderedJson::array();
  for (const GpuPair& pair : topology.pairs) j["pairs"].push_back(pairToJson(pair));
  j["notes"] = topology.notes;
  return jsonText(j) + "\n";
}

Topology topologyFromJsonNode(const JsonNode& root, const std::string& source) {
  Topology topology = readTopology(root);
  topology.source = source;
  validateTopology(topology);
  // Every ordered pair once, in (src, dst) order: Topology::pair finds each by its index.
  std::sort(topology.pairs.begin(), topology.pairs.end(),
            [](const GpuPair& a, const GpuPair& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
  return topology;
}

Topology topologyFromJson(const std::string& text, const std::string& origin) {
  const std::string named = "topology file " + printable(origin);
  const nlohmann::json document = parseJson(text, named);
  return topologyFromJsonNode(JsonNode(document, named), origin);
}

Topology loadTopologyFile(const std::string& path) {
  return topologyFromJson(readInputFile(path, "topology file", kMaxJsonInputBytes), path);
}

}  // namespace peerlink
