// Shared host memory of a world's processes (host_segments.hpp).
#include "coll/host_segments.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/unique_id.hpp"
#include "coll/world_agreement.hpp"
#include "core/deadline.hpp"
#include "core/file_descriptor.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// Room for "/peerlink-<purpose>-<pid>-<rank>-" and 32 hex digits, NUL-padded in the all-gather.
constexpr std::size_t kNameBytes = 128;

std::string segmentName(const std::string& prefix, int rank) {
  const bootstrap::Token token = bootstrap::randomToken();
  std::string hex;
  for (const std::uint8_t byte : token) hex += fmt::format("{:02x}", byte);
  return fmt::format("{}{}-{}-{}", prefix, ::getpid(), rank, hex);
}

void* mapSegment(const std::string& name, std::size_t bytes, bool create) {
  const int fd =
      create ? ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600) : ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) throwSystemError(fmt::format("shm_open of {}", name), errno);
  FileDescriptor owned(fd);
  if (create) {
    // ftruncate alone would make a tmpfs file of any size without its pages: with less room left in /dev/shm
    // than the segment needs, the first write past the room kills the process with SIGBUS. Reserve the pages.
    const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    if (error == ENOSPC) {
      throw Error(ErrorCode::SystemError,
                  fmt::format("/dev/shm has no room for the {} bytes of {} (each rank of this host needs such a "
                              "segment: df -h /dev/shm; in a container, docker run --shm-size=1g or --ipc=host)",
                              bytes, name));
    }
    if (error != 0) throwSystemError(fmt::format("posix_fallocate of {} to {} bytes", name, bytes), error);
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) throwSystemError(fmt::format("mmap of {} ({} bytes)", name, bytes), errno);
  return base;
}

}  // namespace

std::vector<HostSegment> mapHostSegments(const World& world, const WorldAllGather& allGather, std::size_t bytes,
                                         const std::string& purpose) {
  const std::string prefix = "/peerlink-" + purpose + "-";
  std::vector<HostSegment> segments(static_cast<std::size_t>(world.nranks));
  std::vector<std::string> created;
  std::string why;  // this process's first failure
  std::vector<std::vector<std::uint8_t>> blobs;
  for (const int r : world.localRanks) {
    std::vector<std::uint8_t> blob(kNameBytes, 0);  // an empty name: this rank's segment could not be made
    if (why.empty()) {
      try {
        const std::string name = segmentName(prefix, r);
        if (name.size() >= kNameBytes) {
          throw Error(ErrorCode::SystemError,
                      fmt::format("the segment name {} is longer than {} bytes", name, kNameBytes - 1));
        }
        created.push_back(name);
        segments[static_cast<std::size_t>(r)] = {mapSegment(name, bytes, true), bytes};
        std::memcpy(blob.data(), name.data(), name.size());
      } catch (const Error& error) {
        why = error.what();
      }
    }
    blobs.push_back(std::move(blob));
  }
  std::vector<std::uint8_t> all;
  try {
    all = allGather(blobs, kNameBytes);
  } catch (...) {
    for (const std::string& name : created) ::shm_unlink(name.c_str());
    unmapHostSegments(segments);
    throw;
  }
  for (int r = 0; r < world.nranks && why.empty(); ++r) {
    HostSegment& segment = segments[static_cast<std::size_t>(r)];
    if (segment.base != nullptr) continue;
    const char* text = reinterpret_cast<const char*>(all.data() + static_cast<std::size_t>(r) * kNameBytes);
    const std::string name(text, strnlen(text, kNameBytes));
    if (name.empty()) continue;  // that process failed: the agreement below says so
    try {
      if (name.rfind(prefix, 0) != 0) {
        throw Error(ErrorCode::InvalidInput, fmt::format("rank {} sent '{}' as its segment's name", r, name));
      }
      segment = {mapSegment(name, bytes, false), bytes};
    } catch (const Error& error) {
      why = error.what();
    }
  }
  std::vector<int> failed;
  try {
    // Also the meeting after which every process has opened every segment: the names may go.
    failed = ranksThatFailed(allGather, world.localRanks.size(), world.nranks, !why.empty());
  } catch (...) {
    for (const std::string& name : created) ::shm_unlink(name.c_str());
    unmapHostSegments(segments);
    throw;
  }
  for (const std::string& name : created) ::shm_unlink(name.c_str());
  if (!failed.empty()) {
    unmapHostSegments(segments);
    throw Error(
        ErrorCode::SystemError,
        fmt::format("shared host memory ({}): the process(es) of rank(s) {} could not create or open the "
                    "segments{}{}{}",
                    purpose, fmt::join(failed, ", "), why.empty() ? "" : " (here: ", why, why.empty() ? "" : ")"));
  }
  return segments;
}

void unmapHostSegments(std::vector<HostSegment>& segments) noexcept {
  for (HostSegment& segment : segments) {
    if (segment.base != nullptr) ::munmap(segment.base, segment.bytes);
    segment = {};
  }
}

}  // namespace peerlink::coll
