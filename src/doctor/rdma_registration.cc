// Whether the RDMA NICs can register GPU memory: nvidia_peermem, or DMA-BUF, each requirement checked with
// a reason and a fix of its own.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "doctor/rdma_checks.hpp"
#include "doctor/rdma_snapshot.hpp"

namespace peerlink {
namespace {

// The RDMA core imports DMA-BUF file descriptors as memory regions from Linux 5.12 (ib_umem_dmabuf).
constexpr std::pair<int, int> kDmaBufKernel{5, 12};

struct DmaBuf {
  std::optional<bool> usable;
  std::vector<std::string> against;   // requirements known to fail, each with its reason
  std::vector<std::string> fixes;     // one per failed requirement
  std::vector<std::string> unknowns;  // requirements that could not be checked
  std::vector<std::string> basis;     // what said yes
};

std::string gpuList(const std::vector<int>& gpus) {
  return fmt::format("{}", fmt::join(gpus, ", "));
}

void checkKernel(const RdmaSnapshot& s, DmaBuf& d, bool& kernelYes) {
  const auto version = kernelVersion(s.kernelRelease);
  if (!version) {
    d.unknowns.push_back(s.kernelRelease.empty()
                             ? "the kernel release could not be read"
                             : fmt::format("kernel release '{}' is not a version", s.kernelRelease));
  } else if (*version < kDmaBufKernel) {
    d.against.push_back(
        fmt::format("the kernel is {} and the RDMA core imports DMA-BUF only from Linux 5.12", s.kernelRelease));
    d.fixes.push_back("boot a kernel of 5.12 or later");
  } else {
    kernelYes = true;
    d.basis.push_back(fmt::format("kernel {}", s.kernelRelease));
  }
  for (const auto& [enabled, name] : {std::make_pair(s.configInfinibandUserMem, "CONFIG_INFINIBAND_USER_MEM"),
                                      std::make_pair(s.configDmaSharedBuffer, "CONFIG_DMA_SHARED_BUFFER")}) {
    if (enabled.value_or(true)) continue;
    d.against.push_back(fmt::format("{} is off in {}", name, s.kernelConfigFile));
    d.fixes.push_back(fmt::format("a kernel built with {}=y (distribution kernels are)", name));
  }
}

void checkDriver(const RdmaSnapshot& s, DmaBuf& d, bool& cudaYes) {
  if (s.nvidiaOpenModules == false) {
    d.against.push_back(
        fmt::format("the NVIDIA kernel modules{} are the proprietary ones, and only the open GPU "
                    "kernel modules export GPU memory as DMA-BUF",
                    s.nvidiaDriverVersion.empty() ? "" : " (" + s.nvidiaDriverVersion + ")"));
    d.fixes.push_back(
        "install the open kernel modules of the same driver (the distribution's nvidia-driver-<branch>-"
        "open package, or the .run installer's -m=kernel-open)");
  } else if (s.nvidiaOpenModules == true) {
    d.basis.push_back("the open NVIDIA kernel modules");
  }
  std::vector<int> no;
  std::vector<int> unknown;
  for (int i = 0; i < static_cast<int>(s.gpus.size()); ++i) {
    const auto& dmaBuf = s.gpus[static_cast<std::size_t>(i)].dmaBuf;
    if (!dmaBuf) unknown.push_back(i);
    if (dmaBuf == false) no.push_back(i);
  }
  if (!no.empty()) {
    d.against.push_back(fmt::format(
        "CUDA says GPUs {} do not support DMA-BUF (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0)", gpuList(no)));
    d.fixes.push_back("a driver with the open kernel modules (R515 or later) on a data-center GPU");
  } else if (s.gpus.empty()) {
    d.unknowns.push_back("CUDA was not asked (no GPU)");
  } else if (!unknown.empty()) {
    d.unknowns.push_back(
        fmt::format("CUDA was not asked about GPUs {} (no driver, or a topology from a file)", gpuList(unknown)));
  } else {
    cudaYes = true;
    d.basis.push_back("CUDA says every GPU supports it");
  }
}

DmaBuf decideDmaBuf(const RdmaSnapshot& s) {
  DmaBuf d;
  bool kernelYes = false;
  bool cudaYes = false;
  checkKernel(s, d, kernelYes);
  checkDriver(s, d, cudaYes);
  if (!d.against.empty()) {
    d.usable = false;
  } else if (kernelYes && cudaYes) {
    d.usable = true;
  }
  return d;
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

std::string dmaBufWords(const DmaBuf& d) {
  if (d.usable == true) return fmt::format("DMA-BUF ({})", joined(d.basis, ", "));
  if (d.usable == false) return fmt::format("DMA-BUF cannot replace it: {}", joined(d.against, "; "));
  return fmt::format("whether DMA-BUF can replace it is unknown: {}", joined(d.unknowns, "; "));
}

Finding finding(std::string code, Verdict severity, std::string summary, std::string fix) {
  return Finding{std::move(code), severity, std::move(summary), std::move(fix), {}, ""};
}

}  // namespace

MemoryRegistration decideMemoryRegistration(const RdmaSnapshot& s) {
  MemoryRegistration result;
  const DmaBuf d = decideDmaBuf(s);
  const std::string peermem = s.peermemModule.empty() ? std::string("nvidia_peermem") : s.peermemModule;
  if (s.peermemLoaded == true) {
    result.usable = true;
    result.how = fmt::format("{} is loaded{}", peermem, d.usable == true ? "; DMA-BUF is available too" : "");
    return result;
  }
  if (s.peermemLoaded == false && d.usable == true) {
    result.usable = true;
    result.how = fmt::format("{}; nvidia_peermem is not loaded", dmaBufWords(d));
    result.findings.push_back(finding(
        "rdma_dmabuf_only", Verdict::Ok,
        fmt::format("nvidia_peermem is not loaded; GPU memory registers through {} (NCCL and UCX use it where the "
                    "NIC driver imports DMA-BUF), but programs that know only the nvidia_peermem path (older UCX or "
                    "MPI builds, ibv_reg_mr on a device pointer) get no GPUDirect RDMA",
                    dmaBufWords(d)),
        "nothing to do for DMA-BUF users; for the others, sudo modprobe nvidia-peermem as well"));
    return result;
  }
  if (s.peermemLoaded == false) {
    result.usable = d.usable;  // false, or unknown
    result.how = fmt::format("nvidia_peermem is not loaded; {}", dmaBufWords(d));
    std::string fix =
        "sudo modprobe nvidia-peermem (it ships with the driver since R470 and needs the NIC's RDMA drivers "
        "loaded first; echo nvidia-peermem > /etc/modules-load.d/nvidia-peermem.conf keeps it across reboots)";
    if (!d.fixes.empty()) fix += fmt::format(", or for DMA-BUF: {}", joined(d.fixes, "; "));
    result.findings.push_back(
        finding("rdma_peermem_missing", Verdict::Degraded,
                fmt::format("nvidia_peermem is not loaded and {}: the NICs {} register GPU memory, so GPU data "
                            "crosses machines through host memory",
                            dmaBufWords(d), d.usable == false ? "cannot" : "may not be able to"),
                fix));
    return result;
  }
  // Whether nvidia_peermem is loaded is unknown.
  if (d.usable == true) {
    result.usable = true;
    result.how = fmt::format("{}; whether nvidia_peermem is loaded is unknown", dmaBufWords(d));
    return result;
  }
  result.usable.reset();  // it rests on nvidia_peermem, unknown
  result.how = fmt::format("whether nvidia_peermem is loaded is unknown; {}", dmaBufWords(d));
  result.findings.push_back(finding(
      "rdma_registration_unknown", Verdict::Ok,
      fmt::format("whether the NICs can register GPU memory is unknown: the loaded kernel modules could not be read, "
                  "and {}",
                  dmaBufWords(d)),
      "check by hand: lsmod | grep -E 'nvidia_peermem|nv_peer_mem'; load it with sudo modprobe nvidia-peermem"));
  return result;
}

}  // namespace peerlink
