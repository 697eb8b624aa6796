// How the processes of a communicator's world meet at creation: every rank's blob to every rank, and a
// barrier. One process driving every rank meets no one (LocalExchange); ranks in several processes meet
// through their bootstraps (bootstrap_exchange.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "peerlink/error.hpp"

namespace peerlink::coll {

/// WorldExchange::allGather as a function: what the code that holds no exchange of its own is given.
using WorldAllGather = std::function<std::vector<std::uint8_t>(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                                               std::size_t bytes)>;

class WorldExchange {
 public:
  virtual ~WorldExchange() = default;
  /// Every rank's `bytes` bytes, rank after rank, given this process's local ranks' own (localBlobs[i] from
  /// the i-th local rank in ascending order; each `bytes` long).
  virtual std::vector<std::uint8_t> allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                              std::size_t bytes) = 0;
  /// Returns once every rank of the world has called it.
  virtual void barrier() = 0;
};

/// Every rank in this process: the world is the local blobs.
class LocalExchange final : public WorldExchange {
 public:
  std::vector<std::uint8_t> allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                      std::size_t bytes) override {
    std::vector<std::uint8_t> all;
    all.reserve(localBlobs.size() * bytes);
    for (const auto& blob : localBlobs) {
      if (blob.size() != bytes) throw Error(ErrorCode::Internal, "LocalExchange: a blob of another size");
      all.insert(all.end(), blob.begin(), blob.end());
    }
    return all;
  }
  void barrier() override {}
};

}  // namespace peerlink::coll
