// Buffers the application registered with every rank (Communicator::registerWindow, as NCCL's window
// registration): each rank's buffer, as each local rank's GPU addresses it, so a call whose buffers lie in windows
// reaches its peers' buffers directly instead of through the staging windows.
//
// The contract (NCCL's for symmetric windows): every rank registers its window at the same point, and a call
// uses, on every rank, the same offsets into that window; the peers' buffers are then the peers' window bases
// plus this rank's offsets. A rank of another process shares its buffer as a legacy IPC handle of the
// allocation it lies in (cudaMalloc memory: what PyTorch's caching allocator and cudaMalloc give); the handle
// travels in the all-gather, and each process opens each allocation once per GPU it drives (window_mappings.hpp
// decides which), however many windows and local ranks use it.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "coll/window_mappings.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

/// Who made a window: the application (registerWindow), or a call that shared its buffers with the peers
/// (shared_calls.hpp). A call finds only the application's (find); each removes only its own.
enum class WindowUse { Registered, SharedByCall };

/// One window: each rank's base as each local rank's GPU addresses it (base[v][p], windowBases), and its size.
struct UserWindow {
  int id = 0;
  WindowUse use = WindowUse::Registered;
  WindowBases base{};
  std::array<std::size_t, kernels::kCollMaxRanks> bytes{};
  std::vector<WindowMapping> mappings;  ///< the other processes' allocations it uses, as opened here
};

/// A window a call's buffer lies in: the window and the offset of the buffer in this rank's part of it.
struct WindowHit {
  const UserWindow* window = nullptr;
  std::size_t offset = 0;
};

/// The windows of a communicator, and the allocations of other processes it has opened on its GPUs.
class UserWindows {
 public:
  UserWindows() = default;
  ~UserWindows();
  UserWindows(const UserWindows&) = delete;
  UserWindows& operator=(const UserWindows&) = delete;
  UserWindows(UserWindows&& other) noexcept = default;  // the moved-from maps are left empty: nothing to close
  UserWindows& operator=(UserWindows&& other) = delete;

  /// Adds a window from every rank's card (cards[r]); `own` gives the local ranks' own pointers (null for the
  /// others), `devices` their GPUs (-1 for the others), `reach` which of them share memory (windowBases). Opens
  /// the mappings windowMappings names that no other window holds yet; on any error closes what it opened and
  /// throws. Returns its id. A card of 0 bytes stands for a buffer its rank does not pass: nothing is opened
  /// for it, its base is null.
  int add(const std::vector<WindowCard>& cards, const std::vector<unsigned char*>& own, const std::vector<int>& devices,
          const PeerReach& reach, WindowUse use = WindowUse::Registered);
  /// Removes a window `use` made, closing the mappings no other window uses. Error(InvalidUsage) for an unknown id
  /// or one the other use made.
  void remove(int id, WindowUse use = WindowUse::Registered);
  /// The window `id` (made by any use), null if there is none.
  const UserWindow* byId(int id) const noexcept;

  /// The registered window local rank `rank`'s buffer [pointer, pointer + bytes) lies in, if any.
  std::optional<WindowHit> find(int rank, const void* pointer, std::size_t bytes) const;
  /// Whether the application has registered no window.
  bool noneRegistered() const noexcept;
  /// The mappings of other processes' allocations open now (each opened once, on one GPU).
  std::size_t openMappings() const noexcept { return opened_.size(); }

 private:
  // Takes a use of `mapping`, opening it on its GPU if no window uses it yet; returns where it lies there.
  unsigned char* take(const WindowMapping& mapping);
  void release(const WindowMapping& mapping) noexcept;
  struct Opened {
    void* pointer = nullptr;
    int users = 0;  ///< windows that use it; closed (once: it was opened once) when none is left
  };
  std::vector<UserWindow> windows_;
  std::map<WindowMapping, Opened> opened_;
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
