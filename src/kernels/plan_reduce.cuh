// The reductions of plans run on the GPU (src/coll/plan_executor.hpp): dst = op(srcs[0], srcs[1], ...) element by
// element, left to right, accumulated as the collective kernels accumulate (coll_reduce_ops.cuh), so a plan's
// result has the bits the direct kernels give. Sources and destination may be device memory of this GPU, a peer's
// (peer access) or mapped pinned host memory (a host stage).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {

struct PlanReduceArgs {
  void* dst = nullptr;
  const void* srcs[kCollMaxRanks] = {};
  int nsrcs = 0;
  std::size_t count = 0;  ///< elements
  int nranks = 1;         ///< avg's divisor
  bool finish = false;    ///< the last reduction: avg divides here
};

/// The arguments of dst = op(srcs[0], ..., srcs[nsrcs - 1]) of `count` elements; at most kCollMaxRanks sources. One
/// source, not finishing: a copy of the stored bits.
inline PlanReduceArgs planReduceArgs(void* dst, const void* const* srcs, int nsrcs, std::size_t count, int nranks,
                                     bool finish) {
  PlanReduceArgs args;
  args.dst = dst;
  for (int j = 0; j < nsrcs; ++j) args.srcs[j] = srcs[j];
  args.nsrcs = nsrcs;
  args.count = count;
  args.nranks = nranks;
  args.finish = finish;
  return args;
}

/// The grid for a reduction of `count` elements that reads host memory over PCIe: many loads in flight to reach the
/// link's bandwidth, one block per 8192 elements, up to 64 (the grid-stride loop covers the rest).
inline int planReduceBlocksOverHostMemory(std::size_t count) {
  constexpr std::size_t kElementsPerBlock = 8192;
  constexpr std::size_t kMaxBlocks = 64;
  const std::size_t blocks = (count + kElementsPerBlock - 1) / kElementsPerBlock;
  return static_cast<int>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

/// Launches the reduction on the current device; `blocks` at least 1.
void launchPlanReduce(const PlanReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream);
/// The same with its arguments read from `asked` (mapped pinned host memory) as the kernel starts: a kernel queued
/// before its arguments were known, ordered after their writing by a wait on the stream (a queued call's reductions
/// across nodes, net/queued_computations.hpp). Nothing is done for a count of 0.
void launchAskedPlanReduce(const PlanReduceArgs* asked, CollType type, CollOp op, int blocks, cudaStream_t stream);

namespace detail {
void preloadPlanReduceKernels();  // plan_reduce.cu
}  // namespace detail

}  // namespace peerlink::kernels
