#include "core/unix_socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/deadline.hpp"
#include "core/private_directory.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

using Clock = DeadlineClock;
using std::chrono::milliseconds;

// A peer may attach a few descriptors by mistake; room for some lets us close them instead of losing count.
constexpr std::size_t kMaxReceivedFds = 4;
constexpr milliseconds kConnectRetryInterval{10};

sockaddr_un makeAddress(const std::string& path) {
  sockaddr_un address{};
  if (path.empty() || path.find('\0') != std::string::npos) {
    throw Error(ErrorCode::InvalidUsage, "a unix socket path must be non-empty and contain no NUL byte");
  }
  if (path.size() >= sizeof(address.sun_path)) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("unix socket path '{}' is {} bytes long; the limit is {} (sizeof sun_path minus the NUL)",
                            path, path.size(), sizeof(address.sun_path) - 1));
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

ucred peerCredentials(int fd, const std::string& path) {
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    throwSystemError(fmt::format("getsockopt(SO_PEERCRED) on unix socket {}", path), errno);
  }
  return credentials;
}

int bindOwnerOnly(int fd, const sockaddr_un& address) {
  // bind() creates the socket file with mode 0777 & ~umask, so a umask is the only way to have it private
  // from its first instant (chmod afterwards leaves a window). umask is per process: the lock keeps
  // concurrent peerlink binds from restoring each other's temporary value.
  static std::mutex umaskMutex;
  std::lock_guard<std::mutex> lock(umaskMutex);
  const mode_t previous = ::umask(0177);
  const int result = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int error = errno;
  ::umask(previous);
  errno = error;
  return result;
}

}  // namespace

std::string defaultSocketDirectory() {
  return privateDirectory(runtimeDirectory(), fmt::format("peerlink-{}", ::geteuid()));
}

// ---- UnixConnection -------------------------------------------------------------------------------

UnixConnection::UnixConnection(FileDescriptor socket, std::string path)
    : socket_(std::move(socket)), path_(std::move(path)) {
  if (!socket_) throw Error(ErrorCode::InvalidUsage, fmt::format("unix socket {}: no descriptor", path_));
  const int flags = ::fcntl(socket_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(socket_.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    throwSystemError(fmt::format("fcntl(O_NONBLOCK) on unix socket {}", path_), errno);
  }
  const ucred credentials = peerCredentials(socket_.get(), path_);
  peerPid_ = credentials.pid;
  peerUid_ = credentials.uid;
}

void UnixConnection::sendMessage(const void* data, std::size_t size, milliseconds timeout) {
  sendFrame(0, -1, data, size, timeout, "sendMessage");
}

std::vector<std::uint8_t> UnixConnection::receiveMessage(milliseconds timeout) {
  return receiveFrame(false, nullptr, timeout, "receiveMessage");
}

void UnixConnection::sendFd(int fd, const void* payload, std::size_t size, milliseconds timeout) {
  if (fd < 0) throw Error(ErrorCode::InvalidUsage, fmt::format("sendFd on unix socket {}: invalid fd {}", path_, fd));
  sendFrame(kUnixFrameHasFd, fd, payload, size, timeout, "sendFd");
}

ReceivedFd UnixConnection::receiveFd(milliseconds timeout) {
  ReceivedFd received;
  received.payload = receiveFrame(true, &received.fd, timeout, "receiveFd");
  return received;
}

void UnixConnection::sendFrame(std::uint32_t flags, int fd, const void* data, std::size_t size, milliseconds timeout,
                               const char* operation) {
  if (size > kMaxUnixMessageBytes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} on unix socket {}: {} bytes is more than the {} bytes one message may carry", operation,
                            path_, size, kMaxUnixMessageBytes));
  }
  if (size > 0 && data == nullptr) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} on unix socket {}: null data", operation, path_));
  }
  const auto deadline = deadlineAfter(timeout);
  UnixFrameHeader header;
  header.magic = kUnixFrameMagic;
  header.flags = flags;
  header.size = size;
  auto* headerBytes = reinterpret_cast<char*>(&header);
  auto* payload = static_cast<char*>(const_cast<void*>(data));
  const std::size_t total = sizeof(header) + size;
  std::size_t sent = 0;
  bool fdSent = fd < 0;

  while (sent < total) {
    iovec parts[2];
    int count = 0;
    if (sent < sizeof(header)) {
      parts[count++] = {headerBytes + sent, sizeof(header) - sent};
      if (size > 0) parts[count++] = {payload, size};
    } else {
      parts[count++] = {payload + (sent - sizeof(header)), total - sent};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<std::size_t>(count);
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (!fdSent) {
      message.msg_control = control;
      message.msg_controllen = sizeof(control);
      cmsghdr* entry = CMSG_FIRSTHDR(&message);
      entry->cmsg_level = SOL_SOCKET;
      entry->cmsg_type = SCM_RIGHTS;
      entry->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(entry), &fd, sizeof(int));
    }
    const ssize_t written = ::sendmsg(socket_.get(), &message, MSG_NOSIGNAL);
    if (written >= 0) {
      // The kernel attaches the descriptor to the first byte this call queued.
      sent += static_cast<std::size_t>(written);
      fdSent = true;
      continue;
    }
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      if (!waitForFd(socket_.get(), POLLOUT, deadline)) {
        throw Error(ErrorCode::Timeout,
                    fmt::format("{} on unix socket {} timed out after {} ms ({} of {} bytes sent; peer pid {} not "
                                "reading)",
                                operation, path_, timeout.count(), sent, total, peerPid_));
      }
      continue;
    }
    if (error == EPIPE || error == ECONNRESET) {
      throw Error(ErrorCode::RemoteError,
                  fmt::format("{} on unix socket {}: peer (pid {}) closed the connection after {} of {} bytes",
                              operation, path_, peerPid_, sent, total));
    }
    throwSystemError(fmt::format("sendmsg ({} on unix socket {})", operation, path_), error);
  }
}

