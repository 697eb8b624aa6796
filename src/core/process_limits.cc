#include "core/process_limits.hpp"

#include <dirent.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace peerlink {
namespace {

std::string descriptorsNote() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  DIR* directory = ::opendir("/proc/self/fd");
  if (directory == nullptr) {
    if (errno != EMFILE) return "";
    return fmt::format(
        "; this process has no file descriptor left (its limit, RLIMIT_NOFILE, is {}): raise it "
        "(ulimit -n 65536)",
        limit.rlim_cur);
  }
  long open = -1;  // the listing's own descriptor
  while (const dirent* entry = ::readdir(directory)) open += entry->d_name[0] != '.';
  ::closedir(directory);
  if (static_cast<long long>(limit.rlim_cur) - open >= kFewDescriptorsLeft) return "";
  return fmt::format(
      "; this process holds {} of the {} file descriptors its limit allows (RLIMIT_NOFILE): raise it "
      "(ulimit -n 65536)",
      open, limit.rlim_cur);
}

std::string addressSpaceNote() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= static_cast<rlim_t>(kCudaAddressSpaceBytes)) {
    return "";
  }
  return fmt::format(
      "; this process's address space is limited to {:.1f} GiB (RLIMIT_AS), less than CUDA reserves "
      "for the GPUs' memory: lift it (ulimit -v unlimited)",
      static_cast<double>(limit.rlim_cur) / (1ULL << 30));
}

}  // namespace

std::string processShortageNote() {
  return descriptorsNote() + addressSpaceNote();
}

}  // namespace peerlink
