// Deadlines for waits on file descriptors, shared by the Unix-domain sockets (unix_socket.cc) and the TCP
// bootstrap (src/bootstrap): every wait in peerlink has one.
#pragma once

#include <poll.h>
#include <sys/resource.h>

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

/// For an errno that says the process or the machine ran short of something, what ran short and what to do
/// (to append to a message); "" for any other.
inline std::string shortageHint(int error) {
  switch (error) {
    case EMFILE: {
      rlimit limit{};
      const bool known = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
      return fmt::format(
          " (this process holds as many file descriptors as its limit allows{}: raise it, e.g. ulimit -n "
          "65536)",
          known ? fmt::format(", {}", limit.rlim_cur) : std::string());
    }
    case ENFILE: return " (the machine's table of open files is full: fs.file-max)";
    case ENOSPC:
    case EDQUOT: return " (the file system is full, or out of inodes: df -h, df -i)";
    case ENOMEM: return " (the kernel could not allocate memory for this process)";
    default: return "";
  }
}

/// Error(SystemError) "`call` failed: <errno text>", with shortageHint.
[[noreturn]] inline void throwSystemError(const std::string& call, int error) {
  throw Error(ErrorCode::SystemError, fmt::format("{} failed: {}{}", call, std::strerror(error), shortageHint(error)));
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
