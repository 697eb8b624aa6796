// The world exchange over bootstraps (bootstrap_exchange.hpp).
#include "coll/bootstrap_exchange.hpp"

#include "core/parallel_each.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

std::vector<std::uint8_t> BootstrapExchange::allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                                       std::size_t bytes) {
  if (localBlobs.size() != local_.size()) throw Error(ErrorCode::Internal, "BootstrapExchange: a blob per rank");
  std::vector<std::vector<std::uint8_t>> results(local_.size());
  forEachInParallel(
      local_.size(),
      [&](std::size_t i) {
        if (localBlobs[i].size() != bytes)
          throw Error(ErrorCode::Internal, "BootstrapExchange: a blob of another size");
        results[i] = local_[i]->allGather(localBlobs[i].data(), bytes);
      },
      FirstItem::CallingThread);
  return results.front();
}

void BootstrapExchange::barrier() {
  forEachInParallel(
      local_.size(), [&](std::size_t i) { local_[i]->barrier(); }, FirstItem::CallingThread);
}

}  // namespace peerlink::coll
