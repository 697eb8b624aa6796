// How the transport's thread waits when a round of polling moved nothing: MPI makes progress only inside the calls
// that test its requests (Open MPI's shared memory and TCP have no thread of their own), so a thread that sleeps
// between polls stalls the messages themselves; one that spins holds a core the other ranks of an oversubscribed
// machine (4 ranks on 2 cores in CI) need. So: yield the core while the wait is young (the caller is back at once
// where nothing else wants the core, as MPI's own exchange in rail_exchange.cc polls), and sleep only once nothing
// has happened for a while (a peer that is late, not a message in flight).
#pragma once

#include <chrono>
#include <thread>

namespace peerlink::net {

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

}  // namespace peerlink::net
