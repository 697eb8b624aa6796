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
  const int peer = static_cast<int>(threadIdx.x);
  if (peer >= args.nranks || peer == args.rank) return;
  // The copies and kernels before this one on the stream have ended; the release makes their stores to host memory
  // visible to a peer that sees the number.
  storeReleaseSys(reinterpret_cast<uint64_t*>(args.flags[peer] + args.rank), number);
  unsigned long long observed = 0;
  if (colldev::waitAtLeast(args.flags[args.rank] + peer, number, args.timeoutNs, args.abort, &observed)) return;
  if (atomicExch(&failed, 1) != 0) return;  // one record per barrier
  volatile CollFailure* f = args.failure;
  f->seq = number;
  f->observed = observed;
  f->expected = number;
  f->timeNs = globalTimerNs();
  f->status = colldev::aborted(args.abort) ? PEERLINK_STATUS_REMOTE_ERROR : PEERLINK_STATUS_TIMEOUT;
  f->step = kStepPlanBarrier;
  f->peer = peer;
  f->block = 0;
  f->collective = args.collective;
  __threadfence_system();
  f->launch = number;
  __threadfence_system();
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
