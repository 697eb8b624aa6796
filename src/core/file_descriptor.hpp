// FileDescriptor: move-only owner of a POSIX file descriptor, closed on destruction.
#pragma once

#include <unistd.h>

#include <utility>

namespace peerlink {

class FileDescriptor {
 public:
  FileDescriptor() noexcept = default;
  /// Takes ownership of `fd` (-1 for none).
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  ~FileDescriptor() { reset(); }

  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }

  /// The descriptor, still owned; -1 when empty.
  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  /// Gives up ownership without closing.
  int release() noexcept { return std::exchange(fd_, -1); }

  /// Closes the current descriptor (if any) and owns `fd` instead.
  void reset(int fd = -1) noexcept {
    const int old = std::exchange(fd_, fd);
    // Never retry close() on EINTR: Linux has already released the descriptor, and a retry could close
    // one another thread has just opened under the same number.
    if (old >= 0) ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace peerlink
