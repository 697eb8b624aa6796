// A full or a small file system for one forked child: the child gets a mount namespace of its own and a tmpfs over
// a directory, either with its space and inodes used up, so nothing new can be made there (a full /tmp or
// /dev/shm as the code under test meets it), or with little space (a container's /dev/shm). Needs root
// (CAP_SYS_ADMIN); a test probes first and skips with the reason.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace peerlink::testing {

inline std::string failedCall(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// In a child only (it changes the child's mounts): a tmpfs with `options` over `directory` in a mount namespace
// of the child's own. "" when done, else why it could not be.
inline std::string mountTmpfs(const std::string& directory, const std::string& options) {
  if (::unshare(CLONE_NEWNS) != 0) return failedCall("unshare(CLONE_NEWNS) (needs root)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return failedCall("mount --make-rprivate /");
  }
  if (::mount("peerlink-test", directory.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    return failedCall("mount -t tmpfs");
  }
  return "";
}

// In a child only: a tmpfs of `kib` KiB with inodes to spare over `directory` (a small /dev/shm, as a
// container's). "" when done, else why it could not be.
inline std::string mountSmallTmpfs(const std::string& directory, int kib) {
  return mountTmpfs(directory, "size=" + std::to_string(kib) + "k,mode=1777");
}

// In a child only: mounts the full tmpfs over `directory`. "" when done, else why it could not be.
inline std::string mountFullTmpfs(const std::string& directory) {
  // Two inodes: the root directory and one file, which then takes every block.
  if (std::string why = mountTmpfs(directory, "size=64k,nr_inodes=2,mode=1777"); !why.empty()) return why;
  const std::string filler = directory + "/filler";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return failedCall("open(filler)");
  const std::vector<char> block(4096, 'x');
  while (::write(fd, block.data(), block.size()) > 0) {
  }
  const int error = errno;
  ::close(fd);
  if (error != ENOSPC) return "filling the tmpfs ended with " + std::string(std::strerror(error));
  const int more = ::open((directory + "/more").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (more >= 0 || errno != ENOSPC) return "the tmpfs still had an inode free";
  return "";
}

}  // namespace peerlink::testing
