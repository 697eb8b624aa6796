// Fork handlers for the process-wide locks (fork_safe_mutex.hpp).
#include "core/fork_safe_mutex.hpp"

#include <pthread.h>

#include <vector>

namespace peerlink {
namespace {

// The registered mutexes, locked in registration order before a fork and released in reverse after it. The list's
// own lock is taken first, so that no registration runs during a fork. Never destroyed: fork handlers outlive
// static destructors.
struct ForkLocks {
  std::mutex listMutex;
  std::vector<ForkSafeMutex*> mutexes;
};

ForkLocks& forkLocks() {
  static auto* const locks = new ForkLocks;
  return *locks;
}

void lockAll() {
  ForkLocks& locks = forkLocks();
  locks.listMutex.lock();
  for (ForkSafeMutex* mutex : locks.mutexes) mutex->lock();
}

void unlockAll() {
  ForkLocks& locks = forkLocks();
  for (auto it = locks.mutexes.rbegin(); it != locks.mutexes.rend(); ++it) (*it)->unlock();
  locks.listMutex.unlock();
}

}  // namespace

ForkSafeMutex::ForkSafeMutex() {
  static std::once_flag handlers;
  std::call_once(handlers, [] { pthread_atfork(lockAll, unlockAll, unlockAll); });
  ForkLocks& locks = forkLocks();
  const std::lock_guard<std::mutex> lock(locks.listMutex);
  locks.mutexes.push_back(this);
}

}  // namespace peerlink
