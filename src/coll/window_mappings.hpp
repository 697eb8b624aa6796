// Where each local rank finds every rank's registered window (user_windows.hpp), decided over plain data: which
// of the other processes' allocations this process opens on which of its GPUs, and the base of every rank's
// window in each local rank's table.
//
// A rank of another process shares its window as a legacy IPC handle of the cudaMalloc allocation it lies in.
// This process opens the allocation on each of its GPUs that drives a rank (cudaIpcOpenMemHandle: "one context per
// device per other process"; a second open in the same context only counts a reference), and ranks sharing a GPU
// share its mapping. The driver measured (580.159, two processes each driving a rank on both of 2 H200s) maps an
// allocation once per process: a second GPU's open fails with cudaErrorAlreadyMapped, and the first GPU's mapping
// is an illegal address on the second, so such a process cannot open another's windows (shared calls are off in
// such worlds: call_sharing.hpp). An allocation made where one it still maps lay fails to open the same way. Ranks of
// this process reach each other's buffers directly -- the same GPU, or peer access (a process's own allocation cannot
// be opened through IPC).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

/// The bytes of a cudaIpcMemHandle_t.
using IpcHandleBytes = std::array<std::uint8_t, 64>;

/// What a rank tells the others of its window (fixed size, in the all-gather).
struct WindowCard {
  IpcHandleBytes ipcHandle{};  ///< cudaIpcMemHandle_t of the allocation (zero in a world of one process)
  std::uint64_t offset = 0;    ///< where the window starts in the allocation
  std::uint64_t bytes = 0;     ///< the window's size
};

/// One mapping a process opens: another process's allocation (by its handle) on one of this process's GPUs.
struct WindowMapping {
  IpcHandleBytes handle{};
  int device = -1;
  bool operator<(const WindowMapping& other) const {
    return std::tie(handle, device) < std::tie(other.handle, other.device);
  }
  bool operator==(const WindowMapping& other) const { return handle == other.handle && device == other.device; }
};

/// base[v][p]: rank p's window as local rank v's GPU addresses it (rows of this process's ranks only).
using WindowBases = std::array<std::array<unsigned char*, kernels::kCollMaxRanks>, kernels::kCollMaxRanks>;

/// The mappings one window needs here: the allocation of every rank of another process (devices[p] < 0) on
/// every GPU that drives a rank of this process (devices[v] >= 0), once per (allocation, GPU) -- ranks that
/// share a GPU share its mapping, ranks whose windows lie in one allocation share that; none for a card of 0
/// bytes (its rank passes no buffer). Sorted, no repeats.
std::vector<WindowMapping> windowMappings(const std::vector<WindowCard>& cards, const std::vector<int>& devices);

/// Whether the GPU of CUDA ordinal `device` may load and store the memory of GPU `peer` of this process.
using PeerReach = std::function<bool(int device, int peer)>;

/// Every local rank's row of a window's bases: a rank of this process its own buffer (own[p]), which rank v
/// reaches when both are on one GPU or `reach` allows it; a rank of another process the mapping of its card's
/// allocation on v's GPU (`opened`: windowMappings' mappings, opened) plus its card's offset, null for a card of 0
/// bytes. Error(Unsupported)
/// naming both ranks for a pair of this process's GPUs without peer access; Error(Internal) for a mapping not
/// in `opened`.
WindowBases windowBases(const std::vector<WindowCard>& cards, const std::vector<unsigned char*>& own,
                        const std::vector<int>& devices, const std::map<WindowMapping, unsigned char*>& opened,
                        const PeerReach& reach);

}  // namespace peerlink::coll
