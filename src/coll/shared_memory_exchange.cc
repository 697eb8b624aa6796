// The all-gather through shared memory (shared_memory_exchange.hpp).
#include "coll/shared_memory_exchange.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/log.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// A slot: the stamp (the all-gather that wrote it; 0 in a new segment), the blob's size, the blob. A cache line
// apart from the other slot, so a rank writing one does not disturb readers of the other.
struct alignas(64) Slot {
  std::uint64_t stamp;
  std::uint64_t bytes;
  std::uint8_t blob[SharedMemoryExchange::kMaxBytes];
};
constexpr std::size_t kSlots = 2;

Slot& slotOf(const HostSegment& segment, std::uint64_t count) {
  return static_cast<Slot*>(segment.base)[count % kSlots];
}

// Tells the core it is spinning (another hardware thread of it runs meanwhile).
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

SharedMemoryExchange::SharedMemoryExchange(const World& world, const WorldAllGather& sockets)
    : localRanks_(world.localRanks), segments_(mapHostSegments(world, sockets, kSlots * sizeof(Slot), "exchange")) {}

SharedMemoryExchange::~SharedMemoryExchange() {
  unmapHostSegments(segments_);
  if (count_ == 0) return;
  try {
    logInfo(LogSubsys::Coll,
            "calls' exchanges through shared memory: {}, waiting {:.3f} ms in all for the other ranks (longest {:.3f} "
            "ms)",
            count_, std::chrono::duration<double, std::milli>(waited_).count(),
            std::chrono::duration<double, std::milli>(longest_).count());
  } catch (...) {  // a log line is not worth an exception out of a destructor
  }
}

std::vector<std::uint8_t> SharedMemoryExchange::allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                                          std::size_t bytes, std::chrono::nanoseconds timeout,
                                                          const std::function<void()>& checkAlive) {
  if (bytes > kMaxBytes || localBlobs.size() != localRanks_.size()) {
    throw Error(ErrorCode::Internal, fmt::format("SharedMemoryExchange: {} blobs of {} bytes (at most {}), for {} "
                                                 "local ranks",
                                                 localBlobs.size(), bytes, kMaxBytes, localRanks_.size()));
  }
  if (failed_) {
    throw Error(ErrorCode::RemoteError,
                "the exchange through shared memory failed before: the processes no longer meet at the same call");
  }
  const std::uint64_t count = ++count_;
  for (std::size_t i = 0; i < localRanks_.size(); ++i) {
    if (localBlobs[i].size() != bytes) throw Error(ErrorCode::Internal, "SharedMemoryExchange: a blob of another size");
    Slot& slot = slotOf(segments_[static_cast<std::size_t>(localRanks_[i])], count);
    std::memcpy(slot.blob, localBlobs[i].data(), bytes);
    slot.bytes = bytes;
    __atomic_store_n(&slot.stamp, count, __ATOMIC_RELEASE);
  }
  const int nranks = static_cast<int>(segments_.size());
  std::vector<std::uint8_t> all(segments_.size() * bytes);
  std::vector<int> waiting;
  for (int r = 0; r < nranks; ++r) waiting.push_back(r);
  // Spin first (the peers are usually microseconds away), then yield the core, then sleep between looks.
  constexpr auto kSpin = std::chrono::microseconds(100);
  constexpr auto kYield = std::chrono::milliseconds(5);
  constexpr auto kCheckEvery = std::chrono::milliseconds(1);
  const auto start = std::chrono::steady_clock::now();
  auto nextCheck = start + kCheckEvery;
  for (;;) {
    const auto arrived = [&](int r) {
      const Slot& slot = slotOf(segments_[static_cast<std::size_t>(r)], count);
      if (__atomic_load_n(&slot.stamp, __ATOMIC_ACQUIRE) != count) return false;
      if (slot.bytes != bytes) {
        failed_ = true;
        throw Error(ErrorCode::InvalidUsage,
                    fmt::format("rank {} exchanged {} bytes where this process exchanged {}: the processes made "
                                "different calls",
                                r, slot.bytes, bytes));
      }
      std::memcpy(all.data() + static_cast<std::size_t>(r) * bytes, slot.blob, bytes);
      return true;
    };
    waiting.erase(std::remove_if(waiting.begin(), waiting.end(), arrived), waiting.end());
    const auto now = std::chrono::steady_clock::now();
    if (waiting.empty()) {
      waited_ += now - start;
      longest_ = std::max<std::chrono::nanoseconds>(longest_, now - start);
      return all;
    }
    if (now >= nextCheck) {
      nextCheck = now + kCheckEvery;
      try {
        checkAlive();
      } catch (...) {
        failed_ = true;
        throw;
      }
      if (now - start > timeout) {
        failed_ = true;
        throw Error(ErrorCode::Timeout,
                    fmt::format("the exchange of a call through shared memory timed out after {:.3f} s: rank(s) {} "
                                "did not come (they have not made the same call, or are stuck)",
                                std::chrono::duration<double>(timeout).count(), fmt::join(waiting, ", ")));
      }
    }
    if (now - start < kSpin) {
      relax();
    } else if (now - start < kYield) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace peerlink::coll
