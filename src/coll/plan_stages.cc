// Shared host stages (plan_stages.hpp).
#include "coll/plan_stages.hpp"

#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include "coll/host_segments.hpp"
#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

SharedPlanStages::SharedPlanStages(const World& world, WorldExchange& exchange, std::size_t linesBytes,
                                   std::size_t stageBytes)
    : linesBytes_(linesBytes) {
  const std::size_t bytes = kPlanFlagBytes + linesBytes + stageBytes;
  const WorldAllGather allGather = [&exchange](const std::vector<std::vector<std::uint8_t>>& blobs, std::size_t size) {
    return exchange.allGather(blobs, size);
  };
  std::vector<HostSegment> mapped = mapHostSegments(world, allGather, bytes, "stage");
  for (const HostSegment& segment : mapped) segments_.push_back({segment.base, segment.bytes, false});
  try {
    for (Segment& segment : segments_) {
      PEERLINK_CUDA_CHECK(cudaHostRegister(segment.base, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
      segment.registered = true;
    }
  } catch (...) {
    release();
    throw;
  }
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
