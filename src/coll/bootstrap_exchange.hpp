// The world exchange of ranks in several processes: every local rank's bootstrap takes part in each all-gather
// and barrier at the same time, from a thread each (a bootstrap's collective calls wait for every rank).
#pragma once

#include <vector>

#include "coll/world_exchange.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::coll {

class BootstrapExchange final : public WorldExchange {
 public:
  /// The local ranks' bootstraps, ascending by rank; borrowed.
  explicit BootstrapExchange(std::vector<Bootstrap*> local) : local_(std::move(local)) {}
  std::vector<std::uint8_t> allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                      std::size_t bytes) override;
  void barrier() override;

 private:
  std::vector<Bootstrap*> local_;
};

}  // namespace peerlink::coll
