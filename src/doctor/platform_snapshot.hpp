// Reads the platform facts the doctor's checks need (PlatformSnapshot) from /sys, /proc and /dev, or from
// fake trees under tests/fixtures/doctor/. Never throws for a missing or unreadable file: what could not
// be read goes to PlatformSnapshot::unreadable with the command that checks it by hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// Where the system's trees are, and the two facts that do not come from files (tests set them).
struct PlatformRoots {
  std::string sys = "/sys";
  std::string proc = "/proc";
  std::string dev = "/dev";
  std::optional<long> openFileLimitOverride;              ///< instead of getrlimit(RLIMIT_NOFILE)
  std::optional<std::int64_t> devShmBytesOverride;        ///< instead of statvfs(<dev>/shm)
  std::optional<std::int64_t> addressSpaceLimitOverride;  ///< instead of getrlimit(RLIMIT_AS); -1 for none
};

/// Everything PlatformSnapshot holds, for the topology's GPUs and the bridges on their PCI paths (from
/// Gpu::pciPath, or read from sysfs when that is empty).
PlatformSnapshot readPlatformSnapshot(const Topology& topology, const PlatformRoots& roots = {});

/// One bridge's vendor and ACS control from <roots.sys>/bus/pci/devices/<busId>; what cannot be read goes to
/// snapshot.unreadable. The GPUDirect RDMA checks read the bridges on NIC paths with it too.
PlatformSnapshot::Bridge readBridge(const PlatformRoots& roots, const std::string& busId, PlatformSnapshot& snapshot);

/// What this process has left, into the snapshot (process_resources.cc): descriptors open (<proc>/self/fd),
/// the address-space limit, MemAvailable (<proc>/meminfo), the cgroup's memory headroom (<proc>/self/cgroup,
/// <sys>/fs/cgroup), and the NVIDIA device files (<dev>/nvidiactl, nvidia-uvm, every nvidia<N> present) that
/// cannot be opened. Part of readPlatformSnapshot; needs no topology (CUDA may not have started).
void readProcessResources(const PlatformRoots& roots, PlatformSnapshot& snapshot);

// ACS Control register bits (PCIe Base Specification, ACS Extended Capability, Control at offset 6).
constexpr std::uint16_t kAcsSourceValidation = 0x0001;
constexpr std::uint16_t kAcsTranslationBlocking = 0x0002;
constexpr std::uint16_t kAcsP2pRequestRedirect = 0x0004;
constexpr std::uint16_t kAcsP2pCompletionRedirect = 0x0008;
constexpr std::uint16_t kAcsUpstreamForwarding = 0x0010;
constexpr std::uint16_t kAcsP2pEgressControl = 0x0020;
constexpr std::uint16_t kAcsDirectTranslatedP2p = 0x0040;

/// True when the control register sends peer traffic upstream instead of straight to the peer: P2P
/// Request Redirect, P2P Completion Redirect or P2P Egress Control (the bits pci=disable_acs_redir clears).
bool acsRedirects(std::uint16_t control) noexcept;

/// What walking the PCIe extended capability list of a config-space image found.
struct AcsReading {
  enum class Status {
    Found,         ///< an ACS capability; `control` holds its Control register
    NoCapability,  ///< the list has no ACS capability: the bridge cannot redirect
    Short,         ///< the image ends before the extended space (64 bytes without root, 256 without ECAM)
    Malformed,     ///< a pointer outside the extended space, or a loop
  };
  Status status = Status::Short;
  std::uint16_t control = 0;
  std::size_t bytes = 0;  ///< size of the image
};

/// Walks the extended capabilities from offset 0x100 (32-bit headers: ID in bits 15:0, version 19:16,
/// next offset 31:20) looking for ACS (ID 0x000D). `config` is the raw bytes of a sysfs `config` file.
AcsReading findAcsControl(const std::string& config);

/// The hypervisor that DMI's sys_vendor / product_name name ("QEMU", "Amazon EC2", ...); nullopt for
/// physical machines and unknown strings.
std::optional<std::string> hypervisorFromDmi(const std::string& sysVendor, const std::string& productName);

/// "PLX/Broadcom", "AMD", "Intel", ... for a PCI vendor id such as "0x10b5"; the id itself when unknown.
std::string pciVendorName(const std::string& vendorId);

}  // namespace peerlink
