// The ranks of a `peerlink coll` run (coll_world.hpp).
#include "coll_bench/coll_world.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "coll/node_decisions.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kTextBytes = 256;

template <typename T>
std::vector<T> gatherValues(Bootstrap& job, T mine) {
  const std::vector<std::uint8_t> all = job.allGather(&mine, sizeof mine);
  std::vector<T> values(all.size() / sizeof(T));
  std::memcpy(values.data(), all.data(), values.size() * sizeof(T));
  return values;
}

}  // namespace

CollWorld CollWorld::singleProcess(int ranks) {
  CollWorld world;
  world.size_ = ranks;
  for (int r = 0; r < ranks; ++r) {
    world.local_.push_back(r);
    world.devices_.push_back(r);
  }
  return world;
}

CollWorld CollWorld::launched(std::unique_ptr<Bootstrap> job, int device, const Params& params) {
  if (job == nullptr) throw Error(ErrorCode::Internal, "CollWorld::launched without a bootstrap");
  CollWorld world;
  world.size_ = job->size();
  world.local_ = {job->rank()};
  world.devices_ = {device};
  world.nodes_ = multiNodeGrid(job->peers());
  if (world.nodes_) {
    world.mpi_ = std::make_unique<net::MpiStartup>(
        *job, params,
        fmt::format("peerlink coll across {} nodes x {} ranks", world.nodes_->nodes, world.nodes_->ranksPerNode));
  }
  world.job_ = std::move(job);
  return world;
}

void CollWorld::finishMpi() {
  if (mpi_) mpi_->finish();
}

std::vector<std::uint8_t> CollWorld::fromRankZero(const void* mine, std::size_t bytes) const {
  std::vector<std::uint8_t> own(bytes, 0);
  if (leads() && bytes > 0) std::memcpy(own.data(), mine, bytes);
  if (!job_) return own;
  const std::vector<std::uint8_t> all = job_->allGather(own.data(), bytes);
  return std::vector<std::uint8_t>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(bytes));
}

double CollWorld::slowest(double mine) const {
  if (!job_) return mine;
  const std::vector<double> all = gatherValues(*job_, mine);
  return *std::max_element(all.begin(), all.end());
}

std::int64_t CollWorld::total(std::int64_t mine) const {
  if (!job_) return mine;
  std::int64_t sum = 0;
  for (const std::int64_t value : gatherValues(*job_, mine)) sum += value;
  return sum;
}

std::vector<std::string> CollWorld::gatherText(const std::vector<std::string>& mine) const {
  if (!job_) return mine;
  char own[kTextBytes] = {};
  std::strncpy(own, mine.empty() ? "" : mine.front().c_str(), kTextBytes - 1);
  const std::vector<std::uint8_t> all = job_->allGather(own, kTextBytes);
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < all.size() / kTextBytes; ++r) {
    const char* at = reinterpret_cast<const char*>(all.data() + r * kTextBytes);
    texts.emplace_back(at, strnlen(at, kTextBytes));
  }
  return texts;
}

void CollWorld::barrier() const {
  if (job_) job_->barrier();
}

}  // namespace peerlink::coll
