// One launch helper for kernels that take a single argument struct. Included by .cu files only.
//
// cudaLaunchKernelEx costs less host time than the <<<>>> syntax: on the H200 VMs (CUDA 13.0, driver
// 580) 2.8 us against 3.4 us per launch, measured back to back (bench/results/2026-11-22-h200x2-host-costs).
// In an eager collective every rank's launch is on the caller's thread, so this is paid nranks times.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "core/cuda_check.hpp"
#include "kernels/kernel_graph.hpp"
#include "kernels/kernel_launch.hpp"

namespace peerlink::kernels::detail {

/// Launches kernel(args) with `blocks` x `threads` on `stream` (the current device's), through
/// launch.graph when given (cheaper on the host; kernel_graph.hpp) and directly when not or when the graph
/// turned itself off, then overlapping the previous kernel when launch.overlapPrevious
/// (kernel_launch.hpp); throws Error(CudaError) when the launch is refused.
template <typename Args>
void launchKernel(void (*kernel)(Args), int blocks, int threads, cudaStream_t stream, const Args& args,
                  const KernelLaunch& launch = {}) {
  // The graph skips its node update when the arguments' bytes equal the last launch's: padding bytes, which
  // no assignment sets, could make equal arguments compare unequal (an update, ~0.5 us more, on every call).
  static_assert(std::has_unique_object_representations_v<Args>,
                "kernel argument structs must have no padding (KernelGraph compares their bytes)");
  if (launch.graph != nullptr) {
    void* params[] = {const_cast<Args*>(&args)};
    if (launch.graph->launch(reinterpret_cast<const void*>(kernel), blocks, threads, params, &args, sizeof(Args),
                             stream) == cudaSuccess) {
      return;
    }
  }
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned int>(blocks));
  config.blockDim = dim3(static_cast<unsigned int>(threads));
  config.stream = stream;
  if (launch.overlapPrevious) {
    config.attrs = &overlap;
    config.numAttrs = 1;
  }
  PEERLINK_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args));
}

}  // namespace peerlink::kernels::detail
