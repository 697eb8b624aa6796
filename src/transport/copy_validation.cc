#include "transport/copy_validation.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "core/pointer_kind.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

bool rangesOverlap(std::uintptr_t a, std::uintptr_t b, std::size_t bytes) noexcept {
  if (bytes == 0) return false;
  return a < b ? b - a < bytes : a - b < bytes;
}

void validateDevicePointer(const Topology& topology, const void* pointer, int device, const char* what, int mappedBy) {
  const int count = static_cast<int>(topology.gpus.size());
  if (device < 0 || device >= count) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} device {} is out of range (this process has GPUs 0..{})", what, device, count - 1));
  }
  if (pointer == nullptr) throw Error(ErrorCode::InvalidUsage, fmt::format("{} pointer is null", what));
  const PointerKind kind = pointerKind(pointer);
  if (kind.type == cudaMemoryTypeUnregistered) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} pointer {} is not CUDA memory (plain host memory or a stale pointer)", what, pointer));
  }
  if (kind.type == cudaMemoryTypeHost) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} pointer {} is pinned host memory, not memory of GPU {}", what, pointer, device));
  }
  if (kind.device != device && kind.device != mappedBy) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} pointer {} belongs to GPU {}, not GPU {}", what, pointer, kind.device, device));
  }
}

}  // namespace peerlink
