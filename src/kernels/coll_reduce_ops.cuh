// Element types and reduction operations of the collective kernels, and the host-side dispatch from
// (CollType, CollOp) to a kernel instantiation. Included by coll_*.cu only.
//
// Every rank reduces in rank order (rank 0's value, then rank 1's, ...), so all ranks compute the same
// bits. f16 and bf16 accumulate in float and round once at the end; integer sums and products wrap
// (computed in the unsigned type of the same width); avg is the sum divided by the number of ranks, for
// floating types only. Float min and max are fminf/fmaxf (a NaN operand is ignored unless both are NaN),
// as src/coll/host_reduce.hpp's reference does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/coll_kernels.cuh"
#include "peerlink/error.hpp"

namespace peerlink::kernels::colldev {

/// S: how an element is stored; A: what it is accumulated in.
template <int Type>
struct Elem;

#define PEERLINK_COLL_PLAIN_ELEM(kType, T)                       \
  template <>                                                    \
  struct Elem<kType> {                                           \
    using S = T;                                                 \
    using A = T;                                                 \
    __device__ __forceinline__ static A load(S s) { return s; }  \
    __device__ __forceinline__ static S store(A a) { return a; } \
  }
PEERLINK_COLL_PLAIN_ELEM(kF64, double);
PEERLINK_COLL_PLAIN_ELEM(kF32, float);
PEERLINK_COLL_PLAIN_ELEM(kI32, int32_t);
PEERLINK_COLL_PLAIN_ELEM(kU32, uint32_t);
PEERLINK_COLL_PLAIN_ELEM(kI64, int64_t);
PEERLINK_COLL_PLAIN_ELEM(kU64, uint64_t);
PEERLINK_COLL_PLAIN_ELEM(kI8, int8_t);
PEERLINK_COLL_PLAIN_ELEM(kU8, uint8_t);
#undef PEERLINK_COLL_PLAIN_ELEM

template <>
struct Elem<kF16> {
  using S = unsigned short;
  using A = float;
  __device__ __forceinline__ static A load(S s) { return __half2float(__ushort_as_half(s)); }
  __device__ __forceinline__ static S store(A a) { return __half_as_ushort(__float2half_rn(a)); }
};

template <>
struct Elem<kBf16> {
  using S = unsigned short;
  using A = float;
  __device__ __forceinline__ static A load(S s) { return __bfloat162float(__ushort_as_bfloat16(s)); }
  __device__ __forceinline__ static S store(A a) { return __bfloat16_as_ushort(__float2bfloat16_rn(a)); }
};

template <typename A, int Op>
__device__ __forceinline__ A applyOp(A a, A b) {
  if constexpr ((Op == kMin || Op == kMax) && std::is_same<A, float>::value) {
    return Op == kMin ? fminf(a, b) : fmaxf(a, b);  // a NaN operand is ignored unless both are NaN
  } else if constexpr ((Op == kMin || Op == kMax) && std::is_same<A, double>::value) {
    return Op == kMin ? fmin(a, b) : fmax(a, b);
  } else if constexpr (Op == kMin) {
    return b < a ? b : a;
  } else if constexpr (Op == kMax) {
    return b > a ? b : a;
  } else if constexpr (std::is_integral<A>::value) {
    using U = std::make_unsigned_t<A>;
    if constexpr (Op == kProd) {
      return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    }
  } else if constexpr (Op == kProd) {
    return a * b;
  } else {
    return a + b;  // sum, avg
  }
}

template <typename A, int Op>
__device__ __forceinline__ A finishOp(A a, int nranks) {
  if constexpr (Op == kAvg && !std::is_integral<A>::value) {
    return a / static_cast<A>(nranks);
  } else {
    (void)nranks;
    return a;
  }
}

/// An element-wise reduction of packs in rank order, one rank's pack at a time: first(rank 0's), add(rank
/// 1's), ..., then result(nranks). Raw is the pack's raw type (8 bytes for an LL line's payload, uint4 for
/// the direct kernels' 16-byte loads); the elements accumulate in Elem<Type>::A (f16/bf16 in float).
template <int Type, int Op, typename Raw>
struct PackReducer {
  using E = Elem<Type>;
  using A = typename E::A;
  using S = typename E::S;
  static constexpr int kElems = static_cast<int>(sizeof(Raw) / sizeof(S));
  union Pack {
    Raw raw;
    S e[kElems];
  };
  A acc[kElems];

