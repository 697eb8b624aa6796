// Roles of a GPU test as forked processes, for tests between real processes: a child of a process that has
// initialized CUDA cannot use CUDA, so the test process itself never touches CUDA; it forks its roles before
// any CUDA call, each role initializes CUDA itself and reports through its exit code, and roles talk through
// pipes made before the fork. Every wait is bounded.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/file_descriptor.hpp"
#include "peerlink/error.hpp"

namespace peerlink::testing {

using namespace std::chrono_literals;
using RoleClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kStepTimeout = 60s;
constexpr milliseconds kChildLimit = 100s;  // below CTest's 120 s
constexpr int kOk = 0;
constexpr int kWrong = 1;
constexpr int kRefused = 10;     // a role was refused as the test expected (waitAll counts it as success)
constexpr int kErrorBase = 100;  // + ErrorCode of an unexpected Error

// A forked role. Its exit code: kOk, kWrong, kRefused, kErrorBase + ErrorCode, or -1 when we killed it.
class Child {
 public:
  template <typename Body>
  Child(std::string role, Body body) : role_(std::move(role)) {
    std::fflush(nullptr);
    if ((pid_ = ::fork()) != 0) return;
    int code = 99;  // an exception other than Error
    try {
      code = body();
    } catch (const Error& error) {
      std::fprintf(stderr, "[%s] unexpected Error(%s): %s\n", role_.c_str(), errorCodeName(error.code()), error.what());
      code = kErrorBase + static_cast<int>(error.code());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "[%s] unexpected exception: %s\n", role_.c_str(), error.what());
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  ~Child() { stop(); }
  Child(const Child&) = delete;

  std::optional<int> poll() {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return code_;
  }
  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    if (!code_) code_ = -1;
  }
  const std::string& role() const { return role_; }
  pid_t pid() const { return pid_; }  ///< -1 once reaped

 private:
  std::string role_;
  pid_t pid_ = -1;
  std::optional<int> code_;
};

// Waits for all children; once one fails, the others get a few seconds to report, then are killed.
inline std::vector<int> waitAll(const std::vector<Child*>& children, milliseconds limit = kChildLimit) {
  auto deadline = RoleClock::now() + limit;
  std::vector<int> codes(children.size(), -1);
  for (bool running = true; running; std::this_thread::sleep_for(5ms)) {
    running = false;
    for (std::size_t i = 0; i < children.size(); ++i) {
      const std::optional<int> code = children[i]->poll();
      running = running || !code;
      if (code && *code != kOk && *code != kRefused) deadline = std::min(deadline, RoleClock::now() + 3s);
      if (RoleClock::now() >= deadline) children[i]->stop();
      codes[i] = children[i]->poll().value_or(-1);
    }
  }
  return codes;
}

inline void expectAllOk(const std::vector<Child*>& children) {
  const std::vector<int> codes = waitAll(children);
  for (std::size_t i = 0; i < children.size(); ++i) {
    EXPECT_EQ(codes[i], kOk) << children[i]->role()
                             << " (exit codes: 1 wrong result, 99 exception, 100 + ErrorCode, -1 killed)";
  }
}

// One direction between two roles, made before the fork; a line per message.
class Pipe {
 public:
  Pipe() {
    int fds[2];
    if (::pipe(fds) != 0) throw Error(ErrorCode::SystemError, "pipe");
    read_.reset(fds[0]);
    write_.reset(fds[1]);
  }
  void send(const std::string& line) {
    const std::string data = line + "\n";
    if (::write(write_.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
      throw Error(ErrorCode::SystemError, "pipe write");
    }
  }
  std::string receive(milliseconds timeout = kStepTimeout) {
    const auto deadline = RoleClock::now() + timeout;
    std::string line;
    for (char c = 0; c != '\n';) {
      pollfd entry{read_.get(), POLLIN, 0};
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - RoleClock::now()).count();
      if (left <= 0) throw Error(ErrorCode::Timeout, "no message from the other role within the step timeout");
      if (::poll(&entry, 1, static_cast<int>(left)) <= 0) continue;  // the deadline is checked again
      if (::read(read_.get(), &c, 1) != 1) throw Error(ErrorCode::RemoteError, "the other role closed its pipe");
      if (c != '\n') line += c;
    }
    return line;
  }
  void expect(const std::string& wanted) {
    const std::string got = receive();
    if (got != wanted) throw Error(ErrorCode::DataMismatch, "expected '" + wanted + "', got '" + got + "'");
  }
  void closeWrite() { write_.reset(); }  // so that the reader sees end-of-file when the writers are gone

 private:
  FileDescriptor read_;
  FileDescriptor write_;
};

}  // namespace peerlink::testing
