// A mutex that a fork never leaves locked in the child. A fork copies a mutex another thread holds as held, for
// good: the child's next lock of it hangs. For the process-wide locks a child may take again (the held-resource list,
// NVML's instance), the fork waits until no thread holds them, and parent and child both release them after.
#pragma once

#include <mutex>

namespace peerlink {

/// For objects that live until the process exits (never destroyed): registered with the fork handlers for good.
class ForkSafeMutex {
 public:
  ForkSafeMutex();
  ForkSafeMutex(const ForkSafeMutex&) = delete;
  ForkSafeMutex& operator=(const ForkSafeMutex&) = delete;

  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
  bool try_lock() { return mutex_.try_lock(); }

 private:
  std::mutex mutex_;
};

}  // namespace peerlink
