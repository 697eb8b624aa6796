// Discovery: CUDA (ordinals, properties, P2P attributes), NVML (NVLinks, driver, hidden GPUs; optional)
// and sysfs (PCI paths, NUMA, PCIe links) into one Topology. Everything decided from the result lives in
// pure functions elsewhere (path_class, link_model, ordering_warnings).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/log.hpp"
#include "core/nvml.hpp"
#include "core/process_limits.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "topology/link_model.hpp"
#include "topology/path_class.hpp"
#include "topology/sysfs_pci.hpp"

namespace peerlink {
namespace {

std::optional<std::string> environmentValue(const char* name) {
  // CUDA's own variables are read to report them, never as peerlink settings (those go through Params).
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string uuidString(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", b[0],
      b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

bool driverLibraryPresent() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

int cudaDeviceCount() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    // Without any driver the runtime says "insufficient driver", which misleads: say what is missing.
    if (status == cudaErrorInsufficientDriver && !driverLibraryPresent()) {
      throw Error(ErrorCode::NoDevice, "no CUDA GPU found: no NVIDIA driver on this machine (libcuda.so.1 not found)");
    }
    if (status == cudaErrorSystemNotReady) {
      // Error 802: on NVSwitch systems CUDA refuses to start until Fabric Manager has set up the fabric.
      throw Error(ErrorCode::NoDevice,
                  "no CUDA GPU usable: cudaGetDeviceCount returned cudaErrorSystemNotReady (802): the NVSwitch fabric "
                  "is not ready; start Fabric Manager (sudo systemctl start nvidia-fabricmanager; its version must "
                  "match the driver's exactly) and check `nvidia-smi -q | grep -A2 -i fabric`");
    }
    throw Error(ErrorCode::NoDevice, fmt::format("no CUDA GPU found: cudaGetDeviceCount returned {}{}",
                                                 cudaErrorText(status), processShortageNote()));
  }
  if (count == 0) throw Error(ErrorCode::NoDevice, "no CUDA GPU found: cudaGetDeviceCount returned 0 devices");
  return count;
}

Gpu describeCudaDevice(int ordinal) {
  cudaDeviceProp prop{};
  PEERLINK_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  char busId[32] = {};
  PEERLINK_CUDA_CHECK(cudaDeviceGetPCIBusId(busId, sizeof(busId), ordinal));
  Gpu gpu;
  gpu.cudaOrdinal = ordinal;
  gpu.uuid = uuidString(prop.uuid);
  gpu.pciBusId = normalizePciBusId(busId);
  gpu.name = prop.name;
  gpu.ccMajor = prop.major;
  gpu.ccMinor = prop.minor;
  gpu.smCount = prop.multiProcessorCount;
  gpu.memoryBytes = prop.totalGlobalMem;
  // The runtime enum has no names for these attributes; the driver's does.
  gpu.handles.vmm = driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, ordinal) != 0;
  gpu.handles.posixFd =
      driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, ordinal) != 0;
  gpu.handles.fabric = driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, ordinal) != 0;
  return gpu;
}

GpuPair describeCudaPair(int src, int dst) {
  GpuPair pair;
  pair.src = src;
  pair.dst = dst;
  int value = 0;
  PEERLINK_CUDA_CHECK(cudaDeviceCanAccessPeer(&value, src, dst));
  pair.canAccessPeer = value != 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, src, dst));
  pair.p2p.accessSupported = value != 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, src, dst));
  pair.p2p.nativeAtomics = value != 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrCudaArrayAccessSupported, src, dst));
  pair.p2p.cudaArrayAccess = value != 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, src, dst));
  pair.p2p.performanceRank = value;
  return pair;
}

// Every GPU's NVLink reading failed for one reason (NVML absent, skipped or failing as a whole).
void nvlinkUnreadable(Topology& topology, const std::string& why) {
  topology.notes.push_back(why + ": NVLink counts, driver version and hidden GPUs unknown");
  for (Gpu& gpu : topology.gpus) gpu.failed.nvlink = why;
}

