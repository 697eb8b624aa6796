// The names of the ways through host memory (host_path.hpp).
#include "plan/host_path.hpp"

#include <array>

namespace peerlink::plan {
namespace {

constexpr std::array<const char*, kHostPathCount> kNames = {"host_lines", "host_ring", "host_chain", "plan_kernel",
                                                            "plan_steps"};

}  // namespace

const char* hostPathName(HostPath path) noexcept {
  return kNames[static_cast<std::size_t>(path)];
}

std::optional<HostPath> parseHostPath(const std::string& name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<HostPath>(i);
  }
  return std::nullopt;
}

}  // namespace peerlink::plan
