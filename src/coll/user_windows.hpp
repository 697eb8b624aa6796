// Buffers the application registered with every rank (Communicator::registerWindow, as NCCL's window
// registration): each rank's buffer, as this process addresses it, so a call whose buffers lie in windows
// reaches its peers' buffers directly instead of through the staging windows.
//
// The contract (NCCL's for symmetric windows): every rank registers its window at the same point, and a call
// uses, on every rank, the same offsets into that window; the peers' buffers are then the peers' window bases
// plus this rank's offsets. A rank of another process shares its buffer as a legacy IPC handle of the
// allocation it lies in (cudaMalloc memory: what PyTorch's caching allocator and cudaMalloc give); the handle
// travels in the all-gather, and each process opens each allocation once (opening one twice is refused by the
// driver), however many windows lie in it.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

/// What a rank tells the others of its window (fixed size, in the all-gather).
struct WindowCard {
  std::array<std::uint8_t, 64> ipcHandle{};  ///< cudaIpcMemHandle_t of the allocation (zero: a local rank)
  std::uint64_t offset = 0;                  ///< where the window starts in the allocation
  std::uint64_t bytes = 0;                   ///< the window's size
};

/// One window: each rank's base as this process addresses it, and its size.
struct UserWindow {
  int id = 0;
  std::array<unsigned char*, kernels::kCollMaxRanks> base{};
  std::array<std::size_t, kernels::kCollMaxRanks> bytes{};
};

/// A window a call's buffer lies in: the window and the offset of the buffer in this rank's part of it.
struct WindowHit {
  const UserWindow* window = nullptr;
  std::size_t offset = 0;
};

/// The windows of a communicator, and the allocations of other processes it has opened.
class UserWindows {
 public:
  UserWindows() = default;
  ~UserWindows();
  UserWindows(const UserWindows&) = delete;
  UserWindows& operator=(const UserWindows&) = delete;
  UserWindows(UserWindows&& other) noexcept = default;  // the moved-from maps are left empty: nothing to close
  UserWindows& operator=(UserWindows&& other) = delete;

  /// Adds a window from every rank's card (cards[r]); `local` gives the local ranks' own pointers (null for the
  /// others), `localDevice` the GPU that opens the others' allocations. Returns its id.
  int add(const std::vector<WindowCard>& cards, const std::vector<unsigned char*>& local, int localDevice);
  /// Removes a window, closing the allocations no other window uses. Error(InvalidUsage) for an unknown id.
  void remove(int id);

  /// The window `rank`'s buffer [pointer, pointer + bytes) lies in, if any.
  std::optional<WindowHit> find(int rank, const void* pointer, std::size_t bytes) const;
  bool empty() const noexcept { return windows_.empty(); }

 private:
  void release(const std::array<std::uint8_t, 64>& handle) noexcept;
  struct Opened {
    void* pointer = nullptr;
    int users = 0;
  };
  std::vector<UserWindow> windows_;
  std::map<std::array<std::uint8_t, 64>, Opened> opened_;               // by IPC handle
  std::map<int, std::vector<std::array<std::uint8_t, 64>>> handlesOf_;  // window id -> the handles it opened
  int next_ = 1;
};

/// Error(InvalidUsage) naming the buffer unless it is `bytes` (> 0) of device memory of GPU `device`: not null,
/// not host, managed or freed memory, not another GPU's.
void checkWindowBuffer(const void* buffer, std::size_t bytes, int device);

/// This rank's card for `buffer` (`bytes` of memory of GPU `device`, the current one): its allocation's IPC
/// handle and the offset in it. Error(InvalidUsage) naming the buffer when checkWindowBuffer refuses it or it is
/// not cudaMalloc memory (memory of cuMem without a shareable handle cannot be shared this way).
WindowCard windowCardOf(const void* buffer, std::size_t bytes, int device);

}  // namespace peerlink::coll
