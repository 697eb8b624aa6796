#include "transport/exporter_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/cpu_affinity.hpp"
#include "core/cuda_check.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "topology/gpu_cpus.hpp"
#include "transport/pattern_check.hpp"

extern char** environ;

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is readable (or closed) or the deadline passes.
bool waitReadable(int fd, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd entry{fd, POLLIN, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

// One line read from a pipe, or why there is none.
struct PipeLine {
  enum class End { Line, Closed, TimedOut, Failed };
  End end = End::Line;
  std::string text;  // the line, without the newline
  int error = 0;     // errno of the read that failed
};

// The next line from `fd`: `buffered` holds what earlier reads got past the last line and keeps it for the
// next call. Stops at end of input, at the deadline, or at a read error.
PipeLine readPipeLine(int fd, std::string& buffered, Clock::time_point deadline) {
  PipeLine result;
  for (;;) {
    const auto newline = buffered.find('\n');
    if (newline != std::string::npos) {
      result.text = buffered.substr(0, newline);
      buffered.erase(0, newline + 1);
      return result;
    }
    if (!waitReadable(fd, deadline)) {
      result.end = PipeLine::End::TimedOut;
      return result;
    }
    char chunk[512];
    const ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got == 0) {
      result.end = PipeLine::End::Closed;
      return result;
    }
    if (got < 0 && errno != EINTR && errno != EAGAIN) {
      result.end = PipeLine::End::Failed;
      result.error = errno;
      return result;
    }
    if (got > 0) buffered.append(chunk, static_cast<std::size_t>(got));
  }
}

int ownerDevice(const ShareExporterRequest& request) {
  if (request.busId.empty()) return request.device;
  int device = -1;
  if (cudaDeviceGetByPCIBusId(&device, request.busId.c_str()) != cudaSuccess) {
    cudaGetLastError();
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw Error(ErrorCode::Unsupported,
                fmt::format("GPU {} is not visible to the exporting process (CUDA_VISIBLE_DEVICES={})", request.busId,
                            visible != nullptr ? visible : "unset"));
  }
  return device;
}

}  // namespace

Route sharedRoute(ShareKind kind, Direction direction) {
  Route route;
  route.mode = kind == ShareKind::Cumem ? RouteMode::Cumem : RouteMode::Ipc;
  route.engine = Engine::CopyEngine;
  route.direction = direction;
  route.reason = "the other process's buffer, mapped here";
  return route;
}

int runShareExporter(const ShareExporterRequest& request, std::ostream& out, const Params& params) {
  try {
    const int device = ownerDevice(request);
    // This process works for one GPU: its main thread fills, serves and checks the buffer.
    bindCurrentThreadNearGpu(params, localCpusOfDevice(device, params),
                             fmt::format("exporting process of GPU {}", device));
    ExportableBuffer buffer(device, request.bytes, request.kind);
    {
      DeviceGuard guard(device);
      kernels::launchFillPattern(buffer.data(), request.bytes, request.seed, nullptr);
      PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
    }
    out << "socket " << buffer.socketPath() << std::endl;
    PatternChecker checker(device);
    Stream stream(device);
    // Importers map our memory until they close our standard input; legacy IPC memory must outlive that.
    std::string buffered;
    for (;;) {
      // Input closed, silent past the deadline or unreadable: the parent is done or gone.
      const PipeLine command = readPipeLine(STDIN_FILENO, buffered, Clock::now() + request.timeout * 10);
      if (command.end != PipeLine::End::Line) return 0;
      if (command.text == "serve") {
        const ShareTimings timings = buffer.serveOne(request.timeout);
        out << fmt::format("served {} {} {} {}", timings.exportMs, timings.handshakeMs, timings.importMs, timings.mapMs)
            << std::endl;
      } else if (command.text.rfind("check ", 0) == 0) {
        const std::uint64_t seed = std::stoull(command.text.substr(6));
        const CheckResult result = checker.checkPattern(buffer.data(), request.bytes, seed, stream.get());
        out << fmt::format("checked {} {}", result.mismatches, result.lostBytes) << std::endl;
      } else {
        out << "error unknown command '" << command.text << "'" << std::endl;
        return 1;
      }
    }
  } catch (const std::exception& error) {
    std::string message = error.what();
    for (char& c : message) c = c == '\n' ? ' ' : c;
    out << "error " << message << std::endl;
    return 1;
  }
}

