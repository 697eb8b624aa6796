// Shared host stages (plan_stages.hpp).
#include "coll/plan_stages.hpp"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "bootstrap/unique_id.hpp"
#include "core/cuda_check.hpp"
#include "core/deadline.hpp"
#include "core/file_descriptor.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// "/peerlink-stage-" + pid + rank + 32 hex digits, NUL-padded in the all-gather.
constexpr std::size_t kNameBytes = 96;

std::string segmentName(int rank) {
  const bootstrap::Token token = bootstrap::randomToken();
  std::string hex;
  for (const std::uint8_t byte : token) hex += fmt::format("{:02x}", byte);
  return fmt::format("/peerlink-stage-{}-{}-{}", ::getpid(), rank, hex);
}

void* mapSegment(const std::string& name, std::size_t bytes, bool create) {
  const int fd =
      create ? ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600) : ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) throwSystemError(fmt::format("shm_open of the host stage {}", name), errno);
  FileDescriptor owned(fd);
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    ::shm_unlink(name.c_str());
    throwSystemError(fmt::format("ftruncate of the host stage {} to {} bytes", name, bytes), error);
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int error = errno;
    if (create) ::shm_unlink(name.c_str());
    throwSystemError(fmt::format("mmap of the host stage {} ({} bytes)", name, bytes), error);
  }
  return base;
}

}  // namespace

SharedPlanStages::SharedPlanStages(const World& world, WorldExchange& exchange, std::size_t linesBytes,
                                   std::size_t stageBytes)
    : segments_(static_cast<std::size_t>(world.nranks)), linesBytes_(linesBytes) {
  const std::size_t bytes = kPlanFlagBytes + linesBytes + stageBytes;
  std::vector<std::string> mine;
  try {
    std::vector<std::vector<std::uint8_t>> blobs;
    for (const int r : world.localRanks) {
      const std::string name = segmentName(r);
      segments_[static_cast<std::size_t>(r)] = {mapSegment(name, bytes, true), bytes, false};
      mine.push_back(name);
      std::vector<std::uint8_t> blob(kNameBytes, 0);
      std::memcpy(blob.data(), name.data(), name.size());
      blobs.push_back(std::move(blob));
    }
    const std::vector<std::uint8_t> all = exchange.allGather(blobs, kNameBytes);
    for (int r = 0; r < world.nranks; ++r) {
      Segment& segment = segments_[static_cast<std::size_t>(r)];
      if (segment.base == nullptr) {
        const char* text = reinterpret_cast<const char*>(all.data() + static_cast<std::size_t>(r) * kNameBytes);
        const std::string name(text, strnlen(text, kNameBytes));
        if (name.rfind("/peerlink-stage-", 0) != 0) {
          throw Error(ErrorCode::InvalidInput, fmt::format("rank {} sent '{}' as its host stage's name", r, name));
        }
        segment = {mapSegment(name, bytes, false), bytes, false};
      }
      PEERLINK_CUDA_CHECK(cudaHostRegister(segment.base, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
      segment.registered = true;
    }
    exchange.barrier();  // every process has opened every segment: the names may go
  } catch (...) {
    for (const std::string& name : mine) ::shm_unlink(name.c_str());
    release();
    throw;
  }
  for (const std::string& name : mine) ::shm_unlink(name.c_str());
}

SharedPlanStages::~SharedPlanStages() {
  release();
}

void SharedPlanStages::release() noexcept {
  for (Segment& segment : segments_) {
    if (segment.registered) cudaHostUnregister(segment.base);
    if (segment.base != nullptr) ::munmap(segment.base, segment.bytes);
    segment = {};
  }
  cudaGetLastError();
}

void* SharedPlanStages::stage(int rank) const {
  return static_cast<unsigned char*>(lines(rank)) + linesBytes_;
}

void* SharedPlanStages::lines(int rank) const {
  return static_cast<unsigned char*>(segments_.at(static_cast<std::size_t>(rank)).base) + kPlanFlagBytes;
}

unsigned long long* SharedPlanStages::flags(int rank) const {
  return static_cast<unsigned long long*>(segments_.at(static_cast<std::size_t>(rank)).base);
}

}  // namespace peerlink::coll
