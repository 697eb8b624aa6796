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
  if (args.signature != 0) {
    *reinterpret_cast<volatile unsigned long long*>(args.flags[peer] + kCollMaxRanks + args.rank) = args.signature;
  }
  // The copies and kernels before this one on the stream have ended; the release makes their stores to host memory
  // (and the signature) visible to a peer that sees the number.
  storeReleaseSys(reinterpret_cast<uint64_t*>(args.flags[peer] + args.rank), number);
  unsigned long long observed = 0;
  unsigned long long expected = number;
  int step = kStepPlanBarrier;
  int status = PEERLINK_STATUS_TIMEOUT;
  if (colldev::waitAtLeast(args.flags[args.rank] + peer, number, args.timeoutNs, args.abort, &observed)) {
    if (args.signature == 0) return;
    observed = *reinterpret_cast<const volatile unsigned long long*>(args.flags[args.rank] + kCollMaxRanks + peer);
    if (observed == args.signature) return;
    expected = args.signature;
    step = kStepPlanCallMismatch;
    status = PEERLINK_STATUS_INVALID_USAGE;
  } else if (colldev::aborted(args.abort)) {
    status = PEERLINK_STATUS_REMOTE_ERROR;
  }
  if (atomicExch(&failed, 1) != 0) return;  // one record per barrier
  recordPlanStall(args.failure, number, observed, expected, status, step, peer, args.collective);
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