std::vector<std::uint8_t> UnixConnection::receiveFrame(bool expectFd, FileDescriptor* fd, milliseconds timeout,
                                                       const char* operation) {
  const auto deadline = deadlineAfter(timeout);
  FileDescriptor passed;
  std::size_t strayFds = 0;

  // Reads into [buffer, buffer + size) until full, keeping any descriptor that arrives; `part` labels errors.
  auto readFully = [&](char* buffer, std::size_t size, const char* part) {
    std::size_t got = 0;
    while (got < size) {
      iovec vector{buffer + got, size - got};
      msghdr message{};
      message.msg_iov = &vector;
      message.msg_iovlen = 1;
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReceivedFds)];
      message.msg_control = control;
      message.msg_controllen = sizeof(control);
      const ssize_t n = ::recvmsg(socket_.get(), &message, MSG_CMSG_CLOEXEC);
      if (n < 0) {
        const int error = errno;
        if (error == EINTR) continue;
        if (error == EAGAIN || error == EWOULDBLOCK) {
          if (!waitForFd(socket_.get(), POLLIN, deadline)) {
            throw Error(ErrorCode::Timeout,
                        fmt::format("{} on unix socket {} timed out after {} ms ({} of {} {} bytes received from "
                                    "peer pid {})",
                                    operation, path_, timeout.count(), got, size, part, peerPid_));
          }
          continue;
        }
        if (error == ECONNRESET) {
          throw Error(ErrorCode::RemoteError,
                      fmt::format("{} on unix socket {}: peer (pid {}) reset the connection after {} of {} {} bytes",
                                  operation, path_, peerPid_, got, size, part));
        }
        throwSystemError(fmt::format("recvmsg ({} on unix socket {})", operation, path_), error);
      }
      for (cmsghdr* entry = CMSG_FIRSTHDR(&message); entry != nullptr; entry = CMSG_NXTHDR(&message, entry)) {
        if (entry->cmsg_level != SOL_SOCKET || entry->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (entry->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
          int received = -1;
          std::memcpy(&received, CMSG_DATA(entry) + i * sizeof(int), sizeof(int));
          if (!passed) {
            passed.reset(received);
          } else {
            FileDescriptor extra(received);
            ++strayFds;
          }
        }
      }
      if ((message.msg_flags & MSG_CTRUNC) != 0) {
        // Descriptors that did not fit (or exceeded RLIMIT_NOFILE) were closed by the kernel.
        throw Error(ErrorCode::InvalidInput,
                    fmt::format("{} on unix socket {}: descriptors from peer pid {} were dropped (more than {} in one "
                                "frame, or this process is out of descriptors)",
                                operation, path_, peerPid_, kMaxReceivedFds));
      }
      if (n == 0) {
        throw Error(ErrorCode::RemoteError,
                    fmt::format("{} on unix socket {}: peer (pid {}) closed the connection after {} of {} {} bytes",
                                operation, path_, peerPid_, got, size, part));
      }
      got += static_cast<std::size_t>(n);
    }
  };

  UnixFrameHeader header;
  readFully(reinterpret_cast<char*>(&header), sizeof(header), "frame header");
  if (header.magic != kUnixFrameMagic) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{} on unix socket {}: peer pid {} sent 0x{:08x}, not a peerlink "
                                                     "frame (magic 0x{:08x})",
                                                     operation, path_, peerPid_, header.magic, kUnixFrameMagic));
  }
  if (header.size > kMaxUnixMessageBytes) {
    throw Error(
        ErrorCode::InvalidInput,
        fmt::format("{} on unix socket {}: peer pid {} announced a {} byte message, more than the {} byte limit",
                    operation, path_, peerPid_, header.size, kMaxUnixMessageBytes));
  }
  const bool hasFd = (header.flags & kUnixFrameHasFd) != 0;
  if (hasFd != expectFd) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{} on unix socket {}: expected {}, peer pid {} sent {}",
                                                     operation, path_, expectFd ? "a file descriptor" : "a message",
                                                     peerPid_, hasFd ? "a file descriptor" : "a message without one"));
  }
  std::vector<std::uint8_t> payload(static_cast<std::size_t>(header.size));
  readFully(reinterpret_cast<char*>(payload.data()), payload.size(), "payload");
  if (strayFds > 0 || hasFd != passed.valid()) {
    throw Error(ErrorCode::InvalidInput,
                fmt::format("{} on unix socket {}: peer pid {} announced {} descriptor(s) but {} arrived", operation,
                            path_, peerPid_, hasFd ? 1 : 0, strayFds + (passed ? 1 : 0)));
  }
  if (fd != nullptr) *fd = std::move(passed);
  return payload;
}

