// A world of processes on this machine started the way torchrun starts one (launch.hpp, runLocalWorld).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "peerlink/launch.hpp"

extern char** environ;

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;

// This process's environment without the launcher variables a copy gets its own of.
std::vector<std::string> inheritedEnvironment() {
  const char* owned[] = {
      "RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "TORCHELASTIC_RUN_ID=", "GROUP_RANK=", "ROLE_RANK="};
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    bool mine = false;
    for (const char* prefix : owned) mine = mine || std::strncmp(*variable, prefix, std::strlen(prefix)) == 0;
    if (!mine) environment.emplace_back(*variable);
  }
  return environment;
}

void killAll(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) {
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  for (const pid_t pid : pids) {
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
}

}  // namespace

int runLocalWorld(const std::vector<std::string>& arguments, int processes, std::chrono::milliseconds grace) {
  if (arguments.empty() || processes < 1) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("runLocalWorld: {} processes of '{}'", processes,
                                                     arguments.empty() ? "" : arguments.front()));
  }
  std::random_device entropy;
  const std::string runId = fmt::format("peerlink-{}-{:08x}", ::getpid(), entropy());
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < processes; ++rank) {
    std::vector<std::string> environment = inheritedEnvironment();
    for (const auto& [name, value] : {std::pair<const char*, std::string>{"RANK", std::to_string(rank)},
                                      {"WORLD_SIZE", std::to_string(processes)},
                                      {"LOCAL_RANK", std::to_string(rank)},
                                      {"LOCAL_WORLD_SIZE", std::to_string(processes)},
                                      {"TORCHELASTIC_RUN_ID", runId}}) {
      environment.push_back(std::string(name) + "=" + value);
    }
    std::vector<char*> envp;
    for (const std::string& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int status = ::posix_spawn(&pid, arguments.front().c_str(), nullptr, nullptr, argv.data(), envp.data());
    if (status != 0) {
      killAll(pids);
      throw Error(ErrorCode::SystemError,
                  fmt::format("cannot start copy {} of {}: {}", rank, arguments.front(), std::strerror(status)));
    }
    pids.push_back(pid);
  }
  int result = 0;
  std::size_t running = pids.size();
  Clock::time_point giveUpAt = Clock::time_point::max();
  while (running > 0) {
    for (pid_t& pid : pids) {
      if (pid <= 0) continue;
      int status = 0;
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done != pid) continue;
      pid = -1;
      --running;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (code != 0 && result == 0) {
        result = code;
        giveUpAt = Clock::now() + grace;
      }
    }
    if (running > 0 && Clock::now() >= giveUpAt) {
      killAll(pids);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return result;
}

}  // namespace peerlink
