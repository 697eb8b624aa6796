// CpuSet (cpu_set.hpp).
#include "core/cpu_set.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "core/text.hpp"

namespace peerlink {
namespace {

// A whole decimal number no larger than CpuSet::kMaxCpu; nullopt otherwise.
std::optional<int> parseCpuNumber(const std::string& text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > CpuSet::kMaxCpu) return std::nullopt;
  return value;
}

}  // namespace

CpuSet::CpuSet(std::vector<int> cpus) : cpus_(std::move(cpus)) {
  cpus_.erase(std::remove_if(cpus_.begin(), cpus_.end(), [](int cpu) { return cpu < 0; }), cpus_.end());
  std::sort(cpus_.begin(), cpus_.end());
  cpus_.erase(std::unique(cpus_.begin(), cpus_.end()), cpus_.end());
}

std::optional<CpuSet> CpuSet::parse(const std::string& list) {
  std::vector<int> cpus;
  const std::string text = trimSpace(list);
  if (text.empty()) return CpuSet();
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = trimSpace(text.substr(begin, end - begin));
    const std::size_t dash = item.find('-');
    const std::optional<int> first = parseCpuNumber(item.substr(0, dash));
    const std::optional<int> last = dash == std::string::npos ? first : parseCpuNumber(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
    begin = end + 1;
  }
  return CpuSet(std::move(cpus));
}

std::string CpuSet::toList() const {
  std::string list;
  for (std::size_t i = 0; i < cpus_.size();) {
    std::size_t j = i;
    while (j + 1 < cpus_.size() && cpus_[j + 1] == cpus_[j] + 1) ++j;
    if (!list.empty()) list += ',';
    list += j == i ? fmt::format("{}", cpus_[i]) : fmt::format("{}-{}", cpus_[i], cpus_[j]);
    i = j + 1;
  }
  return list;
}

bool CpuSet::contains(int cpu) const {
  return std::binary_search(cpus_.begin(), cpus_.end(), cpu);
}

bool CpuSet::isSubsetOf(const CpuSet& other) const {
  return std::includes(other.cpus_.begin(), other.cpus_.end(), cpus_.begin(), cpus_.end());
}

CpuSet CpuSet::intersect(const CpuSet& other) const {
  std::vector<int> both;
  std::set_intersection(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(), std::back_inserter(both));
  return CpuSet(std::move(both));
}

}  // namespace peerlink
