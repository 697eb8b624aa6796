// Topology <-> JSON (schema "peerlink.topology", version 1; docs/topology-format.md).
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {
namespace {

using Json = nlohmann::json;
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

// ---- reading ---------------------------------------------------------------------------------------

// A JSON value with where it sits in the document ("gpus[2].pcie.gen"), so every error names the
// origin, the location and the problem in one line.
class Node {
 public:
  Node(const Json& value, std::string where, const std::string& origin)
      : value_(value), where_(std::move(where)), origin_(origin) {}

  const Json& value() const { return value_; }

  [[noreturn]] void fail(const std::string& problem) const {
    if (where_.empty()) throw Error(ErrorCode::InvalidInput, fmt::format("topology file {}: {}", origin_, problem));
    throw Error(ErrorCode::InvalidInput, fmt::format("topology file {}: {}: {}", origin_, where_, problem));
  }

  [[noreturn]] void failType(const char* expected) const {
    std::string got = value_.dump();
    if (got.size() > 40) got = got.substr(0, 37) + "...";
    fail(fmt::format("expected {}, got {}", expected, got));
  }

  void expectObject() const {
    if (!value_.is_object()) failType("an object");
  }

  void expectArray() const {
    if (!value_.is_array()) failType("an array");
  }

  /// The member `key` of this object; nullopt when absent.
  std::optional<Node> member(const char* key) const {
    auto it = value_.find(key);
    if (it == value_.end()) return std::nullopt;
    return Node(*it, memberWhere(key), origin_);
  }

  Node required(const char* key) const {
    std::optional<Node> node = member(key);
    if (!node) Node(value_, memberWhere(key), origin_).fail("required field is missing");
    return *node;
  }

  Node element(size_t index) const { return Node(value_[index], fmt::format("{}[{}]", where_, index), origin_); }

 private:
  std::string memberWhere(const char* key) const { return where_.empty() ? key : fmt::format("{}.{}", where_, key); }

  const Json& value_;
  std::string where_;
  const std::string& origin_;
};

void convert(const Node& node, int& out) {
  const Json& v = node.value();
  if (!v.is_number_integer()) node.failType("an integer");
  constexpr auto kMin = std::numeric_limits<int>::min();
  constexpr auto kMax = std::numeric_limits<int>::max();
  const bool fits = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax)
                                           : v.get<std::int64_t>() >= kMin && v.get<std::int64_t>() <= kMax;
  if (!fits) node.fail(fmt::format("{} is out of range ({}..{})", v.dump(), kMin, kMax));
  out = v.get<int>();
}

void convert(const Node& node, std::uint64_t& out) {
  const Json& v = node.value();
  if (!v.is_number_unsigned()) node.failType("a non-negative integer");
  out = v.get<std::uint64_t>();
}

void convert(const Node& node, bool& out) {
  if (!node.value().is_boolean()) node.failType("true or false");
  out = node.value().get<bool>();
}

void convert(const Node& node, double& out) {
  if (!node.value().is_number()) node.failType("a number");
  out = node.value().get<double>();
}

void convert(const Node& node, std::string& out) {
  if (!node.value().is_string()) node.failType("a string");
  out = node.value().get<std::string>();
}

void convert(const Node& node, std::optional<std::string>& out) {
  if (node.value().is_null()) {
    out.reset();
    return;
  }
  if (!node.value().is_string()) node.failType("a string or null");
  out = node.value().get<std::string>();
}

void convert(const Node& node, std::vector<std::string>& out) {
  node.expectArray();
  out.assign(node.value().size(), std::string());
  for (size_t i = 0; i < out.size(); ++i) convert(node.element(i), out[i]);
}

void convert(const Node& node, PathClass& out) {
  std::string name;
  convert(node, name);
  std::optional<PathClass> path = parsePathClass(name);
  if (!path) node.fail(fmt::format("unknown path class \"{}\" (one of LOC, NVL, NVB, PIX, PXB, PHB, NODE, SYS)", name));
  out = *path;
}

// "major.minor", each a small decimal number.
void convertComputeCapability(const Node& node, Gpu& gpu) {
  std::string text;
  convert(node, text);
  int major = 0;
  int minor = 0;
  char dot = 0;
  std::istringstream in(text);
  in >> std::noskipws >> major >> dot >> minor;
  bool digitsOnly = !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos;
  if (!digitsOnly || !in || dot != '.' || in.peek() != std::char_traits<char>::eof()) {
    node.fail(fmt::format("expected \"major.minor\" such as \"9.0\", got \"{}\"", text));
  }
  gpu.ccMajor = major;
  gpu.ccMinor = minor;
}

template <typename T>
void readRequired(const Node& object, const char* key, T& out) {
  convert(object.required(key), out);
}

template <typename T>
void readOptional(const Node& object, const char* key, T& out) {
  if (std::optional<Node> node = object.member(key)) convert(*node, out);
}

void readPcie(const Node& node, PcieLink& pcie) {
  node.expectObject();
  readOptional(node, "gen", pcie.gen);
  readOptional(node, "width", pcie.width);
  readOptional(node, "max_gen", pcie.maxGen);
  readOptional(node, "max_width", pcie.maxWidth);
}

void readHandles(const Node& node, MemoryHandles& handles) {
  node.expectObject();
  readOptional(node, "vmm", handles.vmm);
  readOptional(node, "posix_fd", handles.posixFd);
  readOptional(node, "fabric", handles.fabric);
}

void readNvlink(const Node& node, NvlinkInfo& nvlink) {
  node.expectObject();
  readOptional(node, "version", nvlink.version);
  readOptional(node, "active_links", nvlink.activeLinks);
  readOptional(node, "switch_links", nvlink.switchLinks);
  readOptional(node, "link_rate_gbps", nvlink.linkRateGBps);
}

Gpu readGpu(const Node& node) {
  node.expectObject();
  Gpu gpu;
  readRequired(node, "cuda_ordinal", gpu.cudaOrdinal);
  readOptional(node, "nvml_index", gpu.nvmlIndex);
  readRequired(node, "uuid", gpu.uuid);
  readRequired(node, "pci_bus_id", gpu.pciBusId);
  readRequired(node, "name", gpu.name);
  if (std::optional<Node> cc = node.member("compute_capability")) convertComputeCapability(*cc, gpu);
  readOptional(node, "sm_count", gpu.smCount);
  readOptional(node, "memory_bytes", gpu.memoryBytes);
  readOptional(node, "numa_node", gpu.numaNode);
  readOptional(node, "mig_mode", gpu.migMode);
  readOptional(node, "bar1_bytes", gpu.bar1Bytes);
  readOptional(node, "cpu_affinity", gpu.cpuAffinity);
  if (std::optional<Node> pcie = node.member("pcie")) readPcie(*pcie, gpu.pcie);
  if (std::optional<Node> nvlink = node.member("nvlink")) readNvlink(*nvlink, gpu.nvlink);
  if (std::optional<Node> handles = node.member("memory_handles")) readHandles(*handles, gpu.handles);
  readOptional(node, "pci_path", gpu.pciPath);
  return gpu;
}

NvmlGpu readNvmlGpu(const Node& node) {
  node.expectObject();
  NvmlGpu gpu;
  readOptional(node, "index", gpu.index);
  readOptional(node, "uuid", gpu.uuid);
  readOptional(node, "pci_bus_id", gpu.pciBusId);
  return gpu;
}

void readP2p(const Node& node, P2pAttributes& p2p) {
  node.expectObject();
  readOptional(node, "access_supported", p2p.accessSupported);
  readOptional(node, "native_atomics", p2p.nativeAtomics);
  readOptional(node, "cuda_array_access", p2p.cudaArrayAccess);
  readOptional(node, "performance_rank", p2p.performanceRank);
}

GpuPair readPair(const Node& node) {
  node.expectObject();
  GpuPair pair;
  readRequired(node, "src", pair.src);
  readRequired(node, "dst", pair.dst);
  readOptional(node, "can_access_peer", pair.canAccessPeer);
  if (std::optional<Node> p2p = node.member("p2p")) readP2p(*p2p, pair.p2p);
  readOptional(node, "nvlinks", pair.nvlinks);
  readOptional(node, "via_nvswitch", pair.viaNvswitch);
  readOptional(node, "path", pair.path);
  readOptional(node, "expected_gbps", pair.expectedGBps);
  readOptional(node, "bandwidth_basis", pair.bandwidthBasis);
  return pair;
}

template <typename T, typename ReadOne>
std::vector<T> readArray(const Node& node, ReadOne readOne) {
  node.expectArray();
  std::vector<T> items;
  items.reserve(node.value().size());
  for (size_t i = 0; i < node.value().size(); ++i) items.push_back(readOne(node.element(i)));
  return items;
}

Topology readTopology(const Node& root) {
  if (!root.value().is_object()) root.failType("a JSON object at the top level");
  std::string schema;
  readRequired(root, "schema", schema);
  if (schema != kSchemaName) {
    root.required("schema").fail(fmt::format("expected \"{}\", got \"{}\"", kSchemaName, schema));
  }
  Topology topology;
  readRequired(root, "version", topology.schemaVersion);
  if (topology.schemaVersion != kSchemaVersion) {
    root.required("version").fail(
        fmt::format("unsupported version {} (this peerlink reads version {})", topology.schemaVersion, kSchemaVersion));
  }
  // The recorded "source" is checked for its type only: a loaded topology's source is where it came from.
  std::string recordedSource;
  readOptional(root, "source", recordedSource);
  readOptional(root, "host", topology.host);
  readOptional(root, "driver_version", topology.driverVersion);
  readOptional(root, "cuda_driver_version", topology.cudaDriverVersion);
  readOptional(root, "cuda_runtime_version", topology.cudaRuntimeVersion);
  readOptional(root, "cuda_visible_devices", topology.cudaVisibleDevices);
  readOptional(root, "cuda_device_order", topology.cudaDeviceOrder);
  topology.gpus = readArray<Gpu>(root.required("gpus"), readGpu);
  if (std::optional<Node> nvml = root.member("nvml_gpus")) topology.nvmlGpus = readArray<NvmlGpu>(*nvml, readNvmlGpu);
  topology.pairs = readArray<GpuPair>(root.required("pairs"), readPair);
  readOptional(root, "notes", topology.notes);
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
  return j.dump(2) + "\n";
}

Topology topologyFromJson(const std::string& text, const std::string& origin) {
  auto fail = [&](const std::string& problem) {
    throw Error(ErrorCode::InvalidInput, fmt::format("topology file {}: {}", origin, problem));
  };
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) fail("empty (expected a JSON object)");
  Json document;
  try {
    document = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ..."; drop the tag.
    std::string what = e.what();
    size_t tagEnd = what.find("] ");
    fail("not JSON: " + (tagEnd == std::string::npos ? what : what.substr(tagEnd + 2)));
  }
  Topology topology = readTopology(Node(document, "", origin));
  topology.source = origin;
  validateTopology(topology);
  return topology;
}

Topology loadTopologyFile(const std::string& path) {
  auto fail = [&](const char* what, int error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("topology file {}: {}: {}", path, what, std::strerror(error)));
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open", errno);
  // A directory opens as a stream but reads as nothing.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) fail("cannot read", EISDIR);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("cannot read", errno);
  return topologyFromJson(text.str(), path);
}

}  // namespace peerlink
