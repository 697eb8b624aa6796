// The application's registered windows (user_windows.hpp).
#include "coll/user_windows.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

namespace {

// A card from another process is input: its window must lie inside the allocation its handle opened (at
// `pointer`). Error(InvalidInput) naming rank `rank` otherwise.
void checkInsideAllocation(const WindowCard& card, const void* pointer, std::size_t rank) {
  std::size_t size = 0;
  CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_RANGE_SIZE;
  void* value = &size;
  const bool known =
      driverApi().pointerGetAttributes(1, &attribute, &value, reinterpret_cast<CUdeviceptr>(pointer)) == CUDA_SUCCESS;
  if (known && (card.offset > size || card.bytes > size - card.offset)) {
    throw Error(ErrorCode::InvalidInput,
                fmt::format("registerWindow: rank {}'s window of {} bytes at offset {} runs past the {} bytes of the "
                            "allocation it names",
                            rank, card.bytes, card.offset, size));
  }
}

// Closes a mapping on the GPU it was opened on (the driver unmaps it from that device's context).
void closeMapping(const WindowMapping& mapping, void* pointer) noexcept {
  try {
    DeviceGuard guard(mapping.device);
    cudaIpcCloseMemHandle(pointer);
  } catch (...) {  // the GPU could not be made current: the mapping goes with the process
  }
  cudaGetLastError();
}

}  // namespace

UserWindows::~UserWindows() {
  for (auto& [mapping, opened] : opened_) {
    if (opened.pointer != nullptr) closeMapping(mapping, opened.pointer);
  }
}

unsigned char* UserWindows::take(const WindowMapping& mapping) {
  const auto found = opened_.find(mapping);
  if (found != opened_.end()) {
    ++found->second.users;
    return static_cast<unsigned char*>(found->second.pointer);
  }
  void* pointer = nullptr;
  {
    DeviceGuard guard(mapping.device);
    cudaIpcMemHandle_t handle;
    std::memcpy(&handle, mapping.handle.data(), sizeof handle);
    const cudaError_t status = cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw Error(ErrorCode::CudaError, fmt::format("opening another process's allocation on GPU {}: {}",
                                                    mapping.device, cudaErrorText(status)));
    }
  }
  try {
    opened_.emplace(mapping, Opened{pointer, 1});
  } catch (...) {
    closeMapping(mapping, pointer);
    throw;
  }
  return static_cast<unsigned char*>(pointer);
}

int UserWindows::add(const std::vector<WindowCard>& cards, const std::vector<unsigned char*>& own,
                     const std::vector<int>& devices, const PeerReach& reach, WindowUse use) {
  UserWindow window;
  window.id = next_;
  window.use = use;
  for (std::size_t p = 0; p < cards.size(); ++p) {
    if (use == WindowUse::Registered && devices[p] < 0 && cards[p].bytes == 0) {
      throw Error(ErrorCode::InvalidInput, fmt::format("registerWindow: rank {}'s card names a window of 0 bytes", p));
    }
  }
  try {
    std::map<WindowMapping, unsigned char*> pointers;
    for (const WindowMapping& mapping : windowMappings(cards, devices)) {
      try {
        pointers[mapping] = take(mapping);
      } catch (const Error& error) {
        std::vector<std::size_t> owners;  // the ranks whose windows lie in that allocation
        for (std::size_t p = 0; p < cards.size(); ++p) {
          if (devices[p] < 0 && cards[p].ipcHandle == mapping.handle) owners.push_back(p);
        }
        throw Error(error.code(),
                    fmt::format("{} (the allocation of rank(s) {})", error.what(), fmt::join(owners, ", ")));
      }
      window.mappings.push_back(mapping);
    }
    for (std::size_t p = 0; p < cards.size(); ++p) {
      window.bytes[p] = cards[p].bytes;
      if (devices[p] >= 0 || cards[p].bytes == 0) continue;
      // Every mapping of one allocation is as large: any GPU's tells.
      const auto mapping = std::find_if(pointers.begin(), pointers.end(),
                                        [&](const auto& opened) { return opened.first.handle == cards[p].ipcHandle; });
      if (mapping != pointers.end()) checkInsideAllocation(cards[p], mapping->second, p);
    }
    window.base = windowBases(cards, own, devices, pointers, reach);
    windows_.push_back(window);
  } catch (...) {
    for (const WindowMapping& mapping : window.mappings) release(mapping);
    throw;
  }
  return next_++;
}

void UserWindows::release(const WindowMapping& mapping) noexcept {
  const auto opened = opened_.find(mapping);
  if (opened == opened_.end() || --opened->second.users > 0) return;
  closeMapping(mapping, opened->second.pointer);
  opened_.erase(opened);
}

void UserWindows::remove(int id, WindowUse use) {
  const auto window = std::find_if(windows_.begin(), windows_.end(),
                                   [id, use](const UserWindow& w) { return w.id == id && w.use == use; });
  if (window == windows_.end()) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("deregisterWindow: no window {}", id));
  }
  for (const WindowMapping& mapping : window->mappings) release(mapping);
  windows_.erase(window);
}

const UserWindow* UserWindows::byId(int id) const noexcept {
  for (const UserWindow& window : windows_) {
    if (window.id == id) return &window;
  }
  return nullptr;
}

bool UserWindows::noneRegistered() const noexcept {
  return std::none_of(windows_.begin(), windows_.end(),
                      [](const UserWindow& window) { return window.use == WindowUse::Registered; });
}

std::optional<WindowHit> UserWindows::find(int rank, const void* pointer, std::size_t bytes) const {
  const auto* at = static_cast<const unsigned char*>(pointer);
  const auto r = static_cast<std::size_t>(rank);
  for (const UserWindow& window : windows_) {
    if (window.use != WindowUse::Registered) continue;
    const unsigned char* base = window.base[r][r];
    if (base != nullptr && at >= base && at + bytes <= base + window.bytes[r]) {
      return WindowHit{&window, static_cast<std::size_t>(at - base)};
    }
  }
  return std::nullopt;
}

}  // namespace peerlink::coll
