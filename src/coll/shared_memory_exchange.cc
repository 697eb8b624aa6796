// The all-gather through shared memory (shared_memory_exchange.hpp).
#include "coll/shared_memory_exchange.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/log.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

using Clock = std::chrono::steady_clock;

// A blob's slot: the stamp (the exchange that wrote it; 0 in a new segment), the blob's size, the blob.
struct alignas(64) Slot {
  std::uint64_t stamp;
  std::uint64_t bytes;
  std::uint8_t blob[SharedMemoryExchange::kMaxBytes];
};

// A word alone on its cache line, so that writing one does not disturb readers of its neighbours.
struct alignas(64) Word {
  std::uint64_t value;
};

// Every rank's segment. `decisions` are used in rank 0's only: per slot, 2n + 1 where exchange n succeeded, 2n
// where it was left early; anything smaller is an older exchange's (or none).
struct Segment {
  Word finished;  ///< the last exchange the rank has finished with (read every slot it needed)
  Word decisions[SharedMemoryExchange::kRing];
  Slot slots[SharedMemoryExchange::kRing];
};

std::uint64_t load(const std::uint64_t& word) {
  return __atomic_load_n(&word, __ATOMIC_ACQUIRE);
}

void store(std::uint64_t& word, std::uint64_t value) {
  __atomic_store_n(&word, value, __ATOMIC_RELEASE);
}

// Tells the core it is spinning (another hardware thread of it runs meanwhile).
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The pause between two looks at the other ranks' words: a spin first (they are usually microseconds away), then
// the core yielded, then sleeps; `checkAlive` every millisecond, and Error(Timeout) with `late()`'s text once
// `timeout` has passed since `start`.
class Wait {
 public:
  Wait(Clock::time_point start, std::chrono::nanoseconds timeout, const std::function<void()>& checkAlive)
      : start_(start), timeout_(timeout), checkAlive_(checkAlive), nextCheck_(start + kCheckEvery) {}

  template <typename Late>
  void pause(Clock::time_point now, const Late& late) {
    if (now >= nextCheck_) {
      nextCheck_ = now + kCheckEvery;
      checkAlive_();
      if (now - start_ > timeout_) {
        throw Error(ErrorCode::Timeout, fmt::format("the exchange of a call through shared memory timed out after "
                                                    "{:.3f} s: {}",
                                                    std::chrono::duration<double>(timeout_).count(), late()));
      }
    }
    if (now - start_ < kSpin) {
      relax();
    } else if (now - start_ < kYield) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

 private:
  static constexpr auto kSpin = std::chrono::microseconds(100);
  static constexpr auto kYield = std::chrono::milliseconds(5);
  static constexpr auto kCheckEvery = std::chrono::milliseconds(1);
  Clock::time_point start_;
  std::chrono::nanoseconds timeout_;
  const std::function<void()>& checkAlive_;
  Clock::time_point nextCheck_;
};

Segment& segmentOf(const std::vector<HostSegment>& segments, int rank) {
  return *static_cast<Segment*>(segments[static_cast<std::size_t>(rank)].base);
}

}  // namespace

SharedMemoryExchange::SharedMemoryExchange(const World& world, const WorldAllGather& sockets)
    : localRanks_(world.localRanks), segments_(mapHostSegments(world, sockets, sizeof(Segment), "exchange")) {}

SharedMemoryExchange::~SharedMemoryExchange() {
  unmapHostSegments(segments_);
  if (count_ == 0) return;
  try {
    logInfo(LogSubsys::Coll,
            "calls' exchanges through shared memory: {} ({} left early, some rank later than the patience), waiting "
            "{:.3f} ms in all for the other ranks (longest {:.3f} ms)",
            count_, leftEarly_, std::chrono::duration<double, std::milli>(waited_).count(),
            std::chrono::duration<double, std::milli>(longest_).count());
  } catch (...) {  // a log line is not worth an exception out of a destructor
  }
}

void SharedMemoryExchange::fail(Error error) {
  failed_ = true;
  throw std::move(error);
}

std::uint64_t SharedMemoryExchange::begin(const std::vector<std::vector<std::uint8_t>>& localBlobs, std::size_t bytes,
                                          std::chrono::nanoseconds timeout, const std::function<void()>& checkAlive) {
  if (bytes > kMaxBytes || localBlobs.size() != localRanks_.size()) {
    throw Error(ErrorCode::Internal, fmt::format("SharedMemoryExchange: {} blobs of {} bytes (at most {}), for {} "
                                                 "local ranks",
                                                 localBlobs.size(), bytes, kMaxBytes, localRanks_.size()));
  }
  for (const auto& blob : localBlobs) {
    if (blob.size() != bytes) throw Error(ErrorCode::Internal, "SharedMemoryExchange: a blob of another size");
  }
  if (failed_) {
    throw Error(ErrorCode::RemoteError,
                "the exchange through shared memory failed before: the processes no longer meet at the same call");
  }
  const std::uint64_t count = ++count_;
  const int nranks = static_cast<int>(segments_.size());
  if (count > kRing) {
    // Room: every rank is done with the exchange that last used this slot.
    const std::uint64_t needed = count - kRing;
    const auto start = Clock::now();
    Wait wait(start, timeout, checkAlive);
    for (;;) {
      std::vector<int> behind;
      for (int r = 0; r < nranks; ++r) {
        if (load(segmentOf(segments_, r).finished.value) < needed) behind.push_back(r);
      }
      if (behind.empty()) break;
      try {
        wait.pause(Clock::now(), [&] {
          return fmt::format(
              "rank(s) {} are {} calls behind this one (they have not made the same calls, or are "
              "stuck)",
              fmt::join(behind, ", "), kRing);
        });
      } catch (Error& error) {
        fail(std::move(error));
      }
    }
  }
  for (std::size_t i = 0; i < localRanks_.size(); ++i) {
    Slot& slot = segmentOf(segments_, localRanks_[i]).slots[count % kRing];
    std::memcpy(slot.blob, localBlobs[i].data(), bytes);
    slot.bytes = bytes;
    store(slot.stamp, count);
  }
  return count;
}

