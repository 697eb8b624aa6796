// peerlink doctor: a functional verdict for every directed GPU pair, with the cause and the fix.
//
// Three kinds of input, all plain data: the topology, platform facts read from /sys and /proc (a
// PlatformSnapshot, readable from fixture trees), and functional probe results (what really happened when
// bytes were moved). Verdicts are pure functions of them (doctor_verdict.cc), so every verdict is tested
// on CPU from fixtures; only the probe itself needs GPUs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// How a directed pair (or the platform) fares, best first.
enum class Verdict {
  Ok,           ///< works and performs as the links promise
  Degraded,     ///< works, but slower than it should or with a caveat
  Broken,       ///< wrong data, a hang caught by a deadline, or P2P promised but not working
  Unsupported,  ///< the platform does not offer it (no P2P on this pair); not an error
};
const char* verdictName(Verdict verdict) noexcept;  ///< "OK", "DEGRADED", "BROKEN", "UNSUPPORTED"

/// The worse of two verdicts (Broken > Degraded > Unsupported > Ok).
Verdict worse(Verdict a, Verdict b) noexcept;

/// One thing the doctor found: a stable reason code, what it means in plain words, and the fix.
struct Finding {
  std::string code;  ///< stable snake_case, e.g. "acs_redirect", "iommu_translated", "link_trained_down"
  Verdict severity = Verdict::Ok;
  std::string summary;    ///< one line for people: what is wrong, naming devices/bus ids
  std::string fix;        ///< one line: what to do about it
  std::vector<int> gpus;  ///< CUDA ordinals concerned; empty for the whole platform
  /// The code of the finding that explains this one: a shortage of this process (file descriptors, memory, GPU
  /// device files) that made a reading fail. Reports put a cause first and its consequences under it. Empty
  /// when the finding stands on its own.
  std::string cause;
};

/// Platform facts read from the system. Every field has an "unknown" state; `unreadable` says what could
/// not be read and how to check it by hand (e.g. ACS control needs root).
struct PlatformSnapshot {
  std::string kernelCommandLine;             ///< /proc/cmdline
  std::optional<std::string> iommuMode;      ///< "DMA", "DMA-FQ", "identity", "passthrough", ... from iommu_group type
  std::vector<std::string> iommuGroupTypes;  ///< per GPU, in CUDA order; empty string: unknown
  bool hypervisor = false;                   ///< /proc/cpuinfo "hypervisor" flag or DMI says a VM
  std::string hypervisorVendor;              ///< e.g. "KVM", "Firecracker"; empty when unknown
  struct Bridge {
    std::string busId;
    bool acsKnown = false;     ///< the ACS control register could be read
    bool acsRedirect = false;  ///< P2P request/completion redirect or egress control enabled
    std::string vendor;        ///< PCI vendor id, e.g. "0x10b5" (PLX/Broadcom), "0x1022" (AMD)
    std::string unreadable;    ///< why the ACS control is unknown, when it is
  };
  std::vector<Bridge> bridges;        ///< every bridge on any GPU's PCI path
  long openFileLimit = -1;            ///< RLIMIT_NOFILE soft limit; -1 unknown
  bool pidNamespaceIsolated = false;  ///< this process's PID namespace differs from init's
  bool ipcNamespaceIsolated = false;
  std::int64_t devShmBytes = -1;        ///< size of /dev/shm; -1 unknown
  int ptraceScope = -1;                 ///< /proc/sys/kernel/yama/ptrace_scope; -1 unknown
  std::vector<std::string> unreadable;  ///< "what could not be read: how to check by hand"
  /// Of those, the readings that failed because of this process (no descriptor, no memory, no permission), not
  /// because the file is absent: "what: cannot read <path>: <why>".
  std::vector<std::string> failed;
  // What this process has left: a shortage makes readings fail, and a failed reading is no fact about the
  // hardware (the doctor names the shortage as the cause, docs/doctor.md).
  long openFiles = -1;                      ///< descriptors this process holds (/proc/self/fd); -1 unknown
  std::int64_t addressSpaceLimit = -1;      ///< RLIMIT_AS soft limit, bytes; -1 none or unknown
  std::int64_t memAvailableBytes = -1;      ///< /proc/meminfo MemAvailable; -1 unknown
  std::int64_t cgroupMemoryFreeBytes = -1;  ///< the cgroup's memory.max minus memory.current; -1 no limit
  std::vector<std::string> gpuDeviceFiles;  ///< NVIDIA device files this process cannot open: "path: why"
};