// NVLink counts per pair: links whose far end is the other GPU, else (NVSwitch systems) the links both
// GPUs have into the switch fabric, of which a pair can use as many as the smaller side has.
void addNvml(Topology& topology, const Params& params) {
  if (!params.getBool("PEERLINK_NVML")) {
    nvlinkUnreadable(topology, "NVML skipped (PEERLINK_NVML=0)");
    return;
  }
  std::string whyNot;
  const Nvml* nvml = Nvml::process(&whyNot);
  if (!nvml) {
    nvlinkUnreadable(topology, whyNot);
    logInfo(LogSubsys::Topo, "{}", topology.notes.back());
    return;
  }
  // NVML that loaded can still fail as a whole (out of descriptors or memory): what it could not say is unknown,
  // and discovery goes on with CUDA's and sysfs's facts.
  std::vector<NvmlDeviceInfo> devices;
  try {
    topology.driverVersion = nvml->driverVersion();
    devices = nvml->devices();
  } catch (const Error& error) {
    nvlinkUnreadable(topology, error.what());
    return;
  }
  for (const std::string& problem : nvml->problems()) topology.notes.push_back("NVML: " + problem);
  std::map<std::string, int> gpuByBus;
  for (const Gpu& gpu : topology.gpus) gpuByBus[gpu.pciBusId] = gpu.cudaOrdinal;
  std::map<std::pair<int, int>, int> directLinks;
  std::vector<std::string> unidentified;  // NVML GPUs whose bus id NVML could not tell
  for (const NvmlDeviceInfo& device : devices) {
    topology.nvmlGpus.push_back({device.index, device.uuid, device.pciBusId});
    for (const std::string& problem : device.problems) topology.notes.push_back("NVML: " + problem);
    if (device.pciBusId.empty()) {
      unidentified.push_back(device.problems.empty() ? fmt::format("NVML GPU {} has no bus id", device.index)
                                                     : device.problems.front());
    }
    const auto self = gpuByBus.find(device.pciBusId);
    if (self == gpuByBus.end()) continue;  // hidden from this process
    Gpu& gpu = topology.gpus[static_cast<size_t>(self->second)];
    gpu.nvmlIndex = device.index;
    gpu.migMode = device.migMode;
    gpu.bar1Bytes = device.bar1Bytes;
    gpu.nvlink.linkRateGBps = device.linkRateGBps;
    gpu.failed.nvlink = device.linkFailure;
    for (const NvmlLink& link : device.links) {
      if (!link.active) continue;
      ++gpu.nvlink.activeLinks;
      gpu.nvlink.version = std::max(gpu.nvlink.version, link.version);
      if (link.remoteIsSwitch) {
        ++gpu.nvlink.switchLinks;
      } else if (const auto peer = gpuByBus.find(link.remoteBusId); peer != gpuByBus.end()) {
        ++directLinks[{self->second, peer->second}];
      }
    }
  }
  // A GPU of this process that NVML did not name: one of the GPUs NVML could not identify is it.
  for (Gpu& gpu : topology.gpus) {
    if (gpu.nvmlIndex < 0 && gpu.failed.nvlink.empty()) {
      gpu.failed.nvlink = unidentified.empty()
                              ? fmt::format("NVML does not list a GPU at {}", gpu.pciBusId)
                              : fmt::format("NVML could not identify every GPU ({})", fmt::join(unidentified, "; "));
    }
  }
  for (GpuPair& pair : topology.pairs) {
    const int direct = directLinks[{pair.src, pair.dst}];
    const int viaSwitch = std::min(topology.gpus[static_cast<size_t>(pair.src)].nvlink.switchLinks,
                                   topology.gpus[static_cast<size_t>(pair.dst)].nvlink.switchLinks);
    pair.nvlinks = direct > 0 ? direct : viaSwitch;
    pair.viaNvswitch = direct == 0 && viaSwitch > 0;
  }
}

