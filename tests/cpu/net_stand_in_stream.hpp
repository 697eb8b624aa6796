// What the CPU tests of async and queued calls across nodes share (test_net_async.cc, test_net_queued_calls.cc): a
// stand-in for a GPU stream, a world over host memory, and an async call queued as the node world queues it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "net/net_world.hpp"

namespace peerlink::net::stand_ins {

// A GPU stream's order on a thread: each operation runs once those before it ended; an operation returns false
// while it cannot end yet (a wait), and is asked again. An operation still not ended after 10 s is given up and
// counted in stuck() (a test would hang otherwise).
class StandInStream {
 public:
  StandInStream() : thread_([this] { run(); }) {}
  ~StandInStream() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  StandInStream(const StandInStream&) = delete;
  StandInStream& operator=(const StandInStream&) = delete;

  // Queues `op`; returns its number (1, 2, ...): reached(n) once it ended.
  std::uint64_t queue(std::function<bool()> op) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ops_.push_back(std::move(op));
    changed_.notify_all();
    return ++queued_;
  }
  void copies(const std::vector<SlotCopy>& copies) {
    queue([copies] {
      for (const SlotCopy& copy : copies) std::memmove(copy.dst, copy.src, copy.bytes);
      return true;
    });
  }
  // What the async call's kernel does (kernels/async_call.cu): copies in, the ticket to the copied-in flag, a wait
  // for the release, copies out unless the call failed.
  void kernel(const AsyncCall& async) {
    AsyncFlags* flags = async.flags;
    const std::uint64_t ticket = async.ticket;
    copies(async.copiesIn);
    queue([flags, ticket, set = async.set] {
      flags->copiedIn[set].value.store(ticket, std::memory_order_release);
      return true;
    });
    queue([flags, ticket] { return flags->release.value.load(std::memory_order_acquire) >= ticket; });
    queue([flags, ticket, out = async.copiesOut] {
      const std::uint64_t failed = flags->failedFrom.value.load(std::memory_order_acquire);
      if (failed != 0 && failed <= ticket) return true;
      for (const SlotCopy& copy : out) std::memmove(copy.dst, copy.src, copy.bytes);
      return true;
    });
  }
  bool reached(std::uint64_t op) const { return ended_.load() >= op; }
  // Waits until every operation queued so far ended.
  void drain() {
    const std::uint64_t last = [&] {
      const std::lock_guard<std::mutex> lock(mutex_);
      return queued_;
    }();
    while (!reached(last)) std::this_thread::yield();
  }
  int stuck() const { return stuck_.load(); }

 private:
  void run() {
    for (;;) {
      std::function<bool()> op;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || !ops_.empty(); });
        if (ops_.empty()) return;
        op = std::move(ops_.front());
        ops_.pop_front();
      }
      const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!op()) {
        if (std::chrono::steady_clock::now() > giveUp) {
          ++stuck_;
          break;
        }
        std::this_thread::yield();
      }
      ++ended_;
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<bool()>> ops_;
  std::uint64_t queued_ = 0;
  std::atomic<std::uint64_t> ended_{0};
  std::atomic<int> stuck_{0};
  bool stopping_ = false;
  std::thread thread_;
};

inline NetOptions optionsWith(std::chrono::milliseconds timeout) {
  NetOptions options;
  options.timeout = timeout;
  options.path = NetPath::Staged;
  options.identity.hostId = "one";
  return options;
}

inline std::unique_ptr<NetWorld> hostWorld(std::unique_ptr<PointToPoint> p2p, NetOptions options) {
  return std::make_unique<NetWorld>(std::move(p2p), std::move(options), hostDeviceAccess(),
                                    std::make_unique<HostMemory>());
}

// One async call as the node world makes it, its kernel on `stream`.
inline void queueAsync(NetGroup& group, StandInStream& stream, const NetCall& call) {
  AsyncCall async = group.prepareAsync(call);
  stream.kernel(async);
  group.startAsync(std::move(async));
}

}  // namespace peerlink::net::stand_ins
