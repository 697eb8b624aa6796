// Deadlines for waits on file descriptors, shared by the Unix-domain sockets (unix_socket.cc) and the TCP
// bootstrap (src/bootstrap): every wait in peerlink has one.
#pragma once

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink {

using DeadlineClock = std::chrono::steady_clock;

/// Error(SystemError) "`call` failed: <errno text>".
[[noreturn]] inline void throwSystemError(const std::string& call, int error) {
  throw Error(ErrorCode::SystemError, fmt::format("{} failed: {}", call, std::strerror(error)));
}

/// now + timeout, saturating (milliseconds::max() would overflow the clock's nanoseconds); negative is 0.
inline DeadlineClock::time_point deadlineAfter(std::chrono::milliseconds timeout) {
  const auto now = DeadlineClock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(DeadlineClock::time_point::max() - now);
  return now + std::clamp(timeout, std::chrono::milliseconds::zero(), room);
}

/// Milliseconds left until `deadline`, rounded up, as poll() takes them (0 once it has passed).
inline int remainingMs(DeadlineClock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - DeadlineClock::now()).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, INT_MAX));
}

/// Waits until `fd` reports `events` (or an error/hangup, which the next call on it reports); false when the
/// deadline passed first.
inline bool waitForFd(int fd, short events, DeadlineClock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, remainingMs(deadline));
    if (ready > 0) return true;
    if (ready == 0) {
      if (DeadlineClock::now() >= deadline) return false;
      continue;
    }
    if (errno != EINTR) throwSystemError("poll", errno);
  }
}

}  // namespace peerlink
