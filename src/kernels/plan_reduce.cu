// Plan reductions (plan_reduce.cuh): a grid-stride loop, one element per thread per pass; the plans that run here
// move data over PCIe or host memory, whose bandwidth a plain loop already exceeds.
#include "core/cuda_check.hpp"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/plan_reduce.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kPlanReduceThreads = 512;

template <int Type, int Op>
__device__ void planReduce(const PlanReduceArgs& args) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  S* dst = static_cast<S*>(args.dst);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  if (args.nsrcs == 1 && !args.finish) {
    // A copy: the stored bits as they are (no round trip through the arithmetic type, which changes NaN payloads).
    const S* src = static_cast<const S*>(args.srcs[0]);
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.count; i += stride) {
      dst[i] = src[i];
    }
    return;
  }
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.count; i += stride) {
    A acc = E::load(static_cast<const S*>(args.srcs[0])[i]);
#pragma unroll
    for (int j = 1; j < kCollMaxRanks; ++j) {
      if (j < args.nsrcs) acc = applyOp<A, Op>(acc, E::load(static_cast<const S*>(args.srcs[j])[i]));
    }
    dst[i] = E::store(args.finish ? finishOp<A, Op>(acc, args.nranks) : acc);
  }
}

template <int Type, int Op>
__global__ void planReduceKernel(PlanReduceArgs args) {
  planReduce<Type, Op>(args);
}

// The host wrote the arguments before the stream's wait let this kernel start; volatile loads read them from host
// memory as they are now, whatever a cache held before. A block's first threads read them, a word each, into shared
// memory (one read over PCIe per word and block, not per thread).
template <int Type, int Op>
__global__ void askedPlanReduceKernel(const PlanReduceArgs* asked) {
  static_assert(sizeof(PlanReduceArgs) % sizeof(unsigned long long) == 0, "read as 64-bit words");
  constexpr int kWords = sizeof(PlanReduceArgs) / sizeof(unsigned long long);
  static_assert(kWords <= kPlanReduceThreads, "a word per thread");
  __shared__ unsigned long long words[kWords];
  if (threadIdx.x < kWords)
    words[threadIdx.x] = reinterpret_cast<const volatile unsigned long long*>(asked)[threadIdx.x];
  __syncthreads();
  planReduce<Type, Op>(*reinterpret_cast<const PlanReduceArgs*>(words));
}

}  // namespace

void launchPlanReduce(const PlanReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    planReduceKernel<kType, kOp><<<blocks, kPlanReduceThreads, 0, stream>>>(args);
  });
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchAskedPlanReduce(const PlanReduceArgs* asked, CollType type, CollOp op, int blocks, cudaStream_t stream) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    askedPlanReduceKernel<kType, kOp><<<blocks, kPlanReduceThreads, 0, stream>>>(asked);
  });
  PEERLINK_CUDA_CHECK_LAUNCH();
}

namespace detail {

void preloadPlanReduceKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    loadKernel(planReduceKernel<kType, kOp>, "planReduceKernel");
    loadKernel(askedPlanReduceKernel<kType, kOp>, "askedPlanReduceKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
