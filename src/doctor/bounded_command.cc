// runBoundedCommand: posix_spawnp into a process group of its own, a pipe read under a deadline, and a
// kill of the whole group when the deadline passes.
#include "doctor/bounded_command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/deadline.hpp"
#include "core/file_descriptor.hpp"

extern char** environ;

namespace peerlink {
namespace {

// After SIGKILL a process exits at once unless it sits in an uninterruptible kernel wait; this bounds the
// reaping so such a process cannot hold the doctor (it stays a zombie until it leaves that wait).
constexpr std::chrono::milliseconds kReapAfterKill{2000};

enum class Wait { Exited, Gone, Running };

// Waits for `pid` to exit until `deadline`. Gone: it cannot be waited for (SIGCHLD ignored by the
// application, so the kernel reaped it), its status lost.
Wait waitUntil(pid_t pid, DeadlineClock::time_point deadline, int& status) {
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return Wait::Exited;
    if (done < 0 && errno != EINTR) return Wait::Gone;
    if (DeadlineClock::now() >= deadline) return Wait::Running;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void killGroup(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  waitUntil(pid, deadlineAfter(kReapAfterKill), status);
}

}  // namespace

CommandOutput runBoundedCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                std::size_t maxBytes) {
  CommandOutput result;
  if (argv.empty()) {
    result.problem = "no command given";
    return result;
  }
  int pipeEnds[2];
  if (::pipe2(pipeEnds, O_CLOEXEC) != 0) {
    result.problem = fmt::format("pipe: {}", std::strerror(errno));
    return result;
  }
  FileDescriptor readEnd(pipeEnds[0]);
  FileDescriptor writeEnd(pipeEnds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, writeEnd.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  writeEnd.reset();
  if (spawned != 0) {
    result.problem = spawned == ENOENT ? fmt::format("{} is not on PATH", argv[0])
                                       : fmt::format("cannot start {}: {}", argv[0], std::strerror(spawned));
    return result;
  }
  result.started = true;

  const auto deadline = deadlineAfter(timeout);
  char buffer[65536];
  while (true) {
    pollfd entry{readEnd.get(), POLLIN, 0};
    const int ready = ::poll(&entry, 1, remainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 || (ready < 0)) {
      result.timedOut = ready == 0;
      if (ready < 0) result.problem = fmt::format("poll: {}", std::strerror(errno));
      break;
    }
    const ssize_t got = ::read(readEnd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output (or a read error, which ends it as well)
    const std::size_t room = maxBytes - std::min(maxBytes, result.out.size());
    result.out.append(buffer, std::min(room, static_cast<std::size_t>(got)));
  }
  int status = 0;
  const Wait wait = result.timedOut || !result.problem.empty() ? Wait::Running : waitUntil(pid, deadline, status);
  if (wait == Wait::Running) {
    killGroup(pid);
    result.timedOut = result.problem.empty();
    if (result.timedOut) result.problem = fmt::format("{} did not finish within {} ms", argv[0], timeout.count());
    return result;
  }
  if (wait == Wait::Gone) {
    result.problem = fmt::format("the exit status of {} was lost (SIGCHLD is ignored)", argv[0]);
  } else if (WIFEXITED(status)) {
    result.exitCode = WEXITSTATUS(status);
  } else {
    result.problem = fmt::format("{} ended by signal {}", argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return result;
}

}  // namespace peerlink
