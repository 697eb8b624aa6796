#include "core/system_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/deadline.hpp"
#include "core/file_descriptor.hpp"

namespace peerlink {

std::optional<std::string> readSystemFile(const std::string& path, int* error, std::size_t limit) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!file) {
    if (error != nullptr) *error = errno;
    return std::nullopt;
  }
  std::string text;
  char buffer[4096];
  while (text.size() < limit) {
    const ssize_t n = ::read(file.get(), buffer, std::min(sizeof(buffer), limit - text.size()));
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error != nullptr) *error = errno;
      return std::nullopt;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

std::string systemFileFailure(const std::string& path, int error) {
  return fmt::format("cannot read {}: {}{}", path, std::strerror(error), shortageHint(error));
}

}  // namespace peerlink
