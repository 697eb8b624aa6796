// Worlds of real processes for the bootstrap's tests. Children are forked before the parent makes the unique
// id (so no child inherits the root's thread or sockets), wait for the id on a pipe, run their body, and report
// one line back (an error's code and text) on a second pipe, so the parent can check messages with gtest.
// Every wait is bounded; a child still running at the end is killed.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/root.hpp"
#include "bootstrap/tcp.hpp"
#include "child_process.hpp"
#include "error_text.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/params.hpp"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace peerlink::testing {

/// Params whose root listens on loopback (CI machines may have no other interface worth trusting).
inline Params loopbackParams(std::chrono::milliseconds timeout) {
  return Params::fromMap(
      {{"PEERLINK_BOOTSTRAP_ADDR", "127.0.0.1"}, {"PEERLINK_BOOTSTRAP_TIMEOUT_MS", std::to_string(timeout.count())}});
}

inline BootstrapOptions optionsWith(std::chrono::milliseconds deadline, std::string hostId = "") {
  BootstrapOptions options;
  options.deadline = deadline;
  options.hostId = std::move(hostId);
  return options;
}

/// A child's one-line report ("" when it said nothing).
class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void say(const std::string& line) const {
    const std::string text = line + "\n";
    [[maybe_unused]] const ssize_t n = ::write(fd_, text.data(), text.size());
  }

 private:
  int fd_;
};

/// What a child says about an Error: "<code name>: <message>".
inline std::string describeError(const Error& error) {
  return std::string(errorCodeName(error.code())) + ": " + error.what();
}

/// In a child: runs `action`, reports the Error it throws (or "no error"), kChildOk when one was thrown.
template <typename Action>
int reportError(const Reporter& reporter, Action action) {
  try {
    action();
  } catch (const Error& error) {
    reporter.say(describeError(error));
    return kChildOk;
  }
  reporter.say("no error");
  return kChildWrongResult;
}

class ProcessWorld {
 public:
  using Body = std::function<int(const UniqueId& id, const Reporter& reporter)>;

  /// Forks a child that waits for start()'s id, then runs `body`.
  void spawn(const Body& body) {
    int idPipe[2];
    int reportPipe[2];
    if (::pipe2(idPipe, O_CLOEXEC) != 0 || ::pipe2(reportPipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    auto entry = std::make_unique<Entry>();
    entry->child = std::make_unique<Child>([&] {
      ::close(idPipe[1]);
      ::close(reportPipe[0]);
      for (auto& other : entries_) {  // the siblings' pipe ends are not this child's
        other->idWrite.reset();
        other->reportRead.reset();
      }
      UniqueId id;
      std::size_t got = 0;
      while (got < sizeof(id.bytes)) {
        pollfd waiting{idPipe[0], POLLIN, 0};
        if (::poll(&waiting, 1, static_cast<int>(kLong.count())) <= 0) return kChildWrongResult;
        const ssize_t n = ::read(idPipe[0], id.bytes + got, sizeof(id.bytes) - got);
        if (n <= 0) return kChildWrongResult;  // the parent gave up before sending it
        got += static_cast<std::size_t>(n);
      }
      return body(id, Reporter(reportPipe[1]));
    });
    ::close(idPipe[0]);
    ::close(reportPipe[1]);
    entry->idWrite.reset(idPipe[1]);
    entry->reportRead.reset(reportPipe[0]);
    entries_.push_back(std::move(entry));
  }

  /// Sends `id` to every child (they start now).
  void start(const UniqueId& id) {
    for (auto& entry : entries_) {
      [[maybe_unused]] const ssize_t n = ::write(entry->idWrite.get(), id.bytes, sizeof(id.bytes));
      entry->idWrite.reset();
    }
  }

  struct Outcome {
    int exitCode = -1;
    std::string report;  ///< the child's lines, without the last newline
  };
  /// Waits for every child (each within `timeout`), in spawn order.
  std::vector<Outcome> finish(std::chrono::milliseconds timeout = kLong) {
    std::vector<Outcome> outcomes;
    for (auto& entry : entries_) {
      Outcome outcome;
      outcome.exitCode = entry->child->wait(timeout);
      char buffer[4096];
      ssize_t n = 0;
      ::fcntl(entry->reportRead.get(), F_SETFL, O_NONBLOCK);
      while ((n = ::read(entry->reportRead.get(), buffer, sizeof(buffer))) > 0) {
        outcome.report.append(buffer, static_cast<std::size_t>(n));
      }
      while (!outcome.report.empty() && outcome.report.back() == '\n') outcome.report.pop_back();
      outcomes.push_back(std::move(outcome));
    }
    entries_.clear();
    return outcomes;
  }

 private:
  struct Entry {
    std::unique_ptr<Child> child;
    FileDescriptor idWrite;
    FileDescriptor reportRead;
  };
  std::vector<std::unique_ptr<Entry>> entries_;
};

/// A loopback address whose port nobody listens on now: bound, learnt, closed.
/// A loopback port free now, below the kernel's ephemeral range: a port the caller binds later, which a root of
/// another test running beside this one (binding port 0, so given an ephemeral port) can never take in between.
inline bootstrap::SocketAddress freeLoopbackPort() {
  int ephemeralLow = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeralLow;
  const int low = 10000;
  const int span = std::max(1, ephemeralLow - low);
  const int start = static_cast<int>((static_cast<unsigned>(::getpid()) * 7919u) % static_cast<unsigned>(span));
  for (int i = 0; i < span; ++i) {
    const auto port = static_cast<std::uint16_t>(low + (start + i) % span);
    try {
      bootstrap::SocketAddress bound;
      const FileDescriptor taken =
          bootstrap::listenTcp(bootstrap::resolveAddress("127.0.0.1", port, "test"), 1, &bound);
      return bound;
    } catch (const Error&) {
      // in use: the next
    }
  }
  bootstrap::SocketAddress bound;
  const FileDescriptor taken = bootstrap::listenTcp(bootstrap::resolveAddress("127.0.0.1", 0, "test"), 1, &bound);
  return bound;
}

/// Whether every root of this process ended within `timeout`.
inline bool rootsEndWithin(std::chrono::milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  while (bootstrap::runningRoots() > 0) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// What this process holds: threads and open descriptors (a root or a rank left behind shows in either).
struct Holdings {
  int threads = 0;
  int descriptors = 0;
  bool operator==(const Holdings& other) const { return threads == other.threads && descriptors == other.descriptors; }
};

inline Holdings holdings() {
  Holdings now;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) now.threads = std::stoi(line.substr(8));
  }
  if (DIR* fds = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(fds)) now.descriptors += entry->d_name[0] != '.';
    ::closedir(fds);
  }
  return now;
}

/// Whether this kernel has pidfd_open (Linux 5.3+).
inline bool havePidfd() {
  const long fd = ::syscall(SYS_pidfd_open, ::getpid(), 0);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

inline long long msSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

}  // namespace peerlink::testing