// VMs often report numa_node -1 for every device. When the machine has exactly one NUMA node, that
// node is every GPU's (nvidia-smi shows it too), so it replaces the -1; a note keeps the raw fact.
void useTheOnlyNumaNode(Topology& topology, const std::string& root) {
  std::vector<int> nodes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/devices/system/node", error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.rfind("node", 0) == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos) {
      nodes.push_back(std::stoi(name.substr(4)));
    }
  }
  if (nodes.size() != 1) return;
  std::vector<int> unknown;
  for (Gpu& gpu : topology.gpus) {
    if (gpu.numaNode >= 0) continue;
    gpu.numaNode = nodes.front();
    unknown.push_back(gpu.cudaOrdinal);
  }
  if (!unknown.empty()) {
    topology.notes.push_back(
        fmt::format("sysfs gives numa_node -1 for GPU {} (typical of a VM); the machine has one "
                    "NUMA node, so node {} is used",
                    fmt::join(unknown, ", "), nodes.front()));
  }
}

void addSysfs(Topology& topology, const Params& params) {
  const std::string& root = params.getString("PEERLINK_SYSFS_ROOT");
  std::vector<std::string> problems;
  for (Gpu& gpu : topology.gpus) {
    const SysfsPciDevice device = readSysfsPciDevice(root, gpu.pciBusId);
    gpu.pciPath = device.path;
    gpu.numaNode = device.numaNode;
    gpu.cpuAffinity = device.cpuList;
    gpu.pcie = device.link;
    gpu.failed.numa = device.failed.numa;
    gpu.failed.pcieLink = device.failed.pcieLink;
    gpu.failed.pciPath = device.failed.pciPath;
    for (const std::string& problem : device.problems)
      problems.push_back(fmt::format("GPU {}: {}", gpu.cudaOrdinal, problem));
  }
  if (!problems.empty()) {
    topology.notes.push_back(fmt::format("sysfs ({}): {}", root, fmt::join(problems, "; ")));
  }
  useTheOnlyNumaNode(topology, root);
}

}  // namespace

Topology discoverTopology(const Params& params) {
  configureLogging(params);
  const std::string& file = params.getString("PEERLINK_TOPO_FILE");
  if (!file.empty()) {
    logInfo(LogSubsys::Topo, "topology from PEERLINK_TOPO_FILE={}", file);
    return loadTopologyFile(file);
  }

  using Clock = std::chrono::steady_clock;
  const auto millisecondsSince = [](Clock::time_point from) {
    return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
  };
  const auto start = Clock::now();
  Topology topology;
  topology.source = "discovered";
  topology.host = hostName();
  topology.cudaVisibleDevices = environmentValue("CUDA_VISIBLE_DEVICES");
  topology.cudaDeviceOrder = environmentValue("CUDA_DEVICE_ORDER");
  const int count = cudaDeviceCount();
  PEERLINK_CUDA_CHECK(cudaDriverGetVersion(&topology.cudaDriverVersion));
  PEERLINK_CUDA_CHECK(cudaRuntimeGetVersion(&topology.cudaRuntimeVersion));
  for (int ordinal = 0; ordinal < count; ++ordinal) topology.gpus.push_back(describeCudaDevice(ordinal));
  for (int src = 0; src < count; ++src) {
    for (int dst = 0; dst < count; ++dst) {
      if (src != dst) topology.pairs.push_back(describeCudaPair(src, dst));
    }
  }
  const double cudaMilliseconds = millisecondsSince(start);
  const auto nvmlStart = Clock::now();
  addNvml(topology, params);
  const double nvmlMilliseconds = millisecondsSince(nvmlStart);
  const auto sysfsStart = Clock::now();
  addSysfs(topology, params);
  const double sysfsMilliseconds = millisecondsSince(sysfsStart);
  classifyPaths(topology);
  applyLinkModel(topology);
  validateTopology(topology);
  for (const GpuPair& pair : topology.pairs) {
    logInfo(LogSubsys::Topo, "GPU {} -> GPU {}: {} peer access {} ({})", pair.src, pair.dst, pathClassName(pair.path),
            pair.canAccessPeer ? "yes" : "no", pair.bandwidthBasis);
  }
  for (const std::string& warning : orderingWarnings(topology)) logInfo(LogSubsys::Topo, "{}", warning);
  logInfo(LogSubsys::Topo, "topology of {} GPUs discovered in {:.1f} ms (CUDA {:.1f}, NVML {:.1f}, sysfs {:.1f})",
          count, millisecondsSince(start), cudaMilliseconds, nvmlMilliseconds, sysfsMilliseconds);
  return topology;
}

}  // namespace peerlink
