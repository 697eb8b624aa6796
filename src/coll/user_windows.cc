// The application's registered windows (user_windows.hpp).
#include "coll/user_windows.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/pointer_kind.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

static_assert(sizeof(cudaIpcMemHandle_t) == 64, "a window card carries a whole cudaIpcMemHandle_t");

void checkWindowBuffer(const void* buffer, std::size_t bytes, int device) {
  if (buffer == nullptr || bytes == 0) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("registerWindow: buffer {} of {} bytes: a window needs memory", buffer, bytes));
  }
  const PointerKind kind = pointerKind(buffer);
  if (kind.type != cudaMemoryTypeDevice) {
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("registerWindow: buffer {} is not device memory (host, managed, freed or unmapped)", buffer));
  }
  if (kind.device != device) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("registerWindow: buffer {} belongs to GPU {}, not to the rank's "
                                                     "GPU {}",
                                                     buffer, kind.device, device));
  }
}

WindowCard windowCardOf(const void* buffer, std::size_t bytes, int device) {
  checkWindowBuffer(buffer, bytes, device);
  CUdeviceptr start = 0;
  std::size_t size = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* values[] = {&start, &size};
  PEERLINK_CU_CHECK(driverApi().pointerGetAttributes(2, attributes, values, reinterpret_cast<CUdeviceptr>(buffer)));
  const auto at = reinterpret_cast<std::uintptr_t>(buffer);
  if (at < start || at + bytes > start + size) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("registerWindow: buffer {} of {} bytes runs past its allocation ({} bytes at 0x{:x})",
                            buffer, bytes, size, static_cast<std::uintptr_t>(start)));
  }
  WindowCard card;
  cudaIpcMemHandle_t handle;
  const cudaError_t status = cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(start));
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("registerWindow: the allocation of buffer {} cannot be shared with other processes ({}): "
                            "register memory from cudaMalloc",
                            buffer, cudaErrorText(status)));
  }
  std::memcpy(card.ipcHandle.data(), &handle, sizeof handle);
  card.offset = at - start;
  card.bytes = bytes;
  return card;
}

UserWindows::~UserWindows() {
  for (auto& [handle, opened] : opened_) {
    if (opened.pointer != nullptr) cudaIpcCloseMemHandle(opened.pointer);
  }
  cudaGetLastError();
}

int UserWindows::add(const std::vector<WindowCard>& cards, const std::vector<unsigned char*>& local, int localDevice) {
  UserWindow window;
  window.id = next_++;
  std::vector<std::array<std::uint8_t, 64>> handles;
  for (std::size_t r = 0; r < cards.size(); ++r) {
    window.bytes[r] = cards[r].bytes;
    if (local[r] != nullptr) {
      window.base[r] = local[r];
      continue;
    }
    Opened& opened = opened_[cards[r].ipcHandle];
    if (opened.pointer == nullptr) {
      DeviceGuard guard(localDevice);
      cudaIpcMemHandle_t handle;
      std::memcpy(&handle, cards[r].ipcHandle.data(), sizeof handle);
      const cudaError_t status = cudaIpcOpenMemHandle(&opened.pointer, handle, cudaIpcMemLazyEnablePeerAccess);
      if (status != cudaSuccess) {
        cudaGetLastError();
        opened_.erase(cards[r].ipcHandle);
        for (const auto& taken : handles) release(taken);
        throw Error(ErrorCode::CudaError,
                    fmt::format("registerWindow: opening rank {}'s window: {}", r, cudaErrorText(status)));
      }
    }
    ++opened.users;
    handles.push_back(cards[r].ipcHandle);
    // A card from another process is input: its window must lie inside the allocation its handle opened.
    std::size_t size = 0;
    CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_RANGE_SIZE;
    void* value = &size;
    const bool known = driverApi().pointerGetAttributes(1, &attribute, &value,
                                                        reinterpret_cast<CUdeviceptr>(opened.pointer)) == CUDA_SUCCESS;
    if (known && (cards[r].offset > size || cards[r].bytes > size - cards[r].offset)) {
      for (const auto& taken : handles) release(taken);
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("registerWindow: rank {}'s window of {} bytes at offset {} runs past the {} bytes of "
                              "the allocation it names",
                              r, cards[r].bytes, cards[r].offset, size));
    }
    window.base[r] = static_cast<unsigned char*>(opened.pointer) + cards[r].offset;
  }
  handlesOf_[window.id] = handles;
  windows_.push_back(window);
  return window.id;
}

void UserWindows::release(const std::array<std::uint8_t, 64>& handle) noexcept {
  const auto opened = opened_.find(handle);
  if (opened == opened_.end() || --opened->second.users > 0) return;
  cudaIpcCloseMemHandle(opened->second.pointer);
  cudaGetLastError();
  opened_.erase(opened);
}

void UserWindows::remove(int id) {
  const auto window = std::find_if(windows_.begin(), windows_.end(), [id](const UserWindow& w) { return w.id == id; });
  if (window == windows_.end()) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("deregisterWindow: no window {}", id));
  }
  for (const auto& handle : handlesOf_[id]) release(handle);
  handlesOf_.erase(id);
  windows_.erase(window);
}

std::optional<WindowHit> UserWindows::find(int rank, const void* pointer, std::size_t bytes) const {
  const auto* at = static_cast<const unsigned char*>(pointer);
  const auto r = static_cast<std::size_t>(rank);
  for (const UserWindow& window : windows_) {
    const unsigned char* base = window.base[r];
    if (base != nullptr && at >= base && at + bytes <= base + window.bytes[r]) {
      return WindowHit{&window, static_cast<std::size_t>(at - base)};
    }
  }
  return std::nullopt;
}

}  // namespace peerlink::coll
