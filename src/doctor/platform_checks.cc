// The doctor's platform checks: one function per check, each appending findings; checkPlatform runs them all.
#include "doctor/platform_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "doctor/doctor_verdict.hpp"
#include "doctor/platform_snapshot.hpp"
#include "doctor/shortage_checks.hpp"

namespace peerlink {
namespace {

using Bridge = PlatformSnapshot::Bridge;

constexpr std::int64_t kMinDevShmBytes = 1LL << 30;
// On systems without NVSwitch each GPU supports at most eight peer connections (CUDA Programming Guide,
// Peer-to-Peer Memory Access); a ninth cudaDeviceEnablePeerAccess fails with cudaErrorTooManyPeers (711).
constexpr int kMaxPciePeers = 8;

struct Context {
  const Topology& topology;
  const PlatformSnapshot& snapshot;
  std::vector<Finding>& findings;

  int gpuCount() const { return static_cast<int>(topology.gpus.size()); }
  std::string gpu(int i) const { return fmt::format("GPU {} ({})", i, topology.gpus[i].pciBusId); }
  std::string pairName(int a, int b) const { return gpu(a) + " <-> " + gpu(b); }
  const GpuPair* pair(int src, int dst) const {
    auto it = std::find_if(topology.pairs.begin(), topology.pairs.end(),
                           [&](const GpuPair& p) { return p.src == src && p.dst == dst; });
    return it == topology.pairs.end() ? nullptr : &*it;
  }
  bool canAccess(int src, int dst) const { return pair(src, dst) != nullptr && pair(src, dst)->canAccessPeer; }
  bool advertised(int a, int b) const { return canAccess(a, b) || canAccess(b, a); }
  int nvlinks(int a, int b) const { return pair(a, b) != nullptr ? pair(a, b)->nvlinks : 0; }
  // Whether NVML told this GPU's NVLinks: counts of one whose reading failed are no evidence of missing links.
  bool nvlinkKnown(int i) const { return topology.gpus[i].failed.nvlink.empty(); }
  // Pairs whose P2P traffic crosses PCIe: P2P advertised and no NVLink between them (known to be none).
  std::vector<std::pair<int, int>> pciePeerPairs() const {
    std::vector<std::pair<int, int>> pairs;
    for (int a = 0; a < gpuCount(); ++a) {
      for (int b = a + 1; b < gpuCount(); ++b) {
        if (advertised(a, b) && nvlinks(a, b) == 0 && nvlinks(b, a) == 0 && nvlinkKnown(a) && nvlinkKnown(b)) {
          pairs.emplace_back(a, b);
        }
      }
    }
    return pairs;
  }
  const Bridge* bridge(const std::string& busId) const {
    auto it = std::find_if(snapshot.bridges.begin(), snapshot.bridges.end(),
                           [&](const Bridge& b) { return b.busId == busId; });
    return it == snapshot.bridges.end() ? nullptr : &*it;
  }
  static bool isHostBridgeName(const std::string& name) { return name.compare(0, 3, "pci") == 0; }
  static std::string gpuList(const std::vector<int>& gpus) { return fmt::format("{}", fmt::join(gpus, ", ")); }
  static std::string cudaVersion(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
  void add(std::string code, Verdict severity, std::string summary, std::string fix, std::vector<int> gpus) const {
    findings.push_back(Finding{std::move(code), severity, std::move(summary), std::move(fix), std::move(gpus), ""});
  }
};

// "PLX/Broadcom switch port 0000:05:00.0", "AMD root port 0000:00:01.1".
std::string bridgeWords(const Context& c, const Bridge& bridge) {
  bool rootPort = false;
  for (const Gpu& gpu : c.topology.gpus) {
    auto it = std::find(gpu.pciPath.begin(), gpu.pciPath.end(), bridge.busId);
    if (it != gpu.pciPath.begin() && it != gpu.pciPath.end() && c.isHostBridgeName(*(it - 1))) rootPort = true;
  }
  const std::string vendor = bridge.vendor.empty() ? std::string() : pciVendorName(bridge.vendor) + " ";
  return fmt::format("{}{} {}", vendor, rootPort ? "root port" : "switch port", bridge.busId);
}

void checkCudaVersions(const Context& c) {
  const int driver = c.topology.cudaDriverVersion;
  const int runtime = c.topology.cudaRuntimeVersion;
  if (driver <= 0 || runtime <= 0 || runtime <= driver) return;
  if (runtime / 1000 > driver / 1000) {
    c.add("cuda_driver_too_old", Verdict::Broken,
          fmt::format("the CUDA runtime is {} but the driver ({}) supports CUDA {} only: CUDA calls fail with "
                      "cudaErrorInsufficientDriver (35)",
                      c.cudaVersion(runtime), c.topology.driverVersion.empty() ? "?" : c.topology.driverVersion,
                      c.cudaVersion(driver)),
          fmt::format("install a driver for CUDA {} or later (nvidia-smi shows the CUDA version the driver supports), "
                      "or on data-center GPUs the CUDA forward-compatibility package (cuda-compat)",
                      c.cudaVersion(runtime)),
          {});
    return;
  }
  c.add("cuda_minor_version_compat", Verdict::Ok,
        fmt::format("the CUDA runtime {} is newer than the driver's CUDA {}: it runs through minor-version "
                    "compatibility, but calls that need the newer driver may fail with "
                    "cudaErrorCallRequiresNewerDriver (36)",
                    c.cudaVersion(runtime), c.cudaVersion(driver)),
        fmt::format("update the driver to one for CUDA {} if a call reports error 36", c.cudaVersion(runtime)), {});
}

void checkOrdering(const Context& c) {
  for (const std::string& warning : orderingWarnings(c.topology)) {
    std::string code = "gpu_numbering";
    if (warning.find("another order than their PCI bus ids") != std::string::npos) {
      code = "cuda_order_differs";
    } else if (warning.find("differ from nvidia-smi") != std::string::npos) {
      code = "cuda_nvml_numbering_differs";
    } else if (warning.find("hides") != std::string::npos || warning.find("not visible") != std::string::npos) {
      code = "cuda_visible_devices_hides";
    }
    const size_t fix = warning.find("; set CUDA_DEVICE_ORDER");
    c.add(code, Verdict::Ok, fix == std::string::npos ? warning : warning.substr(0, fix),
          code == "cuda_visible_devices_hides"
              ? "peerlink can only test the GPUs it sees: unset or widen CUDA_VISIBLE_DEVICES (or the container's "
                "GPU list) to test all of them"
              : "set CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA numbers the GPUs as nvidia-smi does",
          {});
  }
}

void checkVirtualMachine(const Context& c) {
  if (!c.snapshot.hypervisor) return;
  c.add("vm_detected", Verdict::Ok,
        fmt::format("this is a virtual machine ({}): P2P advertised by a hypervisor is often not functional: the "
                    "probe decides",
                    c.snapshot.hypervisorVendor.empty() ? std::string("the CPU's hypervisor flag")
                                                        : c.snapshot.hypervisorVendor),
        "trust the functional probe; working P2P needs the hypervisor to pass the GPUs through with peer-to-peer "
        "enabled (ask the provider whether this instance type supports GPU P2P)",
        {});
}

void checkFlatTree(const Context& c) {
  std::vector<int> flat;
  for (int i = 0; i < c.gpuCount(); ++i) {
    const auto& path = c.topology.gpus[i].pciPath;
    if (path.size() == 2 && c.isHostBridgeName(path[0])) flat.push_back(i);
  }
  if (flat.size() < 2) return;
  c.add("flat_pcie_tree", Verdict::Ok,
        fmt::format("GPUs {} sit directly on a PCI host bridge, with no root port or switch above them: a virtual "
                    "PCI tree (physical GPUs sit below a root port), so path classes say nothing about the real "
                    "links",
                    c.gpuList(flat)),
        "nothing to fix; judge the links by the probe and by peerlink bench, not by the path class", flat);
}

void checkNuma(const Context& c) {
  std::vector<int> unknown;
  for (int i = 0; i < c.gpuCount(); ++i) {
    // A node that could not be read is reported as such (sysfs_unreadable), not as the machine's -1.
    if (c.topology.gpus[i].numaNode < 0 && c.topology.gpus[i].failed.numa.empty()) unknown.push_back(i);
  }
  if (unknown.empty()) return;
  c.add("numa_unknown", Verdict::Ok,
        fmt::format("GPUs {} report NUMA node -1 (usual in VMs and on some one-socket machines): host buffers and "
                    "threads cannot be placed near them automatically",
                    c.gpuList(unknown)),
        "on a multi-socket machine pin by hand (numactl --cpunodebind=N --membind=N, N from nvidia-smi topo -m); "
        "nothing to do on one socket",
        unknown);
}

bool translated(const std::string& type) {
  return type == "DMA" || type == "DMA-FQ";
}

void checkIommu(const Context& c) {
  const auto& types = c.snapshot.iommuGroupTypes;
  auto type = [&](int i) { return static_cast<size_t>(i) < types.size() ? types[i] : std::string(); };
  const std::string& cmdline = c.snapshot.kernelCommandLine;
  const bool askedPassthrough =
      cmdline.find("iommu=pt") != std::string::npos || cmdline.find("iommu.passthrough=1") != std::string::npos;
  for (auto [a, b] : c.pciePeerPairs()) {
    std::vector<std::string> parts;
    for (int i : {a, b}) {
      if (translated(type(i))) parts.push_back(fmt::format("{} (group type {})", c.gpu(i), type(i)));
    }
    if (parts.empty()) continue;
    const int example = translated(type(a)) ? a : b;
    c.add("iommu_translated", Verdict::Degraded,
          fmt::format("{}: the IOMMU translates the DMA of {}: PCIe peer writes may be dropped or fault (DMAR / "
                      "AMD-Vi errors in dmesg) unless the platform supports peer-to-peer through the IOMMU (ATS)",
                      c.pairName(a, b), fmt::join(parts, " and ")),
          fmt::format("boot with iommu=pt (or iommu.passthrough=1; on Intel keep intel_iommu=on){}; then cat "
                      "/sys/bus/pci/devices/{}/iommu_group/type should say identity",
                      askedPassthrough ? " -- the command line already asks for it, so check that this kernel "
                                         "honours it (dmesg | grep -i 'default domain type')"
                                       : "",
                      c.topology.gpus[example].pciBusId),
          {a, b});
  }
  std::map<std::string, std::vector<int>> byType;
  for (int i = 0; i < c.gpuCount(); ++i) byType[type(i)].push_back(i);
  if (byType.count("identity") != 0) {
    c.add("iommu_identity", Verdict::Ok,
          fmt::format("the IOMMU is in passthrough (identity) mode for GPUs {}: their peer traffic is not translated",
                      c.gpuList(byType["identity"])),
          "nothing to do", byType["identity"]);
  }
  if (byType.count("none") != 0) {
    c.add("iommu_off", Verdict::Ok,
          fmt::format(
              "GPUs {} have no IOMMU group: the IOMMU is off in this OS, so it does not translate their peer "
              "traffic{}",
              c.gpuList(byType["none"]),
              c.snapshot.hypervisor ? "; in a VM the host's IOMMU still translates the GPUs' DMA, unseen here" : ""),
          "nothing to do", byType["none"]);
  }
}

void checkAcs(const Context& c) {
  std::vector<std::string> unknownBridges;
  std::set<int> unknownGpus;
  std::set<int> unknownPaths;
  std::map<std::string, std::vector<std::string>> bridgesByReason;  // why each unknown bridge could not be read
  for (auto [a, b] : c.pciePeerPairs()) {
    for (int i : {a, b}) {
      if (c.topology.gpus[i].pciPath.empty()) unknownPaths.insert(i);
    }
    std::vector<const Bridge*> redirecting;
    for (const std::string& busId : divergenceBridges(c.topology.gpus[a].pciPath, c.topology.gpus[b].pciPath)) {
      const Bridge* bridge = c.bridge(busId);
      if (bridge != nullptr && bridge->acsKnown) {
        if (bridge->acsRedirect) redirecting.push_back(bridge);
        continue;
      }
      if (std::find(unknownBridges.begin(), unknownBridges.end(), busId) == unknownBridges.end()) {
        unknownBridges.push_back(busId);
        const std::string why = bridge == nullptr || bridge->unreadable.empty() ? "not read" : bridge->unreadable;
        bridgesByReason[why].push_back(busId);
      }
      unknownGpus.insert({a, b});
    }
    if (redirecting.empty()) continue;
    std::vector<std::string> words;
    std::vector<std::string> commands;
    std::vector<std::string> ids;
    for (const Bridge* bridge : redirecting) {
      words.push_back(bridgeWords(c, *bridge));
      commands.push_back(fmt::format("setpci -s {} ECAP_ACS+6.w=0000", bridge->busId));
      ids.push_back(bridge->busId);
    }
    c.add("acs_redirect", Verdict::Broken,
          fmt::format("{}: PCIe ACS redirect (P2P request/completion redirect or egress control) is on at {}, so "
                      "their peer traffic is redirected upstream to the root complex and its IOMMU, where it may be "
                      "dropped (stale or zero data), hang or crawl, while cudaDeviceCanAccessPeer still says yes",
                      c.pairName(a, b), fmt::join(words, " and ")),
          fmt::format("as root: {} (lost at reboot; with the IOMMU on this weakens device isolation), or disable ACS "
                      "in the BIOS, or boot with pci=disable_acs_redir={} (pcie_acs_override does not help: it only "
                      "changes IOMMU grouping)",
                      fmt::join(commands, "; "), fmt::join(ids, ";")),
          {a, b});
  }
  if (unknownBridges.empty() && unknownPaths.empty()) return;
  std::vector<std::string> commands;
  for (const std::string& busId : unknownBridges) {
    commands.push_back(fmt::format("sudo lspci -vvv -s {} | grep -i ACSCtl", busId));
  }
  std::vector<std::string> what;
  for (const auto& [why, bridges] : bridgesByReason) {
    what.push_back(fmt::format("the ACS control of {} could not be read ({})", fmt::join(bridges, ", "), why));
  }
  for (int i : unknownPaths) {
    const std::string& failed = c.topology.gpus[i].failed.pciPath;
    what.push_back(failed.empty() ? fmt::format("the PCI path of {} is unknown", c.gpu(i))
                                  : fmt::format("the PCI path of {} could not be read ({})", c.gpu(i), failed));
    unknownGpus.insert(i);
  }
  c.add("acs_unknown", Verdict::Ok,
        fmt::format("{}, so whether PCIe ACS redirects peer traffic between GPUs {} is unknown", fmt::join(what, "; "),
                    fmt::join(unknownGpus, ", ")),
        commands.empty()
            ? std::string("check the GPUs' PCI paths: readlink -f /sys/bus/pci/devices/<bus id>")
            : fmt::format("{}, or check by hand: {} (ReqRedir+, CmpltRedir+ or EgressCtrl+ mean redirected)",
                          bridgesByReason.count("reading it needs root") != 0
                              ? "run peerlink doctor as root"
                              : "fix what stopped the reading and run peerlink doctor again",
                          fmt::join(commands, "; ")),
        std::vector<int>(unknownGpus.begin(), unknownGpus.end()));
}

void checkLinks(const Context& c) {
  for (int i = 0; i < c.gpuCount(); ++i) {
    const PcieLink& link = c.topology.gpus[i].pcie;
    const std::string busId = c.topology.gpus[i].pciBusId;
    if (link.width > 0 && link.maxWidth > 0 && link.width < link.maxWidth) {
      c.add("link_trained_down", Verdict::Degraded,
            fmt::format("{}: the PCIe link runs at Gen{} x{}, below its maximum Gen{} x{}: it trained to fewer lanes, "
                        "which cuts its bandwidth to the host and to PCIe peers",
                        c.gpu(i), link.gen, link.width, link.maxGen, link.maxWidth),
            fmt::format("check that the slot is wired x{} (not an x8 electrical slot), the riser or cable and the BIOS "
                        "link settings, reseat the GPU; compare sudo lspci -vvv -s {} | grep -E 'LnkCap|LnkSta'",
                        link.maxWidth, busId),
            {i});
    } else if (link.gen > 0 && link.maxGen > 0 && link.gen < link.maxGen) {
      c.add("link_gen_below_max", Verdict::Ok,
            fmt::format("{}: the PCIe link runs at Gen{}, below its maximum Gen{}: GPUs lower the link speed when idle "
                        "to save power, so this may be normal",
                        c.gpu(i), link.gen, link.maxGen),
            fmt::format("check under load: nvidia-smi -q -d PCIE -i {} while a copy runs should show Gen{}; if not, "
                        "check the BIOS link speed setting and the slot",
                        i, link.maxGen),
            {i});
    }
  }
}

// MIG partitions a GPU into instances that CUDA does not let map peers: no P2P, no CUDA IPC between them
// (CUDA's MIG user guide, "CUDA device enumeration" and its list of unsupported features).
void checkMig(const Context& c) {
  for (int i = 0; i < c.gpuCount(); ++i) {
    if (c.topology.gpus[i].migMode != 1) continue;
    c.add("mig_enabled", Verdict::Degraded,
          fmt::format("{}: MIG mode is on; GPU instances cannot use peer access or CUDA IPC, so every transfer with "
                      "this GPU goes through host memory",
                      c.gpu(i)),
          fmt::format("for P2P, turn MIG off: sudo nvidia-smi -i {} -mig 0 (then reset the GPU or reboot)", i), {i});
  }
}

// Over PCIe a peer maps this GPU's memory through its BAR1 window: a small BAR1 (256 MiB without resizable
// BAR) caps how much memory peers can map at once, and large peer buffers fail to map. NVLink does not use it.
void checkBar1(const Context& c) {
  constexpr std::uint64_t kSmallBar1 = std::uint64_t{1} << 30;
  for (int i = 0; i < c.gpuCount(); ++i) {
    const Gpu& gpu = c.topology.gpus[i];
    if (gpu.bar1Bytes == 0 || gpu.bar1Bytes >= kSmallBar1 || gpu.bar1Bytes >= gpu.memoryBytes) continue;
    std::vector<int> peers;
    for (const auto& [a, b] : c.pciePeerPairs()) {
      if (a == i) peers.push_back(b);
      if (b == i) peers.push_back(a);
    }
    if (peers.empty()) continue;
    c.add("bar1_small", Verdict::Degraded,
          fmt::format("{}: BAR1 is {} MiB of {} GiB of memory, and GPU(s) {} reach it over PCIe: peers can map at "
                      "most that much of its memory at once",
                      c.gpu(i), gpu.bar1Bytes >> 20, gpu.memoryBytes >> 30, c.gpuList(peers)),
          "enable Resizable BAR / Above 4G Decoding in the BIOS (and a large BAR1 in the VM's firmware for "
          "passthrough); check with nvidia-smi -q -d MEMORY | grep -A3 BAR1",
          {i});
  }
}

void checkNvlink(const Context& c) {
  const auto& gpus = c.topology.gpus;
  for (int a = 0; a < c.gpuCount(); ++a) {
    for (int b = a + 1; b < c.gpuCount(); ++b) {
      if (!c.nvlinkKnown(a) || !c.nvlinkKnown(b)) continue;  // nvlink_unreadable says so
      if (gpus[a].nvlink.switchLinks == 0 || gpus[b].nvlink.switchLinks == 0) continue;
      if (c.nvlinks(a, b) > 0 || c.nvlinks(b, a) > 0) continue;
      c.add("nvlink_missing_on_nvswitch", Verdict::Degraded,
            fmt::format("{}: both GPUs have NVLinks to NVSwitch but none between them: the fabric does not route "
                        "this pair (Fabric Manager not running or failed, or a partition excludes it; without Fabric "
                        "Manager CUDA fails with error 802, cudaErrorSystemNotReady), so traffic falls back to PCIe",
                        c.pairName(a, b)),
            "systemctl status nvidia-fabricmanager (its version must match the driver's exactly; start it), then "
            "nvidia-smi -q | grep -A2 -i fabric should say Completed / Success",
            {a, b});
    }
  }
  // Only GPUs whose links NVML told: a GPU it could not read has no links counted, and no reseat brings them back.
  for (int i = 0; i < c.gpuCount(); ++i) {
    if (!c.nvlinkKnown(i)) continue;
    int best = -1;
    for (int j = 0; j < c.gpuCount(); ++j) {
      if (c.nvlinkKnown(j) && gpus[j].name == gpus[i].name &&
          (best < 0 || gpus[j].nvlink.activeLinks > gpus[best].nvlink.activeLinks)) {
        best = j;
      }
    }
    if (gpus[i].nvlink.activeLinks >= gpus[best].nvlink.activeLinks) continue;
    c.add("nvlink_count_differs", Verdict::Degraded,
          fmt::format("{} has {} active NVLinks where GPU {} of the same model has {}: some of its links may be down",
                      c.gpu(i), gpus[i].nvlink.activeLinks, best, gpus[best].nvlink.activeLinks),
          fmt::format("nvidia-smi nvlink --status -i {0} and nvidia-smi nvlink -e -i {0} (error counters); look for "
                      "Xid 74 in dmesg; a GPU reset or reseat may bring the links back",
                      i),
          {i});
  }
}

void checkPeerLimit(const Context& c) {
  std::vector<int> over;
  int most = 0;
  for (int i = 0; i < c.gpuCount(); ++i) {
    int peers = 0;
    bool nvswitchUnknown = !c.nvlinkKnown(i);
    for (int j = 0; j < c.gpuCount(); ++j) {
      const GpuPair* p = i == j ? nullptr : c.pair(i, j);
      if (p != nullptr && p->canAccessPeer && !p->viaNvswitch) {
        ++peers;
        nvswitchUnknown = nvswitchUnknown || !c.nvlinkKnown(j);
      }
    }
    if (nvswitchUnknown) continue;  // whether NVSwitch lifts the limit is unknown (nvlink_unreadable)
    if (peers > kMaxPciePeers) over.push_back(i);
    most = std::max(most, peers);
  }
  if (over.empty()) return;
  c.add("peer_limit", Verdict::Degraded,
        fmt::format("GPUs {} each have up to {} P2P peers, but without NVSwitch a GPU supports at most {} peer "
                    "connections: enabling peer access to all of them fails with cudaErrorTooManyPeers (711)",
                    c.gpuList(over), most, kMaxPciePeers),
        fmt::format("enable peer access only between GPUs that exchange data (at most {} per GPU, e.g. ring or mesh "
                    "neighbours); route the rest through host memory or a relay GPU",
                    kMaxPciePeers),
        {});
}

void checkHandles(const Context& c) {
  std::vector<int> noVmm;
  std::vector<int> noFd;
  for (int i = 0; i < c.gpuCount(); ++i) {
    const MemoryHandles& handles = c.topology.gpus[i].handles;
    if (!handles.vmm || !handles.posixFd) (handles.vmm ? noFd : noVmm).push_back(i);
  }
  const char* fallback = "other processes share their memory through legacy CUDA IPC only (the CUMEM route is off)";
  if (!noVmm.empty()) {
    c.add("no_vmm", Verdict::Ok,
          fmt::format("GPUs {} have no CUDA virtual memory management (cuMem*): {}", c.gpuList(noVmm), fallback),
          "nothing to fix for correctness; a newer driver, or bare metal instead of a vGPU, may provide it", noVmm);
  }
  if (!noFd.empty()) {
    c.add(
        "no_posix_fd_handles", Verdict::Ok,
        fmt::format("GPUs {} cannot export cuMem allocations as POSIX file descriptors: {}", c.gpuList(noFd), fallback),
        "nothing to fix for correctness; a newer driver may provide POSIX-fd handles", noFd);
  }
}

void checkContainer(const Context& c) {
  if (c.snapshot.pidNamespaceIsolated) {
    c.add("container_pid_namespace", Verdict::Ok,
          "this process has its own PID namespace (a container): legacy CUDA IPC with processes in other containers "
          "or on the host may fail (\"invalid device context\"); processes in the same container are not affected",
          "run the processes in one container or share the PID namespace (docker run --pid=host or "
          "--pid=container:<name>); peerlink's CUMEM route passes descriptors over a Unix socket and works across PID "
          "namespaces",
          {});
  }
  if (c.snapshot.ipcNamespaceIsolated) {
    c.add("container_ipc_namespace", Verdict::Ok,
          "this process has its own IPC namespace (a container): legacy CUDA IPC between containers has been reported "
          "to need a shared one, and NCCL's shared-memory transport needs a shared /dev/shm",
          "share the IPC namespace: docker run --ipc=host or --ipc=container:<name>", {});
  }
  const std::int64_t shm = c.snapshot.devShmBytes;
  if (shm >= 0 && shm < kMinDevShmBytes) {
    c.add("small_dev_shm", Verdict::Ok,
          fmt::format("/dev/shm is {} MiB: where a GPU cannot reach another's memory, ranks in different processes "
                      "stage through it (a little over 32 MiB per rank of this host) and a communicator fails to start "
                      "when it has no room; NCCL (peerlink coll runs it) keeps shared-memory segments there and may "
                      "fail with \"Error while creating shared memory segment\"",
                      shm >> 20),
          "docker run --shm-size=1g (or --ipc=host); in Kubernetes mount an emptyDir with medium: Memory at /dev/shm",
          {});
  }
  const int scope = c.snapshot.ptraceScope;
  if (scope > 0) {
    static const char* const kScopes[] = {"", "restricted: only descendants may attach", "admin-only attach",
                                          "no attach, fixed until reboot"};
    c.add("ptrace_scope", Verdict::Ok,
          fmt::format("kernel.yama.ptrace_scope is {} ({}): peerlink is not affected (it passes descriptors over a "
                      "Unix socket), but tools that take another process's descriptors with pidfd_getfd (UCX's CUDA "
                      "IPC POSIX-fd path, for one) fail between sibling processes",
                      scope, kScopes[std::min(scope, 3)]),
          "nothing to do for peerlink; for such tools: sudo sysctl kernel.yama.ptrace_scope=0, or give them "
          "CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE)",
          {});
  }
}

void checkOpenFiles(const Context& c) {
  const long limit = c.snapshot.openFileLimit;
  const long needed = std::max(1024L, 64L * c.gpuCount());
  if (limit < 0 || limit >= needed) return;
  c.add("open_file_limit", Verdict::Degraded,
        fmt::format("the open-file limit (RLIMIT_NOFILE) is {}, below {}: the CUDA driver opens device files per GPU "
                    "and cross-process routes hold a socket per peer and a descriptor per shared buffer, so runs may "
                    "fail with EMFILE (Too many open files)",
                    limit, needed),
        "ulimit -n 65536 before the run (up to ulimit -Hn), LimitNOFILE=65536 in a systemd unit, or docker run "
        "--ulimit nofile=65536:65536",
        {});
}

void checkP2pNotReported(const Context& c) {
  const auto& gpus = c.topology.gpus;
  for (int a = 0; a < c.gpuCount(); ++a) {
    for (int b = a + 1; b < c.gpuCount(); ++b) {
      const bool ab = c.canAccess(a, b);
      const bool ba = c.canAccess(b, a);
      if (ab && ba) continue;
      const GpuPair* p = c.pair(a, b);
      std::string why = "the driver does not offer P2P between them (platform, BIOS or driver policy)";
      if (gpus[a].name.find("GeForce") != std::string::npos && gpus[b].name.find("GeForce") != std::string::npos) {
        why = "the driver does not offer P2P between these GeForce (consumer) GPUs";
      } else if (p != nullptr && p->path == PathClass::SYS) {
        why =
            "they hang off different CPU sockets, and the driver does not offer PCIe P2P across the inter-socket "
            "link on many platforms";
      } else if (c.snapshot.hypervisor) {
        why = "the hypervisor does not expose P2P between them";
      }
      const std::string direction =
          ab || ba ? fmt::format(" (only GPU {} -> GPU {} is refused)", ab ? b : a, ab ? a : b) : std::string();
      c.add("p2p_not_reported", Verdict::Unsupported,
            fmt::format("{}: cudaDeviceCanAccessPeer says no{}: {}", c.pairName(a, b), direction, why),
            "nothing to fix: peerlink moves this pair's data through host memory (STAGED) or a relay GPU (RELAY)",
            {a, b});
    }
  }
}

}  // namespace

std::vector<std::string> divergenceBridges(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return {};
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  std::vector<std::string> bridges;
  for (const auto* path : {&a, &b}) {
    size_t k = common;
    if (k < path->size() && Context::isHostBridgeName((*path)[k])) ++k;  // different host bridges: their root ports
    if (k + 1 < path->size()) bridges.push_back((*path)[k]);             // the last element is the device itself
  }
  return bridges;
}

std::vector<Finding> checkPlatform(const Topology& topology, const PlatformSnapshot& snapshot) {
  std::vector<Finding> findings;
  const Context context{topology, snapshot, findings};
  checkCudaVersions(context);
  checkOrdering(context);
  checkVirtualMachine(context);
  checkFlatTree(context);
  checkNuma(context);
  checkIommu(context);
  checkAcs(context);
  checkLinks(context);
  checkNvlink(context);
  checkMig(context);
  checkBar1(context);
  checkPeerLimit(context);
  checkHandles(context);
  checkContainer(context);
  checkOpenFiles(context);
  checkP2pNotReported(context);
  checkShortages(topology, snapshot, findings);
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& x, const Finding& y) {
    return verdictRank(x.severity) > verdictRank(y.severity);
  });
  orderByCause(findings);
  return findings;
}

}  // namespace peerlink
