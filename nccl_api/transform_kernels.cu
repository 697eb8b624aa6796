// The shim's passes as one grid-stride kernel over packs of 16 bytes (the wider of input and output), so 1-byte
// FP8 and 2-byte halves move in vector loads; the tail, and buffers that are not 16-byte aligned, go element by
// element. Conversions are cuda_fp8.h's (FP8 from half saturates to the largest finite value, as NCCL's does).
#include "nccl_api/transform_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"

namespace peerlink::nccl {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;

template <typename T>
struct Scalar {
  const T* device;
  T host;
  __device__ T get() const { return device != nullptr ? *device : host; }
};

template <typename T>
__device__ T multiply(T a, T b) {
  return a * b;
}
template <>
__device__ __half multiply(__half a, __half b) {
  return __float2half(__half2float(a) * __half2float(b));
}
template <>
__device__ __nv_bfloat16 multiply(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __float2bfloat16(__bfloat162float(a) * __bfloat162float(b));
}

template <typename T>
struct ScaleOp {
  using In = T;
  using Out = T;
  Scalar<T> scalar;
  T factor;
  __device__ void begin() { factor = scalar.get(); }
  __device__ Out operator()(In x) const { return multiply(x, factor); }
};

template <typename F8>
struct WidenOp {
  using In = F8;
  using Out = __half;
  Scalar<F8> scalar;
  bool scaled;
  float factor;
  __device__ void begin() { factor = scaled ? static_cast<float>(scalar.get()) : 1.0f; }
  __device__ Out operator()(In x) const { return __float2half(static_cast<float>(x) * factor); }
};

template <typename F8>
struct NarrowOp {
  using In = __half;
  using Out = F8;
  __device__ void begin() {}
  __device__ Out operator()(In x) const { return F8(x); }
};

template <typename T>
struct DivideOp {
  using In = T;
  using Out = T;
  T divisor;
  __device__ void begin() {}
  __device__ Out operator()(In x) const { return static_cast<T>(x / divisor); }
};

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T value[N];
};

template <typename Op>
__global__ void transformKernel(const typename Op::In* in, typename Op::Out* out, std::size_t count, bool vector,
                                Op op) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr int kPack = 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
  op.begin();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t done = 0;
  if (vector) {
    const std::size_t packs = count / kPack;
    const auto* inPacks = reinterpret_cast<const Pack<In, kPack>*>(in);
    auto* outPacks = reinterpret_cast<Pack<Out, kPack>*>(out);
    for (std::size_t p = first; p < packs; p += stride) {
      const Pack<In, kPack> a = inPacks[p];
      Pack<Out, kPack> b;
#pragma unroll
      for (int k = 0; k < kPack; ++k) b.value[k] = op(a.value[k]);
      outPacks[p] = b;
    }
    done = packs * kPack;
  }
  for (std::size_t i = done + first; i < count; i += stride) out[i] = op(in[i]);
}

template <typename Op>
void launch(const TransformArgs& args, Op op, cudaStream_t stream) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  if (args.count == 0) return;
  constexpr std::size_t kPack = 16 / std::max(sizeof(In), sizeof(Out));
  const bool vector =
      reinterpret_cast<std::uintptr_t>(args.in) % 16 == 0 && reinterpret_cast<std::uintptr_t>(args.out) % 16 == 0;
  const std::size_t work = vector ? std::max<std::size_t>(args.count / kPack, 1) : args.count;
  const auto blocks = static_cast<unsigned>(std::min(kMaxBlocks, (work + kThreads - 1) / kThreads));
  transformKernel<Op><<<blocks, kThreads, 0, stream>>>(static_cast<const In*>(args.in), static_cast<Out*>(args.out),
                                                       args.count, vector, op);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

template <typename T>
Scalar<T> scalarOf(const TransformArgs& args) {
  Scalar<T> scalar{static_cast<const T*>(args.deviceScalar), T{}};
  std::memcpy(static_cast<void*>(&scalar.host), args.hostScalar, sizeof(T));
  return scalar;
}

template <typename T>
void scale(const TransformArgs& args, cudaStream_t stream) {
  launch(args, ScaleOp<T>{scalarOf<T>(args), T{}}, stream);
}

template <typename T>
void divide(const TransformArgs& args, cudaStream_t stream) {
  launch(args, DivideOp<T>{static_cast<T>(args.divisor)}, stream);
}

template <typename F8>
void convert(const TransformArgs& args, bool widen, cudaStream_t stream) {
  if (widen) {
    launch(args, WidenOp<F8>{scalarOf<F8>(args), args.scaled, 0.0f}, stream);
  } else {
    launch(args, NarrowOp<F8>{}, stream);
  }
}

[[noreturn]] void refuse(const TransformArgs& args, const char* what) {
  throw Error(ErrorCode::InvalidUsage,
              fmt::format("the shim's {} does not take data type {}", what, static_cast<int>(args.type)));
}

}  // namespace

void launchTransform(const TransformArgs& args, cudaStream_t stream) {
  using Kind = TransformStep::Kind;
  switch (args.kind) {
    case Kind::Copy:
      if (args.count > 0) {
        PEERLINK_CUDA_CHECK(cudaMemcpyAsync(args.out, args.in, args.count, cudaMemcpyDeviceToDevice, stream));
      }
      return;
    case Kind::Widen:
    case Kind::Narrow:
      if (args.type == ncclFloat8e4m3) return convert<__nv_fp8_e4m3>(args, args.kind == Kind::Widen, stream);
      if (args.type == ncclFloat8e5m2) return convert<__nv_fp8_e5m2>(args, args.kind == Kind::Widen, stream);
      refuse(args, "FP8 conversion");
    case Kind::Scale:
      switch (args.type) {
        case ncclInt8: return scale<std::int8_t>(args, stream);
        case ncclUint8: return scale<std::uint8_t>(args, stream);
        case ncclInt32: return scale<std::int32_t>(args, stream);
        case ncclUint32: return scale<std::uint32_t>(args, stream);
        case ncclInt64: return scale<std::int64_t>(args, stream);
        case ncclUint64: return scale<std::uint64_t>(args, stream);
        case ncclFloat16: return scale<__half>(args, stream);
        case ncclFloat32: return scale<float>(args, stream);
        case ncclFloat64: return scale<double>(args, stream);
        case ncclBfloat16: return scale<__nv_bfloat16>(args, stream);
        default: refuse(args, "scaling");
      }
    case Kind::Divide:
      switch (args.type) {
        case ncclInt8: return divide<std::int8_t>(args, stream);
        case ncclUint8: return divide<std::uint8_t>(args, stream);
        case ncclInt32: return divide<std::int32_t>(args, stream);
        case ncclUint32: return divide<std::uint32_t>(args, stream);
        case ncclInt64: return divide<std::int64_t>(args, stream);
        case ncclUint64: return divide<std::uint64_t>(args, stream);
        default: refuse(args, "integer division");
      }
  }
}

}  // namespace peerlink::nccl
