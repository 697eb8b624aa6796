// Reads the files behind GPUDirect RDMA readiness (RdmaSnapshot) from a real or fake /sys, /proc, /boot and
// /dev: the RDMA NICs of sysfs class/infiniband with their ports, netdevs and PCI paths, the verbs devices,
// the loaded kernel modules, the kernel's release and configuration, the NVIDIA kernel module's flavour,
// the ACS control of the bridges on GPU and NIC paths, and the memlock limit. The MPI tools and CUDA are
// asked elsewhere (mpi_cuda_probe.cc, gpu_rdma_attributes.cc). Never throws for a missing file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "peerlink/rdma_readiness.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// Everything but `gpus` and `mpis`, for `topology`'s GPUs (their PCI paths name the bridges to read).
RdmaSnapshot readRdmaSnapshot(const Topology& topology, const RdmaReadinessOptions& options);

/// "4: ACTIVE" -> "ACTIVE", "5: LinkUp" -> "LinkUp" (sysfs writes an enum as number, colon, name).
std::string sysfsEnumName(const std::string& text);

/// The number of "400 Gb/sec (4X NDR)" or "2.5 Gb/sec (1X SDR)"; 0 when there is none.
double rateGbps(const std::string& rate);

/// (major, minor) of a kernel release such as "6.8.0-45-generic"; nullopt when it does not start so.
std::optional<std::pair<int, int>> kernelVersion(const std::string& release);

/// A kernel configuration's answer for `name` (e.g. "CONFIG_DMA_SHARED_BUFFER"): true for =y or =m, false
/// for "# ... is not set" or absent (an option whose dependencies are off is not written at all).
bool kernelConfigEnabled(const std::string& config, const std::string& name);

/// From /proc/driver/nvidia/version: true for "NVIDIA UNIX Open Kernel Module", false for the proprietary
/// "NVIDIA UNIX <arch> Kernel Module", nullopt for anything else. `version` gets the driver version.
std::optional<bool> nvidiaOpenModules(const std::string& versionText, std::string& version);

/// Whether /proc/modules text lists module `name` (its first column).
bool moduleListed(const std::string& procModules, const std::string& name);

/// The soft "Max locked memory" of /proc/<pid>/limits in bytes, UINT64_MAX for unlimited; nullopt when absent.
std::optional<std::uint64_t> memlockFromLimits(const std::string& limits);

/// Whether capability `bit` is in the CapEff mask of /proc/<pid>/status; nullopt when there is no CapEff.
std::optional<bool> effectiveCapability(const std::string& status, int bit);

}  // namespace peerlink
