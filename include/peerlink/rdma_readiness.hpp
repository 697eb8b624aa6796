// GPUDirect RDMA readiness, as plain data: the RDMA NICs of this machine with their links, each GPU's
// nearest NIC and the PCIe path class between them, whether the NICs can register GPU memory
// (nvidia_peermem or DMA-BUF), ACS on the GPU-NIC paths, the MPI's CUDA awareness, and findings with a
// stable code, a summary and a fix (docs/doctor.md, "GPUDirect RDMA"). `peerlink doctor` reports them
// after the pair verdicts; `peerlink doctor --rdma` reports only them.
//
// Facts are read from /sys, /proc, /boot and /dev, whose roots are options, so fake trees under
// tests/fixtures/doctor/ drive the tests; the conclusions are pure functions of those facts. Nothing here
// moves data over a NIC: readiness is what the platform says, not a measurement.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// One port of an RDMA NIC (sysfs class/infiniband/<nic>/ports/<n>).
struct RdmaPort {
  int number = 0;
  std::string state;          ///< "ACTIVE", "DOWN", "INIT", "ARMED" (the text after "4: "); empty: unknown
  std::string physicalState;  ///< "LinkUp", "Polling", "Disabled", ...; empty: unknown
  std::string linkLayer;      ///< "InfiniBand" or "Ethernet" (RoCE); empty: unknown
  std::string rate;           ///< as sysfs writes it, e.g. "400 Gb/sec (4X NDR)"; empty: unknown
  double gbps = 0;            ///< the rate's number (Gb/s); 0: unknown
};

/// A network interface of the NIC's PCI function (sysfs <device>/net/<name>): IPoIB, or RoCE's netdev.
struct RdmaNetdev {
  std::string name;       ///< "ib0", "enp12s0np0"
  std::string operstate;  ///< "up", "down", ...; empty: unknown
  long speedMbps = -1;    ///< sysfs `speed`; -1: unknown (the kernel reports none while the link is down)
};

/// One RDMA device of sysfs class/infiniband.
struct RdmaNic {
  std::string name;                  ///< "mlx5_0"
  std::string pciBusId;              ///< "0000:0c:00.0"; empty for software devices (rxe, siw)
  std::string parent;                ///< a software device's netdev (sysfs `parent`), e.g. "eth0"
  std::vector<std::string> pciPath;  ///< from the host bridge down to the NIC, as Gpu::pciPath; empty: unknown
  int numaNode = -1;                 ///< -1: unknown
  std::vector<RdmaPort> ports;
  std::vector<RdmaNetdev> netdevs;
  /// The user-space verbs device of this NIC: "uverbs0" (sysfs class/infiniband_verbs/*/ibdev names it);
  /// empty when none is listed (ib_uverbs not loaded) or the class could not be read.
  std::string verbsDevice;
  std::optional<bool> verbsNodePresent;  ///< <dev>/infiniband/<verbsDevice> exists; nullopt: not checked
};

/// What one MPI's own tool says about CUDA. peerlink links no MPI, so this comes from the tools an MPI
/// installs (Open MPI's ompi_info, MPICH's mpichversion), run with a deadline; what they do not say is
/// unknown, never guessed.
struct MpiCudaSupport {
  std::string implementation;     ///< "Open MPI 4.1.6", "MPICH 4.2.0"
  std::string tool;               ///< the command that answered, e.g. "ompi_info --parsable --all"
  std::optional<bool> cudaAware;  ///< nullopt: unknown
  std::string evidence;           ///< the line or configure option that decided, or why it is unknown
};

/// CUDA's answer for one GPU (cuDeviceGetAttribute); nullopt where not asked (a topology from a file, no
/// driver) or the call failed.
struct GpuRdmaAttributes {
  std::optional<bool> gpuDirectRdma;  ///< CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED (the nvidia_p2p API)
  std::optional<bool> dmaBuf;         ///< CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
};

