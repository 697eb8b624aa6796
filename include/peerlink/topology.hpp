// The GPU topology as plain data: what peerlink knows about every GPU and every ordered pair.
//
// Discovery (discoverTopology) fills it from CUDA, NVML and sysfs; it can be written to JSON and loaded
// back (topologyToJson / loadTopologyFile, PEERLINK_TOPO_FILE), so every decision made from it is
// testable without a GPU. GPUs are identified by UUID and PCI bus id: CUDA ordinals are only this
// process's view.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peerlink {

class Params;

/// How the traffic between two GPUs travels, best first. The meanings are NCCL's (and nvidia-smi's):
enum class PathClass : int {
  LOC = 0,   ///< the same GPU
  NVL = 1,   ///< NVLink, directly or through NVSwitch
  NVB = 2,   ///< NVLink through an intermediate GPU
  PIX = 3,   ///< PCIe through at most one PCIe switch (one bridge level)
  PXB = 4,   ///< PCIe through several switches, without the host bridge
  PHB = 5,   ///< PCIe through a PCIe host bridge (the CPU's root complex)
  NODE = 6,  ///< PCIe plus the interconnect between host bridges within one NUMA node
  SYS = 7,   ///< PCIe plus the inter-socket interconnect (QPI/UPI/Infinity Fabric)
};

/// "NVL", "PIX", ... (the names NCCL and PEERLINK_P2P_LEVEL use).
const char* pathClassName(PathClass path) noexcept;
/// Parses a name as pathClassName writes it (case-insensitive); nullopt when unknown.
std::optional<PathClass> parsePathClass(const std::string& name);
/// One line saying what the class means, for legends.
const char* pathClassDescription(PathClass path) noexcept;

/// PCIe link of one device: generation 1..6 and lane count; 0 where unknown.
struct PcieLink {
  int gen = 0;
  int width = 0;
  int maxGen = 0;
  int maxWidth = 0;
};

/// NVLink summary of one GPU (from NVML).
struct NvlinkInfo {
  int version = 0;          ///< NVLink generation (4 on Hopper); 0 = unknown or none
  int activeLinks = 0;      ///< links in the active state
  int switchLinks = 0;      ///< of those, links that end at an NVSwitch
  double linkRateGBps = 0;  ///< per link, per direction, GB/s (1e9 bytes/s)
};

/// Which kinds of memory handle the GPU's driver supports, for sharing memory across processes.
struct MemoryHandles {
  bool vmm = false;      ///< cuMem* virtual memory management (cudaDevAttrVirtualMemoryManagementSupported)
  bool posixFd = false;  ///< POSIX file-descriptor export of cuMem allocations (the CUMEM route)
  bool fabric = false;   ///< fabric handles (multi-node NVLink)
};

/// Readings discovery could not take for one GPU, each with why ("" when it was taken, or when there was nothing
/// to read: a VM without link files, a machine without NVML). The field it would have filled keeps its unknown
/// or zero value, which is no fact about the hardware: what is built on a failed reading says so instead of
/// concluding from it (the doctor's checks, docs/doctor.md).
struct FailedReadings {
  std::string nvlink;    ///< NVML: the GPU's NVLinks; `nvlink` and the pairs' counts are then lower bounds
  std::string numa;      ///< sysfs: numa_node, local_cpulist
  std::string pcieLink;  ///< sysfs: the PCIe link's speed and width
  std::string pciPath;   ///< sysfs: where the device sits in the PCI tree
  bool any() const { return !nvlink.empty() || !numa.empty() || !pcieLink.empty() || !pciPath.empty(); }
};

/// One GPU as seen by this process.
struct Gpu {
  int cudaOrdinal = -1;  ///< this process's CUDA device number (-1: not visible to CUDA)
  int nvmlIndex = -1;    ///< NVML's index (-1: NVML not available)
  std::string uuid;      ///< "GPU-xxxxxxxx-xxxx-..."
  std::string pciBusId;  ///< "0000:00:06.0", lower case, 4-digit domain
  std::string name;      ///< "NVIDIA H200"
  int ccMajor = 0;       ///< compute capability
  int ccMinor = 0;
  int smCount = 0;
  std::uint64_t memoryBytes = 0;
  int numaNode = -1;        ///< -1: unknown or no NUMA information (VMs often report -1)
  std::string cpuAffinity;  ///< CPU list like "0-31,64-95"; empty when unknown
  PcieLink pcie;
  NvlinkInfo nvlink;
  MemoryHandles handles;
  int migMode = -1;             ///< NVML: 1 MIG enabled, 0 disabled, -1 unknown or no MIG support
  std::uint64_t bar1Bytes = 0;  ///< NVML: BAR1 aperture, what PCIe peers can map of this GPU; 0 unknown
  /// PCI path from the root: the host bridge ("pci0000:00") then each bridge down to the GPU itself.
  /// Empty when sysfs could not be read.
  std::vector<std::string> pciPath;
  FailedReadings failed;  ///< what discovery tried to read for this GPU and could not
};

