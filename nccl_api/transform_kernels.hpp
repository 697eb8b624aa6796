// The shim's own kernels (call_plan.hpp's passes): scaling for pre-multiplied sums, FP8 widened to f16 and
// narrowed back, the integer average's division, and a copy aside. Host side only: the launch.
#pragma once

#include <cuda_runtime_api.h>

#include "nccl_api/backend.hpp"

namespace peerlink::nccl {

/// Enqueues one pass on `stream` (of the current device). Error(InvalidUsage) for a kind the type does not take
/// (a Scale of FP8, a Divide of a floating-point type); Error(CudaError) when the launch fails.
void launchTransform(const TransformArgs& args, cudaStream_t stream);

}  // namespace peerlink::nccl
