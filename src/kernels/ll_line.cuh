// The LL ("low latency") line: 8 bytes of payload travel with a 4-byte flag in one 16-byte line, so a
// receiver needs no separate flag and no fence -- it polls the line itself. Used by put-with-signal
// (ll_protocol.cu) and the collectives' LL kernel (coll_ll.cu). Included by .cu files only.
//
// A line is two 8-byte halves of {4 bytes of payload, 4 bytes of flag}, stored with one
// st.relaxed.sys.v2.u64 and polled with ld.relaxed.sys.v2.u64. An aligned 8-byte access is single-copy
// atomic, so a half that shows the flag shows its payload; the 16-byte vector access itself is not atomic
// as a whole, which is why each half carries the flag.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peerlink::kernels::llline {

constexpr std::size_t kPayloadBytes = 8;  ///< payload bytes of one line

struct alignas(16) Line {
  unsigned long long half[2];  ///< {data, flag} each: data in the low 4 bytes, flag in the high 4
};

__device__ __forceinline__ void storeLine(Line* line, unsigned long long data, uint32_t flag) {
  const unsigned long long high = static_cast<unsigned long long>(flag) << 32;
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(line), "l"(high | (data & 0xffffffffull)),
               "l"(high | (data >> 32))
               : "memory");
}

__device__ __forceinline__ Line loadLine(const Line* line) {
  Line value;
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(value.half[0]), "=l"(value.half[1])
               : "l"(line)
               : "memory");
  return value;
}

__device__ __forceinline__ uint32_t flagOf(unsigned long long half) {
  return static_cast<uint32_t>(half >> 32);
}

__device__ __forceinline__ bool hasFlag(const Line& line, uint32_t flag) {
  return flagOf(line.half[0]) == flag && flagOf(line.half[1]) == flag;
}

/// The flag a stalled line shows (the half that is not `flag` yet), for error reports.
__device__ __forceinline__ uint32_t staleFlagOf(const Line& line, uint32_t flag) {
  return flagOf(line.half[0]) != flag ? flagOf(line.half[0]) : flagOf(line.half[1]);
}

__device__ __forceinline__ unsigned long long dataOf(const Line& line) {
  return (line.half[0] & 0xffffffffull) | (line.half[1] << 32);
}

// The byte-wise paths of loadPayload and storePayload (a message's tail, or an unaligned buffer), out of
// line: inlined, they made every use of a payload several times its size in the kernels' code, which a
// launch's blocks fetch into their SMs' instruction caches.
static __device__ __noinline__ unsigned long long loadPayloadBytes(const unsigned char* src, std::size_t bytes,
                                                                   std::size_t at) {
  unsigned long long value = 0;
  for (int b = 0; b < 8; ++b) {
    if (at + b < bytes) value |= static_cast<unsigned long long>(src[at + b]) << (8 * b);
  }
  return value;
}

static __device__ __noinline__ void storePayloadBytes(unsigned char* dst, std::size_t bytes, std::size_t at,
                                                      unsigned long long value) {
  for (int b = 0; b < 8; ++b) {
    if (at + b < bytes) dst[at + b] = static_cast<unsigned char>(value >> (8 * b));
  }
}

/// Payload bytes 8 * line .. 8 * line + 7 of a message of `bytes` at `src`, any alignment (those past the
/// end read as 0).
__device__ __forceinline__ unsigned long long loadPayload(const unsigned char* src, std::size_t bytes,
                                                          std::size_t line) {
  const std::size_t at = line * kPayloadBytes;
  if (at + 8 <= bytes && reinterpret_cast<uintptr_t>(src) % 8 == 0) {
    return *reinterpret_cast<const unsigned long long*>(src + at);
  }
  return at < bytes ? loadPayloadBytes(src, bytes, at) : 0;
}

/// Stores payload bytes 8 * line .. of a message of `bytes` to `dst` (none past the end), any alignment.
__device__ __forceinline__ void storePayload(unsigned char* dst, std::size_t bytes, std::size_t line,
                                             unsigned long long value) {
  const std::size_t at = line * kPayloadBytes;
  if (at + 8 <= bytes && reinterpret_cast<uintptr_t>(dst) % 8 == 0) {
    *reinterpret_cast<unsigned long long*>(dst + at) = value;
  } else if (at < bytes) {
    storePayloadBytes(dst, bytes, at, value);
  }
}

}  // namespace peerlink::kernels::llline