// ---- UnixListener ---------------------------------------------------------------------------------

UnixListener::UnixListener(const std::string& name, const UnixListenerOptions& options)
    : allowedUid_(options.allowedUid.value_or(::geteuid())), ownerPid_(::getpid()) {
  if (name.empty() || name.find('/') != std::string::npos) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("unix socket name '{}' must be a non-empty file name without '/'", name));
  }
  const std::string directory = options.directory.empty() ? defaultSocketDirectory() : options.directory;
  const std::string path = directory.back() == '/' ? directory + name : directory + "/" + name;
  const sockaddr_un address = makeAddress(path);

  socket_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket_) throwSystemError("socket(AF_UNIX, SOCK_STREAM)", errno);
  if (bindOwnerOnly(socket_.get(), address) != 0) {
    const int error = errno;
    if (error == EADDRINUSE) {
      throw Error(ErrorCode::SystemError,
                  fmt::format("bind({}) failed: {} (another listener, or a socket left by a crashed process: remove "
                              "it if no process uses it)",
                              path, std::strerror(error)));
    }
    throwSystemError(fmt::format("bind({})", path), error);
  }
  try {
    struct stat status {};
    if (::lstat(path.c_str(), &status) != 0) throwSystemError(fmt::format("lstat({})", path), errno);
    if ((status.st_mode & 0777) != 0600 && ::chmod(path.c_str(), 0600) != 0) {
      throwSystemError(fmt::format("chmod({}, 0600)", path), errno);
    }
    device_ = status.st_dev;
    inode_ = status.st_ino;
    if (::listen(socket_.get(), options.backlog) != 0) throwSystemError(fmt::format("listen({})", path), errno);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  path_ = path;
}

