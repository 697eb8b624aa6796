// The topology a communicator plans with, discovered once per process (discovery_cache.hpp).
#include "topology/discovery_cache.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace peerlink {

Topology discoveredTopology(const Params& params) {
  if (!params.getString("PEERLINK_TOPO_FILE").empty()) return discoverTopology(params);
  static std::mutex mutex;
  static std::map<std::pair<bool, std::string>, Topology> discovered;
  const std::pair<bool, std::string> key{params.getBool("PEERLINK_NVML"), params.getString("PEERLINK_SYSFS_ROOT")};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto found = discovered.find(key);
    if (found != discovered.end()) return found->second;
  }
  Topology topology = discoverTopology(params);  // outside the lock: tens of milliseconds
  const std::lock_guard<std::mutex> lock(mutex);
  discovered.emplace(key, topology);
  return topology;
}

}  // namespace peerlink
