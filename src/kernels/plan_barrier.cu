// The staged plans' step barrier across processes (plan_barrier.cuh).
#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/plan_barrier.cuh"

namespace peerlink::kernels {
namespace {

// One warp: thread p signals and awaits peer p.
constexpr int kPlanBarrierThreads = 32;
static_assert(kCollMaxRanks <= kPlanBarrierThreads, "a thread per rank");

__global__ void planBarrierKernel(PlanBarrierArgs args) {
  __shared__ unsigned long long number;
  __shared__ int failed;
  if (threadIdx.x == 0) {
    number = *args.count + 1;
    *args.count = number;
    failed = 0;
  }
  __syncthreads();
  // The copies and kernels before this one on the stream have ended: their stores are what the meeting releases.
  meetPlanPeers(args, number, &failed);
}

}  // namespace

void launchPlanBarrier(const PlanBarrierArgs& args, cudaStream_t stream) {
  planBarrierKernel<<<1, kPlanBarrierThreads, 0, stream>>>(args);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

namespace detail {

void preloadPlanBarrierKernels() {
  loadKernel(planBarrierKernel, "planBarrierKernel");
}

}  // namespace detail
}  // namespace peerlink::kernels