UnixListener::~UnixListener() {
  unlinkPath();
}

UnixListener::UnixListener(UnixListener&& other) noexcept
    : socket_(std::move(other.socket_)),
      path_(std::exchange(other.path_, std::string())),
      allowedUid_(other.allowedUid_),
      ownerPid_(other.ownerPid_),
      device_(other.device_),
      inode_(other.inode_) {}

UnixListener& UnixListener::operator=(UnixListener&& other) noexcept {
  if (this != &other) {
    unlinkPath();
    socket_ = std::move(other.socket_);
    path_ = std::exchange(other.path_, std::string());
    allowedUid_ = other.allowedUid_;
    ownerPid_ = other.ownerPid_;
    device_ = other.device_;
    inode_ = other.inode_;
  }
  return *this;
}

void UnixListener::unlinkPath() noexcept {
  if (path_.empty() || ::getpid() != ownerPid_) return;
  struct stat status {};
  if (::lstat(path_.c_str(), &status) == 0 && S_ISSOCK(status.st_mode) && status.st_dev == device_ &&
      status.st_ino == inode_) {
    ::unlink(path_.c_str());
  }
  path_.clear();
}

UnixConnection UnixListener::accept(milliseconds timeout) {
  const auto deadline = deadlineAfter(timeout);
  for (;;) {
    const int fd = ::accept4(socket_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      UnixConnection connection(FileDescriptor(fd), path_);
      if (connection.peerUid() != allowedUid_) {
        throw Error(ErrorCode::RemoteError,
                    fmt::format("unix socket {}: refused connection from uid {} (pid {}) (only uid {} may connect)",
                                path_, connection.peerUid(), connection.peerPid(), allowedUid_));
      }
      return connection;
    }
    const int error = errno;
    // ECONNABORTED: the peer gave up between connect and accept; wait for the next one.
    if (error == EINTR || error == ECONNABORTED) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      if (!waitForFd(socket_.get(), POLLIN, deadline)) {
        throw Error(ErrorCode::Timeout, fmt::format("accept on unix socket {} timed out after {} ms: no peer connected",
                                                    path_, timeout.count()));
      }
      continue;
    }
    throwSystemError(fmt::format("accept4({})", path_), error);
  }
}

// ---- connectUnix ----------------------------------------------------------------------------------

UnixConnection connectUnix(const std::string& path, milliseconds timeout, std::optional<uid_t> allowedUid) {
  const sockaddr_un address = makeAddress(path);
  const uid_t expectedUid = allowedUid.value_or(::geteuid());
  const auto deadline = deadlineAfter(timeout);
  for (;;) {
    FileDescriptor socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket) throwSystemError("socket(AF_UNIX, SOCK_STREAM)", errno);
    if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
      UnixConnection connection(std::move(socket), path);
      if (connection.peerUid() != expectedUid) {
        throw Error(ErrorCode::RemoteError,
                    fmt::format("unix socket {}: refused the listener, which runs as uid {} (pid {}) (only uid {} is "
                                "trusted)",
                                path, connection.peerUid(), connection.peerPid(), expectedUid));
      }
      return connection;
    }
    const int error = errno;
    // Non-blocking connect on AF_UNIX completes at once or fails; EAGAIN means the backlog is full.
    if (error != ENOENT && error != ECONNREFUSED && error != EAGAIN && error != EINTR) {
      throwSystemError(fmt::format("connect({})", path), error);
    }
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) {
      throw Error(ErrorCode::Timeout, fmt::format("connect to unix socket {} timed out after {} ms (last error: {})",
                                                  path, timeout.count(), std::strerror(error)));
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(left, kConnectRetryInterval));
  }
}

}  // namespace peerlink
