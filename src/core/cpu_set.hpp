// A set of CPUs and its text form, the Linux CPU list ("0-23,48-71") that sysfs (local_cpulist,
// /sys/devices/system/cpu/online), taskset -c and numactl --physcpubind use.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace peerlink {

/// CPU numbers, ascending, each once.
class CpuSet {
 public:
  CpuSet() = default;
  /// From any CPU numbers (negative ones dropped); sorts and removes repeats.
  explicit CpuSet(std::vector<int> cpus);

  /// Parses a CPU list: comma-separated numbers and ranges "a-b" (a <= b), white space around items allowed,
  /// as the kernel writes them; the empty list is the empty set. nullopt when malformed (a stray character,
  /// a reversed range, a number beyond kMaxCpu).
  static std::optional<CpuSet> parse(const std::string& list);

  /// The list with runs written as ranges: "0-23,48-71"; "" for the empty set.
  std::string toList() const;

  const std::vector<int>& cpus() const { return cpus_; }
  bool empty() const { return cpus_.empty(); }
  std::size_t size() const { return cpus_.size(); }
  bool contains(int cpu) const;
  /// Every CPU of this set is in `other`.
  bool isSubsetOf(const CpuSet& other) const;
  CpuSet intersect(const CpuSet& other) const;

  bool operator==(const CpuSet& other) const { return cpus_ == other.cpus_; }
  bool operator!=(const CpuSet& other) const { return cpus_ != other.cpus_; }

  /// The largest CPU number a list may name (Linux's NR_CPUS is at most 8192).
  static constexpr int kMaxCpu = 65535;

 private:
  std::vector<int> cpus_;
};

}  // namespace peerlink