  __device__ __forceinline__ void first(Raw raw) {
    Pack in;
    in.raw = raw;
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc[e] = E::load(in.e[e]);
  }
  __device__ __forceinline__ void add(Raw raw) {
    Pack in;
    in.raw = raw;
#pragma unroll
    for (int e = 0; e < kElems; ++e) acc[e] = applyOp<A, Op>(acc[e], E::load(in.e[e]));
  }
  __device__ __forceinline__ Raw result(int nranks) const {
    Pack out;
#pragma unroll
    for (int e = 0; e < kElems; ++e) out.e[e] = E::store(finishOp<A, Op>(acc[e], nranks));
    return out.raw;
  }
};

/// Reduces one pack per rank (v[j] is rank j's, nranks <= Ranks), element-wise in rank order (PackReducer).
template <int Type, int Op, typename Raw, int Ranks>
__device__ __forceinline__ Raw reducePack(const Raw (&v)[Ranks], int nranks) {
  PackReducer<Type, Op, Raw> reducer;
  reducer.first(v[0]);
#pragma unroll
  for (int j = 1; j < Ranks; ++j) {
    if (j < nranks) reducer.add(v[j]);
  }
  return reducer.result(nranks);
}

}  // namespace peerlink::kernels::colldev

namespace peerlink::kernels::detail {

/// Calls fn(std::integral_constant<int, Type>{}, std::integral_constant<int, Op>{}) for the pair; avg on an
/// integer type throws Error(Internal) (the communicator rejects it before).
template <typename Fn>
void dispatchTypeOp(CollType type, CollOp op, Fn&& fn) {
  auto withOp = [&](auto typeConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr bool kFloating = kType == kF64 || kType == kF32 || kType == kF16 || kType == kBf16;
    switch (op) {
      case kSum: fn(typeConstant, std::integral_constant<int, kSum>{}); return;
      case kProd: fn(typeConstant, std::integral_constant<int, kProd>{}); return;
      case kMin: fn(typeConstant, std::integral_constant<int, kMin>{}); return;
      case kMax: fn(typeConstant, std::integral_constant<int, kMax>{}); return;
      case kAvg:
        if constexpr (kFloating) {
          fn(typeConstant, std::integral_constant<int, kAvg>{});
          return;
        }
        break;
    }
    throw Error(ErrorCode::Internal, "collective kernel: no instantiation for this type and op");
  };
  switch (type) {
    case kF64: withOp(std::integral_constant<int, kF64>{}); return;
    case kF32: withOp(std::integral_constant<int, kF32>{}); return;
    case kF16: withOp(std::integral_constant<int, kF16>{}); return;
    case kBf16: withOp(std::integral_constant<int, kBf16>{}); return;
    case kI32: withOp(std::integral_constant<int, kI32>{}); return;
    case kU32: withOp(std::integral_constant<int, kU32>{}); return;
    case kI64: withOp(std::integral_constant<int, kI64>{}); return;
    case kU64: withOp(std::integral_constant<int, kU64>{}); return;
    case kI8: withOp(std::integral_constant<int, kI8>{}); return;
    case kU8: withOp(std::integral_constant<int, kU8>{}); return;
  }
  throw Error(ErrorCode::Internal, "collective kernel: unknown type");
}

/// Calls fn(typeConstant, opConstant), as dispatchTypeOp does, for every pair the kernels instantiate (avg on
/// the floating types only): the preloads load every instantiation this way.
template <typename Fn>
void forEachTypeOp(Fn&& fn) {
  for (int type = kF64; type <= kU8; ++type) {
    for (int op = kSum; op <= kAvg; ++op) {
      const bool floating = type <= kBf16;
      if (op == kAvg && !floating) continue;
      dispatchTypeOp(static_cast<CollType>(type), static_cast<CollOp>(op), fn);
    }
  }
}

}  // namespace peerlink::kernels::detail
