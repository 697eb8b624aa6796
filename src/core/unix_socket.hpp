// Bootstrap sockets: Unix-domain stream sockets between processes of one user on one machine, carrying
// framed messages and file descriptors (SCM_RIGHTS). The IPC and CUMEM routes exchange memory handles
// and exported fds through them.
//
// Security: a listener's socket file has mode 0600 from the moment it exists, in a private directory (mode
// 0700, this uid's) unless the caller names another, and both ends check the other's uid with SO_PEERCRED and
// refuse a stranger. Filesystem paths only: abstract names have no permissions.
//
// Every call that waits takes a timeout and throws Error(Timeout) naming the operation, the socket path
// and the timeout. A peer that goes away mid-frame gives Error(RemoteError), never a hang or SIGPIPE.
// After any error the connection's stream position is unknown: close it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/file_descriptor.hpp"

namespace peerlink {

/// Largest payload of one frame (sending more is Error(InvalidUsage), receiving more Error(InvalidInput)).
constexpr std::size_t kMaxUnixMessageBytes = std::size_t{64} << 20;

/// Wire format of one frame: this header in host byte order (both ends are on one machine), then `size`
/// payload bytes. A passed file descriptor rides on the header's first byte.
struct UnixFrameHeader {
  std::uint32_t magic = 0;  ///< kUnixFrameMagic
  std::uint32_t flags = 0;  ///< kUnixFrameHasFd or 0
  std::uint64_t size = 0;   ///< payload bytes
};
constexpr std::uint32_t kUnixFrameMagic = 0x504c4b31;  // "PLK1"
constexpr std::uint32_t kUnixFrameHasFd = 1;

/// runtimeDirectory()/peerlink-<euid>, made private (mode 0700, this uid's: core/private_directory.hpp) when
/// missing; Error(SystemError) when it cannot be made or someone else's is there.
std::string defaultSocketDirectory();

/// A file descriptor received with its payload.
struct ReceivedFd {
  FileDescriptor fd;
  std::vector<std::uint8_t> payload;
};

/// One connected end. Move-only; closing (destruction) makes the peer's next receive fail with
/// Error(RemoteError).
class UnixConnection {
 public:
  /// Takes a connected AF_UNIX stream socket and reads its peer's credentials. `path` names the socket
  /// in error messages. The descriptor is made non-blocking.
  UnixConnection(FileDescriptor socket, std::string path);

  /// Sends one frame of `size` bytes.
  void sendMessage(const void* data, std::size_t size, std::chrono::milliseconds timeout);
  /// Receives one frame; Error(InvalidInput) when the peer sent a file descriptor instead.
  std::vector<std::uint8_t> receiveMessage(std::chrono::milliseconds timeout);

  /// Sends a duplicate of `fd` (the caller keeps its own) with a payload.
  void sendFd(int fd, const void* payload, std::size_t size, std::chrono::milliseconds timeout);
  /// Receives a descriptor (close-on-exec) and its payload; Error(InvalidInput) when the frame has none.
  ReceivedFd receiveFd(std::chrono::milliseconds timeout);

  /// Credentials of the peer process at connect (accepting side) or listen (connecting side) time.
  pid_t peerPid() const noexcept { return peerPid_; }
  uid_t peerUid() const noexcept { return peerUid_; }
  /// The socket path this connection was made through.
  const std::string& path() const noexcept { return path_; }
  /// The socket descriptor, still owned.
  int fd() const noexcept { return socket_.get(); }

 private:
  void sendFrame(std::uint32_t flags, int fd, const void* data, std::size_t size, std::chrono::milliseconds timeout,
                 const char* operation);
  std::vector<std::uint8_t> receiveFrame(bool expectFd, FileDescriptor* fd, std::chrono::milliseconds timeout,
                                         const char* operation);

  FileDescriptor socket_;
  std::string path_;
  pid_t peerPid_ = 0;
  uid_t peerUid_ = 0;
};

struct UnixListenerOptions {
  /// Where the socket file goes; empty means defaultSocketDirectory().
  std::string directory;
  /// The uid peers must have; empty means ours (geteuid()). Tests set another to simulate a stranger.
  std::optional<uid_t> allowedUid;
  int backlog = 16;
};

/// A listening socket at `directory`/`name`, mode 0600, unlinked on destruction.
class UnixListener {
 public:
  /// `name` is a file name (no '/'). Error(InvalidUsage) when the path does not fit a sockaddr_un,
  /// Error(SystemError) naming the call when the socket cannot be made (e.g. the path already exists).
  explicit UnixListener(const std::string& name, const UnixListenerOptions& options = {});
  ~UnixListener();

  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;
  UnixListener(UnixListener&& other) noexcept;
  UnixListener& operator=(UnixListener&& other) noexcept;

  /// Waits for one peer. Error(Timeout) when none comes in time; Error(RemoteError) naming both uids when
  /// the peer's uid is not the allowed one (its connection is closed).
  UnixConnection accept(std::chrono::milliseconds timeout);

  const std::string& path() const noexcept { return path_; }
  uid_t allowedUid() const noexcept { return allowedUid_; }
  int fd() const noexcept { return socket_.get(); }

 private:
  void unlinkPath() noexcept;

  FileDescriptor socket_;
  std::string path_;
  uid_t allowedUid_ = 0;
  pid_t ownerPid_ = 0;  ///< a forked child must not unlink its parent's socket
  dev_t device_ = 0;    ///< identity of the socket file we created, so we unlink only that one
  ino_t inode_ = 0;
};

/// Connects to the listener at `path`, retrying while it does not exist yet or refuses (ENOENT,
/// ECONNREFUSED, a full backlog) until `timeout`, then Error(Timeout). Error(RemoteError) when the
/// listener's uid is not `allowedUid` (default: ours).
UnixConnection connectUnix(const std::string& path, std::chrono::milliseconds timeout,
                           std::optional<uid_t> allowedUid = std::nullopt);

}  // namespace peerlink
