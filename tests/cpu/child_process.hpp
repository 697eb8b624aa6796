// The forked-child harness that cpu tests between real processes share: the child side runs in a fork()ed
// process and reports through its exit code (never through gtest); the parent waits with a deadline and
// checks the Errors it expects.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "peerlink/error.hpp"

namespace peerlink::testing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr milliseconds kLong{5000};  // a bound only a broken implementation reaches

// A child's exit codes.
inline constexpr int kChildOk = 0;
inline constexpr int kChildWrongResult = 1;
inline constexpr int kChildUnknownException = 99;
inline constexpr int kChildErrorBase = 100;  // + ErrorCode of an Error the child did not expect

// The exit code a child reports when it dies of an unexpected Error with `code`.
inline int childErrorExit(ErrorCode code) {
  return kChildErrorBase + static_cast<int>(code);
}

// A forked process running `body` (returns an exit code). The destructor kills and reaps a child that is
// still there, so a failed ASSERT never leaves one behind.
class Child {
 public:
  template <typename Body>
  explicit Child(Body body) {
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ != 0) return;
    int code = kChildUnknownException;
    try {
      code = body();
    } catch (const Error& error) {
      std::fprintf(stderr, "[child %d] unexpected: %s\n", static_cast<int>(::getpid()), error.what());
      code = childErrorExit(error.code());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "[child %d] unexpected: %s\n", static_cast<int>(::getpid()), error.what());
    } catch (...) {
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // The child's exit code; -1 (after killing it) when it is still running at the deadline.
  int wait(milliseconds timeout = kLong) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (done < 0 || Clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(milliseconds(1));
    }
  }

 private:
  pid_t pid_ = -1;
};

// In a child: kChildOk when `action` throws Error(code) whose message contains `needle`.
template <typename Action>
int childExpectsError(ErrorCode code, const std::string& needle, Action action) {
  try {
    action();
  } catch (const Error& error) {
    if (error.code() == code && std::string(error.what()).find(needle) != std::string::npos) return kChildOk;
    std::fprintf(stderr, "[child] wrong error (%s): %s\n", errorCodeName(error.code()), error.what());
    return kChildWrongResult;
  }
  std::fprintf(stderr, "[child] no error\n");
  return kChildWrongResult;
}

// In the parent (gtest): the Error(code) that `action` throws; a test failure when it throws none.
template <typename Action>
Error expectError(ErrorCode code, Action action) {
  try {
    action();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code) << error.what();
    return error;
  }
  ADD_FAILURE() << "no Error thrown";
  return Error(ErrorCode::Internal, "none");
}

}  // namespace peerlink::testing