std::vector<std::uint8_t> SharedMemoryExchange::gather(std::uint64_t count, std::size_t bytes) {
  std::vector<std::uint8_t> all(segments_.size() * bytes);
  for (int r = 0; r < static_cast<int>(segments_.size()); ++r) {
    const Slot& slot = segmentOf(segments_, r).slots[count % kRing];
    if (load(slot.stamp) != count) {
      fail(Error(ErrorCode::Internal, fmt::format("SharedMemoryExchange: rank {}'s slot holds exchange {}, not {}", r,
                                                  load(slot.stamp), count)));
    }
    if (slot.bytes != bytes) {
      fail(Error(ErrorCode::InvalidUsage, fmt::format("rank {} exchanged {} bytes where this process exchanged {}: "
                                                      "the processes made different calls",
                                                      r, slot.bytes, bytes)));
    }
    std::memcpy(all.data() + static_cast<std::size_t>(r) * bytes, slot.blob, bytes);
  }
  return all;
}

void SharedMemoryExchange::finish(std::uint64_t count, Clock::time_point start) {
  for (const int r : localRanks_) store(segmentOf(segments_, r).finished.value, count);
  const auto waited = Clock::now() - start;
  waited_ += waited;
  longest_ = std::max<std::chrono::nanoseconds>(longest_, waited);
}

std::vector<std::uint8_t> SharedMemoryExchange::allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                                          std::size_t bytes, std::chrono::nanoseconds timeout,
                                                          const std::function<void()>& checkAlive) {
  const std::uint64_t count = begin(localBlobs, bytes, timeout, checkAlive);
  const auto start = Clock::now();
  Wait wait(start, timeout, checkAlive);
  for (;;) {
    std::vector<int> missing;
    for (int r = 0; r < static_cast<int>(segments_.size()); ++r) {
      if (load(segmentOf(segments_, r).slots[count % kRing].stamp) != count) missing.push_back(r);
    }
    if (missing.empty()) break;
    try {
      wait.pause(Clock::now(), [&] {
        return fmt::format("rank(s) {} did not come (they have not made the same call, or are stuck)",
                           fmt::join(missing, ", "));
      });
    } catch (...) {
      failed_ = true;
      throw;
    }
  }
  std::vector<std::uint8_t> all = gather(count, bytes);
  finish(count, start);
  return all;
}

std::optional<std::vector<std::uint8_t>> SharedMemoryExchange::allGatherWithin(
    const std::vector<std::vector<std::uint8_t>>& localBlobs, std::size_t bytes, std::chrono::nanoseconds patience,
    std::chrono::nanoseconds timeout, const std::function<void()>& checkAlive) {
  const std::uint64_t count = begin(localBlobs, bytes, timeout, checkAlive);
  const auto start = Clock::now();
  std::uint64_t& decision = segmentOf(segments_, 0).decisions[count % kRing].value;
  const std::uint64_t everyone = 2 * count + 1;
  const std::uint64_t leftEarly = 2 * count;
  // Patience is short; the wait still checks that the peers live, as any other.
  Wait wait(start, std::max(patience, timeout), checkAlive);
  std::uint64_t seen = load(decision);
  while (seen < leftEarly) {
    bool allCame = true;
    for (int r = 0; r < static_cast<int>(segments_.size()) && allCame; ++r) {
      allCame = load(segmentOf(segments_, r).slots[count % kRing].stamp) == count;
    }
    const auto now = Clock::now();
    if (allCame || now - start > patience) {
      const std::uint64_t mine = allCame ? everyone : leftEarly;
      // On failure `seen` becomes the word as it is: another process's decision.
      if (__atomic_compare_exchange_n(&decision, &seen, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) seen = mine;
      continue;
    }
    try {
      wait.pause(now, [] { return std::string("a peer did not come"); });
    } catch (...) {
      failed_ = true;
      throw;
    }
    seen = load(decision);
  }
  if (seen != everyone && seen != leftEarly) {
    fail(Error(ErrorCode::Internal,
               fmt::format("SharedMemoryExchange: exchange {} decided as {}, another exchange's", count, seen)));
  }
  std::optional<std::vector<std::uint8_t>> all;
  if (seen == everyone) {
    all = gather(count, bytes);
  } else {
    ++leftEarly_;
  }
  finish(count, start);
  return all;
}

}  // namespace peerlink::coll
