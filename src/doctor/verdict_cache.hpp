// The doctor's on-disk cache of pair verdicts, so that a framework calling verifyPeers() at every start-up
// pays for the functional probe once per boot.
//
// An entry is valid only for the exact conditions it was measured under: the boot (boot id), the driver,
// the kernel command line (IOMMU and ACS overrides live there), the two GPUs (bus id and UUID), the
// peerlink build and the caller's probe options. Anything else -- a missing, corrupt, foreign-version,
// foreign-owner or mismatching file -- is a miss, never an error: the cache only saves time. Everything is
// cached, BROKEN included (a broken pair rarely heals within a boot, and failing fast at start-up is the
// point); changes that need no reboot (setpci on ACS, a module reload) are why callers offer --no-cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "doctor/doctor_verdict.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// What an entry was measured under; an entry is used only when every field matches.
struct VerdictCacheKey {
  std::string bootId;             ///< /proc/sys/kernel/random/boot_id
  std::string driverVersion;      ///< Topology::driverVersion
  std::string kernelCommandLine;  ///< /proc/cmdline
  std::string srcBusId;
  std::string dstBusId;
  std::string srcUuid;
  std::string dstUuid;
  std::string peerlinkVersion;  ///< kVersion and kGitCommit: other rules, other verdicts
  std::string options;          ///< what else shaped the verdict (probe set, thresholds), in the caller's words

  /// Has what an entry needs: boot id, driver version and both bus ids. Without them nothing is cached.
  bool usable() const;
};

/// The key of pair src -> dst of `topology` under this boot, built with this peerlink.
VerdictCacheKey makeVerdictCacheKey(const Topology& topology, int src, int dst, const std::string& bootId,
                                    const std::string& kernelCommandLine, const std::string& options);

/// This boot's id from `procRoot`/sys/kernel/random/boot_id, trimmed; empty when unreadable.
std::string readBootId(const std::string& procRoot = "/proc");

/// The kernel command line from `procRoot`/cmdline (its first line, trimmed), as keys hold it; empty when unreadable.
std::string readKernelCommandLine(const std::string& procRoot = "/proc");

/// $XDG_CACHE_HOME/peerlink, else $HOME/.cache/peerlink (only absolute paths count); empty when neither.
std::string defaultVerdictCacheDirectory();

/// One cached pair. `decision.verdict.src/dst` and findings' gpus are this process's CUDA ordinals; on disk
/// GPUs are bus ids, so an entry survives a different CUDA_VISIBLE_DEVICES.
struct CachedVerdict {
  PairDecision decision;
  std::int64_t storedAt = 0;  ///< Unix seconds
};

class VerdictCache {
 public:
  /// Entries live in `directory` (created on the first store, mode 0700), one file per pair and host.
  explicit VerdictCache(std::string directory);

  /// The entry for `key` translated to `topology`'s ordinals; nullopt on any miss (see the file comment).
  std::optional<CachedVerdict> load(const VerdictCacheKey& key, const Topology& topology) const;
  /// The same, whatever probe options the entry was measured with (`key.options` is not compared): for callers
  /// that probe nothing and take the last verdict of this boot (placement).
  std::optional<CachedVerdict> loadAnyOptions(const VerdictCacheKey& key, const Topology& topology) const;

  /// Writes the entry through a temporary file and a rename, so readers never see half a file. Returns
  /// false (nothing written) when the key is not usable or the folder cannot be written; never throws.
  bool store(const VerdictCacheKey& key, const Topology& topology, const PairDecision& decision) const;

  /// The file an entry for `key` lives in.
  std::string pathFor(const VerdictCacheKey& key) const;

  const std::string& directory() const { return directory_; }

 private:
  std::optional<CachedVerdict> loadMatching(const VerdictCacheKey& key, const Topology& topology,
                                            bool matchOptions) const;

  std::string directory_;
  std::string host_;
};

}  // namespace peerlink