/// What the functional probe saw for one directed pair and one method.
struct ProbeResult {
  int src = -1;
  int dst = -1;
  std::string method;     ///< "ce_write", "ce_read", "sm_write", "sm_read", "ipc", "cumem", "flag_handshake"
  bool ran = false;       ///< false: could not run (see error); a probe that did not run is never OK
  bool timedOut = false;  ///< a deadline passed (dropped write, hang)
  std::uint64_t wrongBytes = 0;
  std::uint64_t lostBytes = 0;  ///< of the wrong bytes, how many never landed: still the poison, or read as 0x00/0xFF
  double gbps = 0;              ///< measured, when it ran
  std::string error;            ///< what failed, when it did
  /// When it could not run for a known cause: "peer_hidden" (the second process cannot see the GPU),
  /// "open_file_limit" (no file descriptor left for the cuMem handle or socket); empty otherwise.
  std::string errorCause;
  double seconds = 0;  ///< how long the probe took (data check and timing)
};

/// The verdict of one directed pair, with the findings that decided it.
struct PairVerdict {
  int src = -1;
  int dst = -1;
  Verdict verdict = Verdict::Unsupported;
  std::vector<std::string> reasons;  ///< finding codes, most severe first
};

/// Everything a doctor run concluded.
struct DoctorReport {
  std::vector<PairVerdict> pairs;  ///< every directed pair
  std::vector<Finding> findings;   ///< platform and per-pair findings, most severe first
  Verdict overall = Verdict::Ok;   ///< the worst pair verdict (Unsupported pairs do not make it worse than OK)
};

/// How verifyPeers probes.
struct VerifyOptions {
  /// Capabilities and the functional probe only: no platform checks, no bandwidth, 1 MiB per method.
  bool quick = false;
  std::chrono::milliseconds timeout{2000};  ///< bound of every wait of the probe (a dropped flag costs this)
  std::size_t probeBytes = 0;               ///< per method and pair; 0: 32 MiB, or 1 MiB when quick
  /// An executable whose hidden `_share-export` command can own memory in a second process: the peerlink
  /// CLI. Empty: the cross-process methods (ipc, cumem) are not probed, the verdicts say so, and they do
  /// not count against OK.
  std::string helperExecutable;
  /// CUDA_VISIBLE_DEVICES of that second process; unset: inherited.
  std::optional<std::string> helperVisibleDevices;
  /// Progress lines (for a terminal); may be empty.
  std::function<void(const std::string&)> progress;
};

/// What verifyPeers concluded, with what it was based on.
struct VerifyResult {
  Topology topology;
  DoctorReport report;
  std::vector<ProbeResult> probes;  ///< this run's probes (none for pairs answered from the cache)
  int cachedPairs = 0;              ///< pairs whose verdict came from the cache
  std::string cacheDirectory;       ///< where the cache is; empty when it is off or has no home
  double seconds = 0;               ///< wall time of the whole call
};

/// The doctor's verdicts the cache holds for a topology's pairs, as a caller that probes nothing finds them.
struct CachedVerdicts {
  std::vector<PairVerdict> pairs;  ///< the directed pairs found (others have no verdict)
  std::string directory;           ///< the cache folder read; empty when none could be
  std::string absence;             ///< when `pairs` is empty: why (the cache is off, has no folder, holds none)
};

/// The last verdicts `peerlink doctor` (or verifyPeers) cached for `topology`'s directed pairs under this boot,
/// driver and kernel command line, whatever its probe options were (quick or full). Reads only: never probes,
/// never throws for a cache that is missing, unreadable or foreign (a miss). PEERLINK_DOCTOR_CACHE=off reads
/// nothing. A topology file of another machine finds nothing: entries name the GPUs by bus id and UUID.
CachedVerdicts readCachedVerdicts(const Topology& topology, const Params& params = Params::fromEnvironment());

/// A functional verdict for every directed pair of `devices` (CUDA ordinals; empty: every GPU), with the
/// platform findings that explain it (docs/doctor.md, docs/doctor-verdicts.md). Verdicts are cached on disk
/// per boot, driver, kernel command line and pair (PEERLINK_DOCTOR_CACHE, PEERLINK_DOCTOR_CACHE_DIR), so a
/// second call is near-instant. Fails closed: a probe that could not run is never OK. Throws Error for bad
/// input (a device out of range or repeated) and when no GPU can be used at all.
VerifyResult verifyPeers(const std::vector<int>& devices = {}, const VerifyOptions& options = {},
                         const Params& params = Params::fromEnvironment());

}  // namespace peerlink