ExporterProcess::ExporterProcess(const std::string& executable, const ShareExporterRequest& request,
                                 const std::optional<std::string>& visibleDevices)
    : timeout_(request.timeout) {
  int input[2];
  int output[2];
  if (::pipe2(input, O_CLOEXEC) != 0 || ::pipe2(output, O_CLOEXEC) != 0) {
    throw Error(ErrorCode::SystemError, fmt::format("pipe for the exporter process: {}", std::strerror(errno)));
  }
  FileDescriptor childIn(input[0]);
  toChild_.reset(input[1]);
  fromChild_.reset(output[0]);
  FileDescriptor childOut(output[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, childIn.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, childOut.get(), STDOUT_FILENO);
  std::vector<std::string> args = {executable,     "_share-export",
                                   "--bytes",      std::to_string(request.bytes),
                                   "--kind",       request.kind == ShareKind::Ipc ? "ipc" : "cumem",
                                   "--seed",       std::to_string(request.seed),
                                   "--timeout-ms", std::to_string(request.timeout.count())};
  if (request.busId.empty()) {
    args.insert(args.end(), {"--device", std::to_string(request.device)});
  } else {
    args.insert(args.end(), {"--bus-id", request.busId});
  }
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    if (visibleDevices && std::strncmp(*variable, "CUDA_VISIBLE_DEVICES=", 21) == 0) continue;
    environment.emplace_back(*variable);
  }
  if (visibleDevices) environment.push_back("CUDA_VISIBLE_DEVICES=" + *visibleDevices);
  std::vector<char*> envp;
  for (const std::string& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
  envp.push_back(nullptr);
  const int status = ::posix_spawn(&pid_, executable.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (status != 0) {
    pid_ = -1;
    throw Error(ErrorCode::SystemError, fmt::format("cannot start {}: {}", executable, std::strerror(status)));
  }
  const std::string line = readLine();
  if (line.rfind("socket ", 0) != 0) {
    throw Error(ErrorCode::RemoteError,
                fmt::format("exporter process: {}",
                            line.rfind("error ", 0) == 0 ? line.substr(6) : "unexpected answer '" + line + "'"));
  }
  socketPath_ = line.substr(7);
}

std::string ExporterProcess::readLine() {
  const PipeLine line = readPipeLine(fromChild_.get(), buffered_, Clock::now() + timeout_);
  if (line.end == PipeLine::End::TimedOut) {
    throw Error(ErrorCode::Timeout, fmt::format("the exporter process said nothing within {} ms", timeout_.count()));
  }
  if (line.end == PipeLine::End::Closed) throw Error(ErrorCode::RemoteError, "the exporter process exited early");
  if (line.end == PipeLine::End::Failed) {
    throw Error(ErrorCode::SystemError, fmt::format("reading the exporter process: {}", std::strerror(line.error)));
  }
  return line.text;
}

// Writing to a pipe whose reader died raises SIGPIPE, which would kill the whole process. A library must not
// change the process's signal handlers, so the write runs with SIGPIPE blocked in this thread and a
// SIGPIPE it raised is taken off the pending set before unblocking (the EPIPE return says it all).
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    alreadyPending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlocked() {
    if (!alreadyPending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
  bool alreadyPending_ = false;
};

void ExporterProcess::send(const std::string& line) {
  const std::string text = line + "\n";
  const SigpipeBlocked blocked;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t wrote = ::write(toChild_.get(), text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      throw Error(ErrorCode::RemoteError,
                  fmt::format("the exporter process stopped listening: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(wrote);
  }
}

void ExporterProcess::requestServe() {
  send("serve");
}

ExporterProcess::OwnerCheck ExporterProcess::check(std::uint64_t seed) {
  send(fmt::format("check {}", seed));
  const std::string line = readLine();
  OwnerCheck result;
  std::istringstream fields(line);
  std::string word;
  fields >> word >> result.wrongBytes >> result.lostBytes;
  if (word != "checked" || fields.fail()) {
    throw Error(ErrorCode::RemoteError,
                fmt::format("exporter process: {}", line.rfind("error ", 0) == 0 ? line.substr(6) : line));
  }
  return result;
}

ShareTimings ExporterProcess::served() {
  const std::string line = readLine();
  ShareTimings timings;
  std::istringstream fields(line);
  std::string word;
  fields >> word >> timings.exportMs >> timings.handshakeMs >> timings.importMs >> timings.mapMs;
  if (word != "served" || fields.fail()) {
    throw Error(ErrorCode::RemoteError,
                fmt::format("exporter process: {}", line.rfind("error ", 0) == 0 ? line.substr(6) : line));
  }
  return timings;
}

void ExporterProcess::finish() {
  toChild_.reset();
  if (pid_ < 0) return;
  const auto deadline = Clock::now() + timeout_;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
}

ExporterProcess::~ExporterProcess() {
  try {
    finish();
  } catch (...) {
    // A destructor cannot report; finish() only throws on impossible states.
  }
}

}  // namespace peerlink
