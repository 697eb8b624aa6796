// NVML loaded at run time. peerlink declares the few NVML types and functions it uses itself (this
// toolchain has no nvml.h) and opens libnvidia-ml.so.1 with dlopen, so peerlink runs where NVML is
// missing and says what it could not learn.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace peerlink {

/// One NVLink of a GPU as NVML reports it.
struct NvmlLink {
  int index = 0;
  bool active = false;
  int version = 0;              ///< NVLink generation; 0 unknown
  std::string remoteBusId;      ///< normalized bus id of the device at the other end; empty unknown
  bool remoteIsSwitch = false;  ///< the other end is an NVSwitch
  bool remoteIsGpu = false;     ///< the other end is a GPU
};

/// One GPU as NVML reports it.
struct NvmlDeviceInfo {
  int index = -1;
  std::string uuid;
  std::string pciBusId;  ///< normalized "dddd:bb:dd.f"
  std::string name;
  std::vector<NvmlLink> links;        ///< every link NVML answered for; empty without NVLink
  double linkRateGBps = 0;            ///< per link, per direction, from NVML's speed field; 0 unknown
  int migMode = -1;                   ///< current MIG mode: 1 enabled, 0 disabled, -1 unknown or not a MIG GPU
  std::uint64_t bar1Bytes = 0;        ///< BAR1 aperture (what peers can map over PCIe); 0 unknown
  std::vector<std::string> problems;  ///< NVML queries that failed, one line each
  /// The first query about the GPU's NVLinks that failed ("" when every one answered): `links` is then
  /// incomplete, and what is counted from it a lower bound.
  std::string linkFailure;
};

/// A loaded and initialized NVML. Create with Nvml::load(), or share the process's (Nvml::process()); shut down
/// and unloaded on destruction.
class Nvml {
 public:
  /// Loads libnvidia-ml.so.1 (or `libraryPath` when given) and calls nvmlInit. Returns nullptr and sets
  /// `whyNot` to one line when the library is absent or does not initialize; never throws for that.
  static std::unique_ptr<Nvml> load(std::string* whyNot, const std::string& libraryPath = "");
  /// This process's NVML: loaded by the first call that succeeds and kept until the process exits (a forked
  /// child loads its own). nullptr with `whyNot` set when it does not load; the next call tries again. Each load,
  /// nvmlInit, nvmlShutdown and unload leaves an eventfd open in the process (driver 580.159.04: 300 doctor
  /// probes, 300 eventfds), so code that asks NVML again and again asks this one.
  static const Nvml* process(std::string* whyNot);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// "580.159.04"; throws Error(NvmlError) naming the call when NVML fails.
  std::string driverVersion() const;
  /// Every GPU NVML sees, in NVML order, with its NVLinks; per-query failures land in `problems`.
  /// Throws Error(NvmlError) only when NVML cannot count its GPUs.
  std::vector<NvmlDeviceInfo> devices() const;
  /// Optional NVML functions this libnvidia-ml lacks (an older driver), one line each.
  const std::vector<std::string>& problems() const;

  struct Api;  // function pointers, defined in nvml.cc

 private:
  Nvml(void* handle, std::unique_ptr<Api> api);
  void* handle_;
  std::unique_ptr<Api> api_;
};

}  // namespace peerlink
