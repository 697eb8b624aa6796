#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "core/file_descriptor.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string sizeText(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

// Reads until end of file, failing once more than `maxBytes` arrived (a file may grow while it is read, and
// standard input has no size to check first).
std::string readCapped(int fd, std::size_t maxBytes, const std::function<void(const std::string&)>& fail) {
  std::string content;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(fmt::format("cannot read: {}", std::strerror(errno)));
    }
    if (got == 0) return content;
    if (content.size() + static_cast<std::size_t>(got) > maxBytes) {
      fail(fmt::format("larger than the {} peerlink reads", sizeText(maxBytes)));
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
}

}  // namespace

std::string readInputFile(const std::string& path, const std::string& what, std::size_t maxBytes) {
  const std::string shown = printable(path, 200);
  auto fail = [&](const std::string& problem) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{} {}: {}", what, shown, problem));
  };
  if (path.empty()) throw Error(ErrorCode::InvalidInput, fmt::format("{}: the file name is empty", what));
  if (path == "-") return readCapped(STDIN_FILENO, maxBytes, fail);

  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) fail(fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) fail(fmt::format("cannot read: {}", std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) {
    fail(fmt::format("is {}, not a regular file (peerlink reads files, or '-' for standard input)",
                     fileTypeName(info.st_mode)));
  }
  if (static_cast<std::uint64_t>(info.st_size) > maxBytes) {
    fail(fmt::format("is {} bytes, larger than the {} peerlink reads", info.st_size, sizeText(maxBytes)));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return readCapped(fd.get(), maxBytes, fail);
}

}  // namespace peerlink
