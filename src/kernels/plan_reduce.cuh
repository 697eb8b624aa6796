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
