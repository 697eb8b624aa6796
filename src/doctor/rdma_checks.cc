// GPUDirect RDMA readiness checks: one function per check, each appending findings; decideRdmaReadiness
// runs them all.
#include "doctor/rdma_checks.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "doctor/doctor_verdict.hpp"
#include "doctor/platform_checks.hpp"
#include "topology/path_class.hpp"

namespace peerlink {
namespace {

// RDMA registration pins host memory and counts it against RLIMIT_MEMLOCK (GPU memory registered through
// nvidia_peermem or DMA-BUF is not counted). NVIDIA's and the MPIs' guides ask for unlimited; below this,
// the pinned staging buffers of one process already fail to register.
constexpr std::uint64_t kMinMemlockBytes = std::uint64_t{1} << 30;

struct Context {
  const Topology& topology;
  const RdmaSnapshot& snapshot;
  const std::vector<NearestNics>& nearest;
  std::vector<Finding>& findings;

  int gpuCount() const { return static_cast<int>(topology.gpus.size()); }
  const RdmaNic& nic(int k) const { return snapshot.nics[static_cast<std::size_t>(k)]; }
  std::string gpu(int i) const {
    return fmt::format("GPU {} ({})", i, topology.gpus[static_cast<std::size_t>(i)].pciBusId);
  }
  std::string nicName(int k) const { return fmt::format("{} ({})", nic(k).name, nic(k).pciBusId); }
  // The GPUs whose nearest NICs include NIC k.
  std::vector<int> gpusNear(int k) const {
    std::vector<int> gpus;
    for (const NearestNics& n : nearest) {
      if (std::find(n.nics.begin(), n.nics.end(), k) != n.nics.end()) gpus.push_back(n.gpu);
    }
    return gpus;
  }
  void add(std::string code, Verdict severity, std::string summary, std::string fix, std::vector<int> gpus) const {
    findings.push_back(Finding{std::move(code), severity, std::move(summary), std::move(fix), std::move(gpus), ""});
  }
};

std::vector<int> hardwareNics(const RdmaSnapshot& s) {
  std::vector<int> nics;
  for (int k = 0; k < static_cast<int>(s.nics.size()); ++k) {
    if (!s.nics[static_cast<std::size_t>(k)].pciBusId.empty()) nics.push_back(k);
  }
  return nics;
}

bool hasActivePort(const RdmaNic& nic) {
  return std::any_of(nic.ports.begin(), nic.ports.end(), [](const RdmaPort& p) { return p.state == "ACTIVE"; });
}

// Why a port is not ACTIVE and what to do, from its state and physical state (InfiniBand's port states;
// RoCE ports follow their Ethernet link).
std::pair<std::string, std::string> portDownCause(const RdmaNic& nic, const RdmaPort& port) {
  const std::string netdev = nic.netdevs.empty() ? std::string("<netdev>") : nic.netdevs.front().name;
  if (port.linkLayer == "Ethernet") {
    return {"the Ethernet link under this RoCE port is down",
            fmt::format("ip link set {} up; check the cable or transceiver and the switch port (ethtool {})", netdev,
                        netdev)};
  }
  if (port.state == "INIT") {
    return {"the link is up but no subnet manager has configured the port (an InfiniBand fabric needs one)",
            "start a subnet manager on one node of the fabric (systemctl start opensm) or enable the switch's; the "
            "port turns ACTIVE within seconds (ibstat)"};
  }
  if (port.state == "ARMED") {
    return {"the subnet manager configured the port but has not activated it",
            "wait a few seconds, then look at the subnet manager's log; ibstat shows the state"};
  }
  if (port.physicalState == "Disabled") {
    return {"the port is disabled", "enable it: on the switch, or ibportstate -D 0 1 enable; ibstat shows the state"};
  }
  return {fmt::format("no link{}: no cable, a faulty cable or transceiver, or the switch port is off",
                      port.physicalState.empty() ? "" : " (physical state " + port.physicalState + ")"),
          fmt::format("check the cable, the transceiver and the switch port; ibstat {} shows the state, and mlxlink "
                      "-d {} (NVIDIA MFT) why the link does not train",
                      nic.name, nic.pciBusId)};
}

void checkPorts(const Context& c, const std::vector<int>& nics) {
  const bool anyActive = std::any_of(nics.begin(), nics.end(), [&](int k) { return hasActivePort(c.nic(k)); });
  for (int k : nics) {
    for (const RdmaPort& port : c.nic(k).ports) {
      if (port.state.empty() || port.state == "ACTIVE") continue;
      const auto [cause, fix] = portDownCause(c.nic(k), port);
      c.add("rdma_port_down", anyActive ? Verdict::Degraded : Verdict::Broken,
            fmt::format("{} port {} is {}: {}{}", c.nicName(k), port.number, port.state, cause,
                        anyActive ? "" : "; no RDMA NIC here has an active port, so none can carry traffic"),
            fix, c.gpusNear(k));
    }
  }
}

void checkRates(const Context& c, const std::vector<int>& nics) {
  std::map<std::string, double> fastest;
  for (int k : nics) {
    for (const RdmaPort& port : c.nic(k).ports) {
      if (port.state == "ACTIVE") fastest[port.linkLayer] = std::max(fastest[port.linkLayer], port.gbps);
    }
  }
  for (int k : nics) {
    for (const RdmaPort& port : c.nic(k).ports) {
      const double best = fastest[port.linkLayer];
      if (port.state != "ACTIVE" || port.gbps <= 0 || port.gbps >= best) continue;
      c.add("rdma_rate_differs", Verdict::Degraded,
            fmt::format("{} port {} runs at {} where the fastest {} port here runs at {:g} Gb/sec: a slower cable or "
                        "switch port, a link trained down, or another NIC model",
                        c.nicName(k), port.number, port.rate, port.linkLayer.empty() ? "RDMA" : port.linkLayer, best),
            "compare ibstat on both NICs; mlxlink -d <bus id> (NVIDIA MFT) shows the cable and why the link trained "
            "lower; a NIC of another model is expected to differ",
            c.gpusNear(k));
    }
  }
}

void checkVerbs(const Context& c, const std::vector<int>& nics) {
  for (int k : nics) {
    const RdmaNic& nic = c.nic(k);
    if (nic.verbsDevice.empty()) {
      c.add("rdma_verbs_unavailable", Verdict::Degraded,
            fmt::format("{} has no user-space verbs device (sysfs class/infiniband_verbs does not list it): ib_uverbs "
                        "is not loaded, so no program here (MPI, UCX, NCCL) can use the NIC",
                        c.nicName(k)),
            "sudo modprobe ib_uverbs (rdma-core loads it at boot); then ls /dev/infiniband shows uverbs devices",
            c.gpusNear(k));
    } else if (nic.verbsNodePresent == false) {
      c.add("rdma_verbs_unavailable", Verdict::Degraded,
            fmt::format("{}: its verbs device /dev/infiniband/{} does not exist here, so no program here can use the "
                        "NIC (a container started without the RDMA devices)",
                        c.nicName(k), nic.verbsDevice),
            "pass the devices in: docker run --device=/dev/infiniband --cap-add=IPC_LOCK, or in Kubernetes an RDMA "
            "device plugin (k8s-rdma-shared-dev-plugin)",
            c.gpusNear(k));
    }
  }
}

std::string nicList(const Context& c, const std::vector<int>& nics) {
  std::vector<std::string> names;
  for (int k : nics) names.push_back(c.nicName(k));
  return fmt::format("{}", fmt::join(names, ", "));
}

void checkPaths(const Context& c) {
  std::vector<int> unknown;
  for (const NearestNics& n : c.nearest) {
    if (!n.path) {
      unknown.push_back(n.gpu);
      continue;
    }
    const std::string near = nicList(c, n.nics);
    const char* plural = n.nics.size() > 1 ? "s" : "";
    if (*n.path == PathClass::SYS) {
      c.add("rdma_nic_other_socket", Verdict::Degraded,
            fmt::format("{}: its nearest RDMA NIC{} {} on the other CPU socket (SYS): GPUDirect RDMA would cross the "
                        "inter-socket link, slow and on many platforms not supported for peer traffic, so this "
                        "GPU-NIC pair is poor; NCCL stages such traffic through host memory (it uses GPUDirect RDMA "
                        "up to PXB by default, NCCL_NET_GDR_LEVEL)",
                        c.gpu(n.gpu), plural, near + (n.nics.size() > 1 ? " are" : " is")),
            "give this GPU a NIC on its own socket (a NIC in a slot of that socket; nvidia-smi topo -m shows GPU-NIC "
            "affinity), or run the ranks that talk across machines on the GPUs near a NIC; on NVLink machines NCCL "
            "can relay through a GPU near a NIC (PXN); raising NCCL_NET_GDR_LEVEL to SYS is usually slower",
            {n.gpu});
    } else if (*n.path == PathClass::PHB || *n.path == PathClass::NODE) {
      c.add(
          "rdma_nic_through_cpu", Verdict::Ok,
          fmt::format("{}: its nearest RDMA NIC{} {} reached through the CPU's root complex ({}): GPUDirect RDMA works "
                      "on many platforms at a bandwidth the root complex decides, and NCCL uses it only up to PXB "
                      "by default",
                      c.gpu(n.gpu), plural, near + (n.nics.size() > 1 ? " are" : " is"), pathClassName(*n.path)),
          "nothing required; for full GPUDirect RDMA bandwidth a NIC under the GPU's PCIe switch; "
          "NCCL_NET_GDR_LEVEL=PHB lets NCCL use GPUDirect RDMA on such pairs",
          {n.gpu});
    }
  }
  if (unknown.empty()) return;
  c.add("rdma_nic_path_unknown", Verdict::Ok,
        fmt::format("the PCI paths of GPUs {} or of the NICs are unknown, so their distance to a NIC is unknown",
                    fmt::join(unknown, ", ")),
        "check the paths by hand: readlink -f /sys/bus/pci/devices/<bus id>; nvidia-smi topo -m shows GPU-NIC "
        "affinity",
        unknown);
}

// ACS redirect acts where two devices' paths part below one host bridge (PIX, PXB, PHB): there a port sends
// the NIC's reads and writes of GPU memory up to the root complex instead of across. Paths that part at
// the host bridges (NODE, SYS) go through the root complex whatever ACS says.
void checkAcs(const Context& c) {
  std::vector<std::string> unknownBridges;
  std::set<int> unknownGpus;
  for (const NearestNics& n : c.nearest) {
    if (!n.path || *n.path > PathClass::PHB) continue;
    const std::vector<std::string>& gpuPath = c.topology.gpus[static_cast<std::size_t>(n.gpu)].pciPath;
    for (int k : n.nics) {
      std::vector<std::string> redirecting;
      for (const std::string& busId : divergenceBridges(gpuPath, c.nic(k).pciPath)) {
        const auto bridge = std::find_if(c.snapshot.bridges.begin(), c.snapshot.bridges.end(),
                                         [&](const PlatformSnapshot::Bridge& b) { return b.busId == busId; });
        if (bridge != c.snapshot.bridges.end() && bridge->acsKnown) {
          if (bridge->acsRedirect) redirecting.push_back(busId);
          continue;
        }
        if (std::find(unknownBridges.begin(), unknownBridges.end(), busId) == unknownBridges.end()) {
          unknownBridges.push_back(busId);
        }
        unknownGpus.insert(n.gpu);
      }
      if (redirecting.empty()) continue;
      std::vector<std::string> commands;
      for (const std::string& busId : redirecting)
        commands.push_back(fmt::format("setpci -s {} ECAP_ACS+6.w=0000", busId));
      c.add("rdma_acs_redirect", Verdict::Broken,
            fmt::format("{} <-> {}: PCIe ACS redirect is on at {}, so the NIC's reads and writes of GPU memory go up "
                        "to the root complex and its IOMMU instead of across, where they may be dropped, fault or "
                        "crawl (NVIDIA's GPUDirect RDMA guides ask for ACS off on this path)",
                        c.gpu(n.gpu), c.nicName(k), fmt::join(redirecting, " and ")),
            fmt::format("as root: {} (lost at reboot), or disable ACS in the BIOS, or boot with "
                        "pci=disable_acs_redir={}",
                        fmt::join(commands, "; "), fmt::join(redirecting, ";")),
            {n.gpu});
    }
  }
  if (unknownBridges.empty()) return;
  c.add(
      "rdma_acs_unknown", Verdict::Ok,
      fmt::format("the ACS control of {} could not be read (reading it needs root), so whether ACS redirects GPUDirect "
                  "RDMA between GPUs {} and their nearest NICs is unknown",
                  fmt::join(unknownBridges, ", "), fmt::join(unknownGpus, ", ")),
      "run peerlink doctor as root, or check each by hand: sudo lspci -vvv -s <bus id> | grep -i ACSCtl "
      "(ReqRedir+, CmpltRedir+ or EgressCtrl+ mean redirected)",
      std::vector<int>(unknownGpus.begin(), unknownGpus.end()));
}

void checkGpuAttributes(const Context& c) {
  std::vector<int> unsupported;
  for (int i = 0; i < static_cast<int>(c.snapshot.gpus.size()) && i < c.gpuCount(); ++i) {
    if (c.snapshot.gpus[static_cast<std::size_t>(i)].gpuDirectRdma == false) unsupported.push_back(i);
  }
  if (unsupported.empty()) return;
  c.add("rdma_gpu_unsupported", Verdict::Degraded,
        fmt::format("CUDA says GPUs {} do not support GPUDirect RDMA (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = "
                    "0): nvidia_peermem cannot register their memory (GeForce GPUs, and many vGPU and VM setups)",
                    fmt::join(unsupported, ", ")),
        "use data-center GPUs passed through whole (not vGPU) for GPUDirect RDMA; otherwise nothing to fix: GPU data "
        "crosses machines through host memory",
        unsupported);
}

void checkMemlock(const Context& c) {
  const auto& bytes = c.snapshot.memlockBytes;
  if (!bytes || *bytes >= kMinMemlockBytes || c.snapshot.ipcLockCapability == true) return;
  c.add("rdma_memlock_limit", Verdict::Degraded,
        fmt::format("the locked-memory limit (RLIMIT_MEMLOCK) is {} KiB and this process lacks CAP_IPC_LOCK: RDMA "
                    "registration pins host memory against that limit, so MPI, UCX or NCCL fail to register their "
                    "buffers (ibv_reg_mr: Cannot allocate memory)",
                    *bytes >> 10),
        "ulimit -l unlimited (hard limit in /etc/security/limits.conf: * - memlock unlimited), LimitMEMLOCK=infinity "
        "in a systemd unit, or docker run --ulimit memlock=-1 (or --cap-add=IPC_LOCK)",
        {});
}

std::string mpiWords(const MpiCudaSupport& mpi) {
  if (!mpi.cudaAware) return fmt::format("{}, CUDA awareness unknown ({})", mpi.implementation, mpi.evidence);
  return fmt::format("{}, {} ({}: {})", mpi.implementation, *mpi.cudaAware ? "CUDA-aware" : "not CUDA-aware",
                     mpi.tool.substr(0, mpi.tool.find(' ')), mpi.evidence);
}

// Without an RDMA NIC GPU data crosses machines through host memory whatever the MPI, so an MPI without CUDA
// loses nothing there: a note, not a degradation.
void checkMpi(const Context& c, bool withNic) {
  for (const MpiCudaSupport& mpi : c.snapshot.mpis) {
    if (mpi.cudaAware == false) {
      c.add("mpi_not_cuda_aware", withNic ? Verdict::Degraded : Verdict::Ok,
            fmt::format("{}: it takes no GPU memory (a device pointer given to it crashes or is read as host "
                        "memory), so GPU data must cross machines through host buffers",
                        mpiWords(mpi)),
            "nothing to fix for programs that stage through host memory; for GPUDirect through MPI, an MPI built with "
            "CUDA (Open MPI --with-cuda, with UCX built --with-cuda; MPICH --with-cuda)",
            {});
    } else if (!mpi.cudaAware) {
      c.add("mpi_cuda_unknown", Verdict::Ok,
            fmt::format("{}: its tools do not say whether it takes GPU memory", mpiWords(mpi)),
            "ask at run time: MPIX_Query_cuda_support() after MPI_Init (Open MPI and MPICH both have it)", {});
    }
  }
  if (!c.snapshot.mpis.empty()) return;
  c.add("mpi_not_found", Verdict::Ok,
        fmt::format("no MPI tool ({}) is on PATH, so the MPI's CUDA awareness is unknown",
                    fmt::join(c.snapshot.mpiToolsTried, ", ")),
        "put the MPI's bin folder on PATH (module load, or the MPI's installation), or ask at run time: "
        "MPIX_Query_cuda_support() after MPI_Init",
        {});
}

std::string mpiSummary(const RdmaSnapshot& s) {
  if (s.mpis.empty()) return "no MPI tool on PATH";
  std::vector<std::string> parts;
  for (const MpiCudaSupport& mpi : s.mpis) {
    parts.push_back(!mpi.cudaAware ? mpi.implementation + ", CUDA awareness unknown"
                                   : mpi.implementation + (*mpi.cudaAware ? ", CUDA-aware" : ", not CUDA-aware"));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string noNicSummary(const RdmaSnapshot& s) {
  std::vector<std::string> software;
  for (const RdmaNic& nic : s.nics) {
    software.push_back(nic.parent.empty() ? nic.name : fmt::format("{} over {}", nic.name, nic.parent));
  }
  if (!s.classPresent) return fmt::format("no RDMA NIC ({} does not exist)", s.classDirectory);
  if (software.empty()) return fmt::format("no RDMA NIC ({} is empty)", s.classDirectory);
  return fmt::format("no RDMA NIC with a PCI device (software RDMA only: {}, which cannot reach GPU memory)",
                     fmt::join(software, ", "));
}

std::vector<NearestNics> nearestNics(const Topology& topology, const std::vector<GpuNicPath>& paths) {
  std::vector<NearestNics> nearest;
  for (int i = 0; i < static_cast<int>(topology.gpus.size()); ++i) {
    NearestNics n;
    n.gpu = i;
    for (const GpuNicPath& p : paths) {
      if (p.gpu != i || !p.path) continue;
      if (!n.path || *p.path < *n.path) {
        n.path = p.path;
        n.nics.clear();
      }
      if (*p.path == *n.path) n.nics.push_back(p.nic);
    }
    nearest.push_back(n);
  }
  return nearest;
}

}  // namespace

RdmaReadiness decideRdmaReadiness(const Topology& topology, RdmaSnapshot snapshot) {
  RdmaReadiness r;
  r.snapshot = std::move(snapshot);
  const RdmaSnapshot& s = r.snapshot;
  const std::vector<int> nics = hardwareNics(s);
  r.applicable = !nics.empty();
  for (int i = 0; i < static_cast<int>(topology.gpus.size()); ++i) {
    const Gpu& gpu = topology.gpus[static_cast<std::size_t>(i)];
    for (int k : nics) {
      const RdmaNic& nic = s.nics[static_cast<std::size_t>(k)];
      r.paths.push_back({i, k, classifyPciPath(gpu.pciPath, gpu.numaNode, nic.pciPath, nic.numaNode)});
    }
  }
  r.nearest = nearestNics(topology, r.paths);
  const Context c{topology, s, r.nearest, r.findings};
  if (!r.applicable) {
    c.add("rdma_no_nic", Verdict::Ok,
          fmt::format("{}: GPUDirect RDMA does not apply; across machines GPU data goes through host memory over "
                      "the MPI's own transport",
                      noNicSummary(s)),
          "nothing to do on one machine; for GPUDirect RDMA between machines, an InfiniBand or RoCE NIC (ConnectX) "
          "with its RDMA drivers (rdma-core, or NVIDIA's DOCA-OFED / MLNX_OFED)",
          {});
    checkMpi(c, false);
    r.summary = fmt::format("{}; MPI: {}", noNicSummary(s), mpiSummary(s));
    return r;
  }
  checkPorts(c, nics);
  checkRates(c, nics);
  checkVerbs(c, nics);
  checkPaths(c);
  checkAcs(c);
  MemoryRegistration registration = decideMemoryRegistration(s);
  r.memoryRegistration = registration.usable;
  r.registration = registration.how;
  r.findings.insert(r.findings.end(), registration.findings.begin(), registration.findings.end());
  checkGpuAttributes(c);
  checkMemlock(c);
  checkMpi(c, true);
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& x, const Finding& y) {
    return verdictRank(x.severity) > verdictRank(y.severity);
  });
  for (const Finding& f : r.findings) {
    if (f.severity != Verdict::Unsupported) r.overall = worse(r.overall, f.severity);
  }
  const auto active = std::count_if(nics.begin(), nics.end(), [&](int k) { return hasActivePort(c.nic(k)); });
  std::map<PathClass, int> classes;
  for (const NearestNics& n : r.nearest) {
    if (n.path) ++classes[*n.path];
  }
  std::vector<std::string> near;
  for (const auto& [path, count] : classes) near.push_back(fmt::format("{} {}", count, pathClassName(path)));
  r.summary = fmt::format(
      "{} RDMA NIC{}, {} with an active port; nearest NIC per GPU: {}; GPU memory registration: "
      "{}; MPI: {}",
      nics.size(), nics.size() == 1 ? "" : "s", active,
      near.empty() ? std::string("unknown") : fmt::format("{}", fmt::join(near, ", ")), registration.how,
      mpiSummary(s));
  return r;
}

}  // namespace peerlink
