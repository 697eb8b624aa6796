#include "core/private_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/deadline.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

std::string runtimeDirectory() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] == '/') return runtime;
  return "/tmp";
}

std::string privateDirectory(const std::string& parent, const std::string& name) {
  const std::string directory = parent.size() > 1 && parent.back() == '/' ? parent + name : parent + "/" + name;
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    const int error = errno;
    if (error == ENOSPC || error == EDQUOT) {
      throw Error(ErrorCode::SystemError,
                  fmt::format("mkdir({}) failed: {}: the file system holding {} has no room for a directory (df -i "
                              "{}): free some, or set XDG_RUNTIME_DIR to a private directory elsewhere",
                              directory, std::strerror(error), parent, parent));
    }
    throwSystemError(fmt::format("mkdir({})", directory), error);
  }
  struct stat status {};
  if (::lstat(directory.c_str(), &status) != 0) throwSystemError(fmt::format("lstat({})", directory), errno);
  if (!S_ISDIR(status.st_mode) || status.st_uid != ::geteuid() || (status.st_mode & 077) != 0) {
    throw Error(ErrorCode::SystemError,
                fmt::format("{} is {} owned by uid {} with mode {:04o}; peerlink needs a directory of uid {} that only "
                            "it can enter (mode 0700): remove it",
                            directory,
                            S_ISDIR(status.st_mode)   ? "a directory"
                            : S_ISLNK(status.st_mode) ? "a symbolic link"
                                                      : "not a directory",
                            status.st_uid, status.st_mode & 07777, ::geteuid()));
  }
  return directory;
}

}  // namespace peerlink
