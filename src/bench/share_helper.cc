#include "bench/share_helper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

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

}  // namespace

int runShareExporter(const ShareExporterRequest& request, std::ostream& out) {
  try {
    ExportableBuffer buffer(request.device, request.bytes, request.kind);
    {
      DeviceGuard guard(request.device);
      kernels::launchFillPattern(buffer.data(), request.bytes, request.seed, nullptr);
      PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
    }
    out << "socket " << buffer.socketPath() << std::endl;
    const ShareTimings timings = buffer.serveOne(request.timeout);
    out << fmt::format("served {} {} {} {}", timings.exportMs, timings.handshakeMs, timings.importMs, timings.mapMs)
        << std::endl;
    // The importer maps our memory until it closes our standard input; legacy IPC memory must outlive that.
    const auto deadline = Clock::now() + request.timeout * 10;
    char byte = 0;
    while (waitReadable(STDIN_FILENO, deadline)) {
      const ssize_t got = ::read(STDIN_FILENO, &byte, 1);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return 0;
    }
    out << "error the importer never released the buffer" << std::endl;
    return 1;
  } catch (const std::exception& error) {
    std::string message = error.what();
    for (char& c : message) c = c == '\n' ? ' ' : c;
    out << "error " << message << std::endl;
    return 1;
  }
}

ExporterProcess::ExporterProcess(const std::string& executable, const ShareExporterRequest& request)
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
  const std::vector<std::string> args = {executable,     "_share-export",
                                         "--device",     std::to_string(request.device),
                                         "--bytes",      std::to_string(request.bytes),
                                         "--kind",       request.kind == ShareKind::Ipc ? "ipc" : "cumem",
                                         "--seed",       std::to_string(request.seed),
                                         "--timeout-ms", std::to_string(request.timeout.count())};
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int status = ::posix_spawn(&pid_, executable.c_str(), &actions, nullptr, argv.data(), environ);
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
  const auto deadline = Clock::now() + timeout_;
  for (;;) {
    const auto newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      return line;
    }
    if (!waitReadable(fromChild_.get(), deadline)) {
      throw Error(ErrorCode::Timeout, fmt::format("the exporter process said nothing within {} ms", timeout_.count()));
    }
    char chunk[512];
    const ssize_t got = ::read(fromChild_.get(), chunk, sizeof(chunk));
    if (got == 0) throw Error(ErrorCode::RemoteError, "the exporter process exited early");
    if (got < 0 && errno != EINTR) {
      throw Error(ErrorCode::SystemError, fmt::format("reading the exporter process: {}", std::strerror(errno)));
    }
    if (got > 0) buffered_.append(chunk, static_cast<std::size_t>(got));
  }
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
