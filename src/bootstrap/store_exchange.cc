// exchangeUniqueId: the id through the application's key-value store (torch's way).
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "bootstrap/identity.hpp"
#include "core/deadline.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink {

UniqueId exchangeUniqueId(int rank, const std::string& key,
                          const std::function<void(const std::string& key, const std::string& value)>& set,
                          const std::function<std::optional<std::string>(const std::string& key)>& get,
                          std::chrono::milliseconds deadline, const Params& params) {
  if (rank < 0) throw Error(ErrorCode::InvalidUsage, fmt::format("exchangeUniqueId: rank {} is negative", rank));
  if (key.empty()) throw Error(ErrorCode::InvalidUsage, "exchangeUniqueId: the key is empty");
  if (!set || !get) throw Error(ErrorCode::InvalidUsage, "exchangeUniqueId: set and get must both be given");
  if (rank == 0) {
    const UniqueId id = makeUniqueId(params);
    set(key, uniqueIdToString(id));
    return id;
  }
  const auto end = deadlineAfter(deadline);
  // Poll quickly at first (rank 0 is usually a moment away), then back off so a slow store is not hammered.
  std::chrono::milliseconds pause{5};
  for (;;) {
    if (const std::optional<std::string> value = get(key)) {
      try {
        return uniqueIdFromString(*value);
      } catch (const Error& error) {
        throw Error(
            ErrorCode::InvalidInput,
            fmt::format("exchangeUniqueId on rank {}: the store's value of '{}' is not a peerlink unique id: {}", rank,
                        key, error.what()));
      }
    }
    const auto left = end - DeadlineClock::now();
    if (left <= DeadlineClock::duration::zero()) {
      throw Error(ErrorCode::Timeout,
                  fmt::format("exchangeUniqueId on rank {}: the store had no key '{}' within {} (has rank 0 started, "
                              "with the same key?)",
                              rank, key, bootstrap::formatSeconds(deadline)));
    }
    std::this_thread::sleep_for(std::min<DeadlineClock::duration>(left, pause));
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

}  // namespace peerlink