/// P2P attributes the CUDA driver reports for an ordered pair (cudaDeviceGetP2PAttribute).
struct P2pAttributes {
  bool accessSupported = false;  ///< cudaDevP2PAttrAccessSupported
  bool nativeAtomics = false;    ///< cudaDevP2PAttrNativeAtomicSupported
  bool cudaArrayAccess = false;  ///< cudaDevP2PAttrCudaArrayAccessSupported
  int performanceRank = -1;      ///< cudaDevP2PAttrPerformanceRank (lower is better), -1 unknown
};

/// Everything known about traffic from GPU `src` to GPU `dst` (indices into Topology::gpus).
struct GpuPair {
  int src = -1;
  int dst = -1;
  bool canAccessPeer = false;  ///< cudaDeviceCanAccessPeer(src, dst): src may map dst's memory
  P2pAttributes p2p;
  int nvlinks = 0;           ///< NVLinks usable between them (direct, or min of both sides via NVSwitch)
  bool viaNvswitch = false;  ///< the NVLinks go through NVSwitch
  PathClass path = PathClass::SYS;
  double expectedGBps = 0;     ///< raw link bandwidth src -> dst per direction; 0 = unknown
  std::string bandwidthBasis;  ///< how expectedGBps was derived, e.g. "18 x NVLink4 26.56 GB/s"
  /// Non-empty: P2P from src to dst must not be used, whatever the driver reports, and this says why (the
  /// doctor found the pair BROKEN: coll/pair_transport.hpp sets it from the verdicts). Not a fact discovery
  /// learns, so never written to or read from a topology file.
  std::string p2pDenied;
};

/// A pair's link as `nvidia-smi topo -m` writes it: "NV18" for NVLink, else the path class ("PIX", ...).
std::string linkLabel(const GpuPair& pair);

/// A GPU NVML sees, whether or not this process's CUDA sees it (CUDA_VISIBLE_DEVICES can hide some).
struct NvmlGpu {
  int index = -1;
  std::string uuid;
  std::string pciBusId;
};

/// The most GPUs a topology may have (a file with more is rejected): far beyond one machine's, and small
/// enough that every ordered pair fits in memory and in a topology file of peerlink's size cap.
inline constexpr int kMaxTopologyGpus = 512;

/// The whole picture. Pairs hold every ordered pair (src != dst) exactly once; discovery and the file
/// reader put them in (src, dst) order, where pair() finds each at once.
struct Topology {
  int schemaVersion = 1;
  std::string source;  ///< "discovered" or the file it was loaded from
  std::string host;
  std::string driverVersion;                      ///< NVIDIA driver, e.g. "580.159.04"; empty when unknown
  int cudaDriverVersion = 0;                      ///< cudaDriverGetVersion, e.g. 13000
  int cudaRuntimeVersion = 0;                     ///< cudaRuntimeGetVersion
  std::optional<std::string> cudaVisibleDevices;  ///< CUDA_VISIBLE_DEVICES as set, if set
  std::optional<std::string> cudaDeviceOrder;     ///< CUDA_DEVICE_ORDER as set, if set
  std::vector<Gpu> gpus;                          ///< in CUDA ordinal order
  std::vector<NvmlGpu> nvmlGpus;                  ///< every GPU NVML sees, in NVML order; empty without NVML
  std::vector<GpuPair> pairs;
  std::vector<std::string> notes;  ///< what discovery could not learn, and why

  /// The pair src -> dst; throws Error(InvalidUsage) when absent or src == dst. Constant time when the
  /// pairs are in (src, dst) order, a scan otherwise.
  const GpuPair& pair(int src, int dst) const;
  GpuPair& pair(int src, int dst);
};

/// Warnings a user should see about how this process numbers the GPUs: CUDA ordinal order differing
/// from PCI bus / NVML order, GPUs hidden by CUDA_VISIBLE_DEVICES. Pure function of the data.
std::vector<std::string> orderingWarnings(const Topology& topology);

/// Checks internal consistency (1 to kMaxTopologyGpus GPUs, indices, one pair per ordered pair, ...); throws
/// Error(InvalidInput).
void validateTopology(const Topology& topology);

/// JSON text of the topology (schema "peerlink.topology", version 1), pretty-printed.
std::string topologyToJson(const Topology& topology);
/// Parses and validates JSON text; throws Error(InvalidInput) naming the first problem. `origin` names
/// the text in messages (a file name).
Topology topologyFromJson(const std::string& text, const std::string& origin);
/// Reads a topology file; throws Error(InvalidInput) when missing, unreadable or malformed.
Topology loadTopologyFile(const std::string& path);

/// The topology of this machine: from PEERLINK_TOPO_FILE when that is set, else discovered from CUDA,
/// NVML (loaded at run time; optional) and sysfs. Throws Error(NoDevice) when CUDA finds no GPU.
Topology discoverTopology(const Params& params);

}  // namespace peerlink
