// How a host thread waits between polls of something that usually ends within microseconds (a GPU's stream, an MPI
// request, a peer's flag) but may take long (a peer that is late). Sleeping at once is slow: Linux gives an ordinary
// thread 50 us of timer slack, so a sleep of 2 us lasts 50-80 us. Spinning holds a core the other ranks of an
// oversubscribed machine (4 ranks on 2 cores in CI) need, and MPI makes progress only inside the calls that test its
// requests (Open MPI's shared memory and TCP have no thread of their own), so the polling thread must keep polling.
// So: yield the core while the wait is young (the caller is back at once where nothing else wants the core), and
// sleep only once nothing has happened for a while.
#pragma once

#include <chrono>
#include <thread>

namespace peerlink {

class IdleWait {
 public:
  /// Something happened: the next idle round starts a young wait again.
  void progressed() { idleSince_ = {}; }

  /// Nothing happened in this round: give the core up a while.
  void idle() {
    const auto now = std::chrono::steady_clock::now();
    if (idleSince_ == std::chrono::steady_clock::time_point{}) idleSince_ = now;
    if (now - idleSince_ < kYielding) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kSleep);
    }
  }

 private:
  static constexpr std::chrono::milliseconds kYielding{10};
  static constexpr std::chrono::microseconds kSleep{50};
  std::chrono::steady_clock::time_point idleSince_{};
};

}  // namespace peerlink