/// Everything the readiness checks read. Every field has an unknown state; `unreadable` says what could
/// not be read and how to check it by hand.
struct RdmaSnapshot {
  std::string classDirectory;                   ///< the sysfs class/infiniband directory read
  bool classPresent = false;                    ///< it exists (ib_core loaded)
  std::vector<RdmaNic> nics;                    ///< in name order, software devices included
  std::optional<bool> peermemLoaded;            ///< nvidia_peermem (or Mellanox's older nv_peer_mem) loaded
  std::string peermemModule;                    ///< the module found loaded
  std::string kernelRelease;                    ///< /proc/sys/kernel/osrelease, e.g. "6.8.0-45-generic"; empty: unknown
  std::string kernelConfigFile;                 ///< <boot>/config-<release> when it could be read
  std::optional<bool> configDmaSharedBuffer;    ///< CONFIG_DMA_SHARED_BUFFER is y
  std::optional<bool> configInfinibandUserMem;  ///< CONFIG_INFINIBAND_USER_MEM is y (user memory regions)
  std::string nvidiaDriverVersion;              ///< from /proc/driver/nvidia/version; empty: unknown
  std::optional<bool> nvidiaOpenModules;        ///< the open GPU kernel modules, not the proprietary ones
  std::vector<GpuRdmaAttributes> gpus;          ///< per GPU of the topology, in CUDA order
  /// The bridges where a GPU's and a NIC's PCI paths part below one host bridge (divergenceBridges).
  std::vector<PlatformSnapshot::Bridge> bridges;
  /// Soft RLIMIT_MEMLOCK in bytes from <proc>/self/limits; nullopt: unknown; UINT64_MAX: unlimited.
  std::optional<std::uint64_t> memlockBytes;
  std::optional<bool> ipcLockCapability;   ///< CAP_IPC_LOCK in <proc>/self/status CapEff (lifts the limit)
  std::vector<MpiCudaSupport> mpis;        ///< one per MPI whose tool was found
  std::vector<std::string> mpiToolsTried;  ///< the tools looked for, for "none found"
  std::vector<std::string> unreadable;     ///< "what could not be read: how to check by hand"
};

/// A GPU and an RDMA NIC with the PCIe path class between them (nullopt: a PCI path is unknown).
struct GpuNicPath {
  int gpu = -1;
  int nic = -1;  ///< index into RdmaSnapshot::nics
  std::optional<PathClass> path;
};

/// One GPU's nearest hardware NICs: every NIC at the best path class (ties are listed, in name order).
struct NearestNics {
  int gpu = -1;
  std::vector<int> nics;  ///< indices into RdmaSnapshot::nics; empty when no NIC's path is known
  std::optional<PathClass> path;
};

/// Everything the readiness checks concluded.
struct RdmaReadiness {
  RdmaSnapshot snapshot;
  bool applicable = false;                 ///< at least one RDMA NIC with a PCI device (not software RDMA)
  std::vector<GpuNicPath> paths;           ///< every GPU with every hardware NIC
  std::vector<NearestNics> nearest;        ///< per GPU, in CUDA order
  std::optional<bool> memoryRegistration;  ///< the NICs can register GPU memory (peermem or DMA-BUF)
  std::string registration;                ///< one line: how, or why not, e.g. "nvidia_peermem is loaded"
  std::vector<Finding> findings;           ///< most severe first; `gpus` names the GPUs concerned
  Verdict overall = Verdict::Ok;           ///< the worst finding's severity (Ok when not applicable)
  std::string summary;                     ///< one line for the whole section
};

/// Where to read from and how long the MPI tools may take.
struct RdmaReadinessOptions {
  std::string sysRoot = "/sys";
  std::string procRoot = "/proc";
  std::string bootRoot = "/boot";
  std::string devRoot = "/dev";
  /// A folder holding saved outputs of the MPI tools (ompi_info.txt: `ompi_info --parsable --all`,
  /// mpichversion.txt: `mpichversion`), read instead of running them; a missing file is a tool not found.
  /// Empty: run the tools found on PATH.
  std::string mpiOutputDir;
  std::chrono::milliseconds mpiToolTimeout{10000};  ///< per tool; one that takes longer is killed
  bool queryCuda = true;  ///< ask CUDA about each GPU when the topology was discovered (not from a file)
};

/// The options of a fake machine whose trees sit under `root`: root/sys, root/proc, root/boot, root/dev, and
/// the MPI tools' saved outputs in root/mpi (tests/fixtures/doctor/ holds such machines).
RdmaReadinessOptions rdmaOptionsUnder(const std::string& root);

/// Reads this machine's RDMA facts (options' roots) for `topology`'s GPUs and decides the findings. Never
/// throws for missing or unreadable files: they are unknowns, listed in snapshot.unreadable. On a machine
/// without RDMA NICs the result says so in one line (`summary`) and one finding, rdma_no_nic.
RdmaReadiness checkRdmaReadiness(const Topology& topology, const RdmaReadinessOptions& options = {});

}  // namespace peerlink
