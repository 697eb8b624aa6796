// The world exchange over bootstraps (bootstrap_exchange.hpp).
#include "coll/bootstrap_exchange.hpp"

#include <exception>
#include <thread>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// body(i) for every local bootstrap at once (the first on this thread); rethrows the first error by index.
template <typename Body>
void everyLocalRank(std::size_t count, Body&& body) {
  std::vector<std::exception_ptr> errors(count);
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < count; ++i) {
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  try {
    body(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace

std::vector<std::uint8_t> BootstrapExchange::allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                                       std::size_t bytes) {
  if (localBlobs.size() != local_.size()) throw Error(ErrorCode::Internal, "BootstrapExchange: a blob per rank");
  std::vector<std::vector<std::uint8_t>> results(local_.size());
  everyLocalRank(local_.size(), [&](std::size_t i) {
    if (localBlobs[i].size() != bytes) throw Error(ErrorCode::Internal, "BootstrapExchange: a blob of another size");
    results[i] = local_[i]->allGather(localBlobs[i].data(), bytes);
  });
  return results.front();
}

void BootstrapExchange::barrier() {
  everyLocalRank(local_.size(), [&](std::size_t i) { local_[i]->barrier(); });
}

}  // namespace peerlink::coll
