#include "output_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "core/file_descriptor.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kMaxLinkHops = 40;  // as the kernel's own limit on symbolic links in a path (ELOOP)

[[noreturn]] void cannotWrite(ErrorCode code, const std::string& path, const std::string& why) {
  throw Error(code, fmt::format("cannot write {}: {}", printable(path), why));
}

bool underSystemTree(const std::string& path) {
  return path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0;
}

// Writes all of `content` to `fd`, waiting for room (a pipe, a FIFO) at most kSpecialFileWait at a time.
void writeAll(int fd, const std::string& content, const std::string& path) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd waiting{fd, POLLOUT, 0};
      const int ready = ::poll(&waiting, 1, static_cast<int>(std::chrono::milliseconds(kSpecialFileWait).count()));
      if (ready == 0) {
        cannotWrite(ErrorCode::SystemError, path,
                    fmt::format("no room to write for {} s (does its reader read?)", kSpecialFileWait.count()));
      }
      continue;
    }
    cannotWrite(ErrorCode::SystemError, path, std::strerror(errno));
  }
}

// A device, a FIFO or a /proc descriptor: opened in place. O_APPEND leaves what a shell's `>>` holds;
// O_NONBLOCK keeps a FIFO nobody reads from blocking open() forever.
void writeInPlace(const std::string& path, const std::string& content) {
  const auto deadline = Clock::now() + kSpecialFileWait;
  FileDescriptor fd;
  while (true) {
    fd.reset(::open(path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd || errno != ENXIO) break;
    if (Clock::now() > deadline) {
      cannotWrite(ErrorCode::InvalidUsage, path,
                  fmt::format("no process opened it for reading within {} s", kSpecialFileWait.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!fd) cannotWrite(ErrorCode::InvalidUsage, path, std::strerror(errno));
  writeAll(fd.get(), content, path);
}

// A regular file: a temporary file beside it, renamed over it, so a failure leaves no partial file.
void replaceFile(const std::string& shownPath, const fs::path& target, const std::string& content) {
  // The temporary name stays short whatever the target's (a file name may have 255 bytes).
  const std::string name = target.filename().string();
  const fs::path temporary =
      target.parent_path() / fmt::format(".{}.{}.tmp", name.substr(0, 100), static_cast<long>(::getpid()));
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd) cannotWrite(ErrorCode::InvalidUsage, shownPath, std::strerror(errno));
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0) ::fchmod(fd.get(), existing.st_mode & 07777);
  try {
    writeAll(fd.get(), content, shownPath);
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  if (::close(fd.release()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    cannotWrite(ErrorCode::SystemError, shownPath, reason);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    cannotWrite(ErrorCode::InvalidUsage, shownPath, reason);
  }
}

}  // namespace

OutputTarget resolveOutputTarget(const std::string& path) {
  if (path.empty()) throw Error(ErrorCode::InvalidUsage, "an output file name is empty");
  if (path == "-") return {OutputTarget::Kind::Stdout, path};
  fs::path current(path);
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    if (underSystemTree(current.string())) return {OutputTarget::Kind::Direct, path};
    struct stat link {};
    if (::lstat(current.c_str(), &link) != 0) return {OutputTarget::Kind::Replace, current.string()};  // new file
    if (S_ISLNK(link.st_mode)) {
      std::error_code error;
      const fs::path next = fs::read_symlink(current, error);
      if (error) cannotWrite(ErrorCode::InvalidUsage, path, error.message());
      current = next.is_absolute() ? next : current.parent_path() / next;
      continue;
    }
    if (S_ISDIR(link.st_mode)) cannotWrite(ErrorCode::InvalidUsage, path, "it is a folder, not a file");
    if (S_ISREG(link.st_mode)) return {OutputTarget::Kind::Replace, current.string()};
    return {OutputTarget::Kind::Direct, path};
  }
  cannotWrite(ErrorCode::InvalidUsage, path, "too many levels of symbolic links");
}

void writeOutputFile(const std::string& path, const std::string& content, std::ostream& stdoutStream) {
  const OutputTarget target = resolveOutputTarget(path);
  switch (target.kind) {
    case OutputTarget::Kind::Stdout: stdoutStream << content; return;
    case OutputTarget::Kind::Direct:
      stdoutStream.flush();  // what the command printed comes first, wherever the file leads
      writeInPlace(path, content);
      return;
    case OutputTarget::Kind::Replace: replaceFile(path, target.path, content); return;
  }
}

void checkOutputPath(const char* flag, const std::string& path) {
  if (path.empty() || path == "-") return;
  OutputTarget target;
  try {
    target = resolveOutputTarget(path);
  } catch (const Error& error) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} {}", flag, error.what()));
  }
  if (target.kind != OutputTarget::Kind::Replace) return;
  const fs::path file(target.path);
  const fs::path folder = file.has_parent_path() ? file.parent_path() : ".";
  const std::string shown = printable(path);
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} {}: folder {} does not exist", flag, shown, printable(folder.string())));
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} {}: folder {} is not writable", flag, shown, printable(folder.string())));
  }
}

}  // namespace peerlink::cli
