// Device-side copy loops shared by the SM copy kernel and the put-with-signal kernels, and the host-side
// choice of the access unit. Included by .cu files only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/copy_kernels.cuh"

namespace peerlink::kernels::detail {

template <CopyHint H>
struct Access;

template <>
struct Access<CopyHint::Plain> {
  template <typename T>
  __device__ __forceinline__ static T load(const T* p) {
    return *p;
  }
  template <typename T>
  __device__ __forceinline__ static void store(T* p, const T& v) {
    *p = v;
  }
};

template <>
struct Access<CopyHint::Streaming> {
  template <typename T>
  __device__ __forceinline__ static T load(const T* p) {
    return __ldg(p);
  }
  template <typename T>
  __device__ __forceinline__ static void store(T* p, const T& v) {
    __stcs(p, v);
  }
};

/// Copies `units` elements. Each warp moves chunks of 32 x U consecutive elements: load u of lane l reads
/// element chunk + 32u + l, so every load and store of a warp is one coalesced 32-element run, the U
/// loads are in flight before the first store, and their offsets are compile-time constants (one address
/// register pair per side). `threads` must be a multiple of 32.
template <CopyHint H, typename T, int U>
__device__ __forceinline__ void copyUnits(T* dst, const T* src, size_t units, size_t tid, size_t threads) {
  using A = Access<H>;
  constexpr size_t kChunk = 32 * U;
  const size_t lane = tid % 32;
  const size_t step = threads / 32 * kChunk;
  size_t chunk = tid / 32 * kChunk;
  for (; chunk + kChunk <= units; chunk += step) {
    const T* s = src + chunk + lane;
    T* d = dst + chunk + lane;
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = A::load(s + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) A::store(d + 32 * u, v[u]);
  }
  if (chunk >= units) return;
  // The one partial chunk, owned by the warp that reached it.
  const T* s = src + chunk + lane;
  T* d = dst + chunk + lane;
  const size_t left = units - chunk;
  T v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (lane + 32 * u < left) v[u] = A::load(s + 32 * u);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (lane + 32 * u < left) A::store(d + 32 * u, v[u]);
  }
}

/// Copies `bytes` bytes with T-sized accesses for the body and byte accesses for the head (up to dst's T
/// alignment) and the tail. Requires dst and src to agree modulo sizeof(T) (unitBytes() chooses T so).
template <CopyHint H, typename T, int U>
__device__ __forceinline__ void copyRange(void* dstVoid, const void* srcVoid, size_t bytes, size_t tid,
                                          size_t threads) {
  auto* dst = static_cast<unsigned char*>(dstVoid);
  const auto* src = static_cast<const unsigned char*>(srcVoid);
  using A = Access<H>;
  size_t head = (sizeof(T) - reinterpret_cast<uintptr_t>(dst) % sizeof(T)) % sizeof(T);
  if (head > bytes) head = bytes;
  const size_t units = (bytes - head) / sizeof(T);
  const size_t bodyEnd = head + units * sizeof(T);
  if (sizeof(T) > 1) {
    for (size_t b = tid; b < head; b += threads) A::store(dst + b, A::load(src + b));
    for (size_t b = bodyEnd + tid; b < bytes; b += threads) A::store(dst + b, A::load(src + b));
  }
  copyUnits<H, T, U>(reinterpret_cast<T*>(dst + head), reinterpret_cast<const T*>(src + head), units, tid, threads);
}

/// The widest access (16, 8, 4, 2 or 1 bytes) at which dst and src can both be aligned.
inline int unitBytes(const void* dst, const void* src) {
  const uintptr_t differ = reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src);
  for (int unit = 16; unit > 1; unit /= 2) {
    if (differ % static_cast<uintptr_t>(unit) == 0) return unit;
  }
  return 1;
}

/// Calls fn(T{}) with the element type of `unit` bytes.
template <typename Fn>
void withUnitType(int unit, Fn&& fn) {
  switch (unit) {
    case 16: fn(uint4{}); break;
    case 8: fn(uint2{}); break;
    case 4: fn(static_cast<unsigned int>(0)); break;
    case 2: fn(static_cast<unsigned short>(0)); break;
    default: fn(static_cast<unsigned char>(0)); break;
  }
}

/// Threads of a one-block copy of `bytes` at `unit` bytes and unroll U: enough for one pass, in whole warps.
inline int oneBlockThreads(size_t bytes, int unit, int unroll, int maxThreads) {
  const size_t perThread = static_cast<size_t>(unit) * static_cast<size_t>(unroll);
  const size_t wanted = (bytes + perThread - 1) / perThread;
  size_t threads = (wanted + 31) / 32 * 32;
  if (threads < 32) threads = 32;
  if (threads > static_cast<size_t>(maxThreads)) threads = static_cast<size_t>(maxThreads);
  return static_cast<int>(threads);
}

}  // namespace peerlink::kernels::detail
