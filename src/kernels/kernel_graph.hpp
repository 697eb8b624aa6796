// An eager kernel launch through a one-node CUDA graph, re-aimed at each launch: the node's function, grid
// and arguments are updated in the instantiated graph (cudaGraphExecKernelNodeSetParams), then the graph
// is launched. On the H200 VMs that costs 1.75 us of host time per launch against 3.2 us for
// cudaLaunchKernelEx (bench/results/2026-11-22-h200x2-host-costs/eager_launch.txt), and an eager collective
// pays it once per rank from the caller's thread. A launch with the same function, grid and argument bytes
// as the one before (a loop over the same buffers: the call's number lives in device memory, not in the
// arguments) skips the update: 1.2 us instead of 1.75 (the same measurement).
//
// One KernelGraph per GPU and owner (the communicator keeps one per rank): CUDA orders every launch of one
// instantiated graph behind the previous one, so all launches through it are serialized, whatever stream
// they go to -- harmless for a communicator, whose calls on one rank must be stream-ordered anyway, but a
// reason not to share one between owners. Not for streams being captured (launch directly there).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace peerlink::kernels {

class KernelGraph {
 public:
  KernelGraph() = default;
  ~KernelGraph();
  KernelGraph(const KernelGraph&) = delete;
  KernelGraph& operator=(const KernelGraph&) = delete;

  /// Launches func<<<blocks, threads, 0, stream>>> with `params` (the kernel's argument pointers, as for
  /// cudaLaunchKernel) on the current device, which must be the same at every call. Returns the CUDA
  /// status; when the graph cannot be built or updated it returns that error, turns itself off (later
  /// calls return cudaErrorNotSupported at once), and the caller launches directly.
  /// `args` / `argsBytes`: the single argument struct params[0] points to, compared with the last launch's.
  cudaError_t launch(const void* func, int blocks, int threads, void** params, const void* args, std::size_t argsBytes,
                     cudaStream_t stream) noexcept;

  /// Launches so far, and how many of them had to re-aim the graph's node (a different kernel, grid or
  /// arguments from the last launch's), for the COLL log.
  std::uint64_t launches() const noexcept { return launches_; }
  std::uint64_t updates() const noexcept { return updates_; }

 private:
  /// Whether this launch is the last one again (nothing to update in the instantiated graph).
  bool sameAsLast(const void* func, int blocks, int threads, const void* args, std::size_t argsBytes) const noexcept;

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraphNode_t node_ = nullptr;
  bool off_ = false;
  const void* lastFunc_ = nullptr;
  int lastBlocks_ = 0;
  int lastThreads_ = 0;
  std::vector<unsigned char> lastArgs_;
  std::uint64_t launches_ = 0;
  std::uint64_t updates_ = 0;
};

}  // namespace peerlink::kernels
