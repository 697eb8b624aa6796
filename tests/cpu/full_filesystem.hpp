// A full file system for one forked child: the child gets a mount namespace of its own and a tmpfs over a
// directory whose space and inodes are used up, so nothing new can be made there (a full /tmp or /dev/shm as
// the code under test meets it). Needs root (CAP_SYS_ADMIN); a test probes first and skips with the reason.
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

// In a child only (it changes the child's mounts): mounts the full tmpfs over `directory`. "" when done, else
// why it could not be.
inline std::string mountFullTmpfs(const std::string& directory) {
  const auto failed = [](const char* what) { return std::string(what) + ": " + std::strerror(errno); };
  if (::unshare(CLONE_NEWNS) != 0) return failed("unshare(CLONE_NEWNS) (needs root)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failed("mount --make-rprivate /");
  // Two inodes: the root directory and one file, which then takes every block.
  if (::mount("peerlink-full", directory.c_str(), "tmpfs", 0, "size=64k,nr_inodes=2,mode=1777") != 0) {
    return failed("mount -t tmpfs");
  }
  const std::string filler = directory + "/filler";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return failed("open(filler)");
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
