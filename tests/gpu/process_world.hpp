// Worlds of processes for the soak and failure-injection tests: `n` forked ranks, rank r on GPU r % gpus (sharing
// GPUs through PEERLINK_COLL_SHARE_GPUS when there are fewer GPUs than ranks), rank 0 making each communicator's
// unique id and passing its text to the others through pipes made before the fork. The test process itself
// never touches CUDA (forked_roles.hpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "forked_roles.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/params.hpp"

namespace peerlink::testing {

using Settings = std::vector<std::pair<std::string, std::string>>;

/// Rank 0 -> every other rank: each communicator's id, or "stop". Made before the fork.
class IdChannel {
 public:
  explicit IdChannel(int n) {
    for (int r = 0; r < n; ++r) pipes_.push_back(std::make_unique<Pipe>());
  }
  /// Rank 0 makes an id and sends it on (or "stop" when `stop`); the others receive it. nullopt after a stop.
  std::optional<UniqueId> next(int rank, bool stop = false) {
    if (rank != 0) {
      const std::string line = pipes_[static_cast<std::size_t>(rank)]->receive();
      if (line == "stop") return std::nullopt;
      return uniqueIdFromString(line);
    }
    const std::optional<UniqueId> id = stop ? std::nullopt : std::optional<UniqueId>(makeUniqueId());
    for (std::size_t r = 1; r < pipes_.size(); ++r) pipes_[r]->send(id ? uniqueIdToString(*id) : "stop");
    return id;
  }

 private:
  std::vector<std::unique_ptr<Pipe>> pipes_;
};

inline int deviceOfRank(int rank, int gpus) {
  return rank % gpus;
}

/// The environment's parameters with bounded waits for a world of `n` ranks on `gpus` GPUs, and `settings`.
inline Params worldParams(int n, int gpus, const Settings& settings = {}) {
  Params params = Params::fromEnvironment();
  params.set("PEERLINK_TIMEOUT_MS", "20000");
  params.set("PEERLINK_BOOTSTRAP_TIMEOUT_MS", "30000");
  if (gpus < n) params.set("PEERLINK_COLL_SHARE_GPUS", "1");
  for (const auto& [name, value] : settings) params.set(name, value);
  return params;
}

/// Forks `n` ranks, each running body(rank) and exiting with its result.
inline std::vector<std::unique_ptr<Child>> forkRanks(int n, const std::function<int(int rank)>& body) {
  std::vector<std::unique_ptr<Child>> children;
  for (int rank = 0; rank < n; ++rank) {
    children.push_back(std::make_unique<Child>("rank " + std::to_string(rank), [&, rank] { return body(rank); }));
  }
  return children;
}

inline std::vector<Child*> pointersTo(const std::vector<std::unique_ptr<Child>>& children) {
  std::vector<Child*> raw;
  for (const auto& child : children) raw.push_back(child.get());
  return raw;
}

}  // namespace peerlink::testing
