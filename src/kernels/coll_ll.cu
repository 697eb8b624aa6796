// LL one-shot reduction (CollLlArgs): all-reduce and reduce of small messages with no barrier.
//
// A line is 16 bytes: two 8-byte halves of {4 bytes of payload, 4 bytes of flag}, stored with one
// st.relaxed.sys.v2.u64 and polled with ld.relaxed.sys.v2.u64; an aligned 8-byte access is single-copy
// atomic, so a half that shows the flag shows its payload (ll_protocol.cuh explains the protocol). The flag
// of call `seq` is seq mod (2^32 - 1) + 1: never 0 (what the zeroed scratch holds), and different for the
// two calls before and after on the same parity slot. Thread t of block b owns line b * blockDim + t: it
// loads its 8 bytes of input, stores the line into its slot in every peer's scratch, polls the same line
// of every peer's slot in its own scratch, reduces in rank order and stores the 8 bytes of output -- so
// in place (send == recv) is safe: the only thread that overwrites an input line read it before.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/kernel_preload.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

constexpr int kLlThreads = 256;

struct alignas(16) Line {
  unsigned long long half[2];
};

__device__ __forceinline__ Line* slotOf(void* scratch, int parity, int sender, int nranks) {
  return reinterpret_cast<Line*>(static_cast<unsigned char*>(scratch) +
                                 (static_cast<std::size_t>(parity) * nranks + sender) * kCollLlSlotBytes);
}

__device__ __forceinline__ void storeLine(Line* line, unsigned long long data, unsigned int flag) {
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

__device__ __forceinline__ unsigned int flagOf(unsigned long long half) {
  return static_cast<unsigned int>(half >> 32);
}

// The 8 payload bytes of `line` (zero past `bytes`), any alignment.
__device__ __forceinline__ unsigned long long loadPayload(const unsigned char* src, std::size_t bytes,
                                                          std::size_t line) {
  const std::size_t at = line * 8;
  if (at + 8 <= bytes && reinterpret_cast<uintptr_t>(src) % 8 == 0) {
    return *reinterpret_cast<const unsigned long long*>(src + at);
  }
  unsigned long long value = 0;
#pragma unroll
  for (int b = 0; b < 8; ++b) {
    if (at + b < bytes) value |= static_cast<unsigned long long>(src[at + b]) << (8 * b);
  }
  return value;
}

__device__ __forceinline__ void storePayload(unsigned char* dst, std::size_t bytes, std::size_t line,
                                             unsigned long long value) {
  const std::size_t at = line * 8;
  if (at + 8 <= bytes && reinterpret_cast<uintptr_t>(dst) % 8 == 0) {
    *reinterpret_cast<unsigned long long*>(dst + at) = value;
    return;
  }
#pragma unroll
  for (int b = 0; b < 8; ++b) {
    if (at + b < bytes) dst[at + b] = static_cast<unsigned char>(value >> (8 * b));
  }
}

template <int Type>
union Pack8 {
  unsigned long long raw;
  typename Elem<Type>::S e[8 / sizeof(typename Elem<Type>::S)];
};

template <int Type, int Op>
__device__ __forceinline__ unsigned long long reducePayloads(const unsigned long long (&v)[kCollMaxRanks], int nranks) {
  using E = Elem<Type>;
  using A = typename E::A;
  constexpr int kElems = 8 / static_cast<int>(sizeof(typename E::S));
  Pack8<Type> in;
  in.raw = v[0];
  A acc[kElems];
#pragma unroll
  for (int e = 0; e < kElems; ++e) acc[e] = E::load(in.e[e]);
#pragma unroll
  for (int j = 1; j < kCollMaxRanks; ++j) {
    if (j < nranks) {
      in.raw = v[j];
#pragma unroll
      for (int e = 0; e < kElems; ++e) acc[e] = applyOp<A, Op>(acc[e], E::load(in.e[e]));
    }
  }
  Pack8<Type> out;
#pragma unroll
  for (int e = 0; e < kElems; ++e) out.e[e] = E::store(finishOp<A, Op>(acc[e], nranks));
  return out.raw;
}

// Polls line `line` of every peer's slot until each shows `flag`; false (failure recorded) on a timeout.
__device__ __forceinline__ bool gatherLines(const CollLlArgs& args, const KernelNumbers& numbers, int parity,
                                            unsigned int flag, std::size_t line,
                                            unsigned long long (&payload)[kCollMaxRanks]) {
  const CollSyncArgs& s = args.sync;
  unsigned int pending = 0;
  for (int p = 0; p < s.nranks; ++p) {
    if (p != s.rank) pending |= 1u << p;
  }
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1; pending != 0; ++polls) {
#pragma unroll
    for (int p = 0; p < kCollMaxRanks; ++p) {
      if (((pending >> p) & 1u) == 0) continue;
      const Line seen = loadLine(slotOf(args.scratch[s.rank], parity, p, s.nranks) + line);
      if (flagOf(seen.half[0]) == flag && flagOf(seen.half[1]) == flag) {
        payload[p] = (seen.half[0] & 0xffffffffull) | (seen.half[1] << 32);
        pending &= ~(1u << p);
      }
    }
    if (pending == 0 || polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(s.timeoutNs);
      armed = true;
    } else if (deadline.passed()) {
      const int peer = __ffs(pending) - 1;
      const Line seen = loadLine(slotOf(args.scratch[s.rank], parity, peer, s.nranks) + line);
      const unsigned int observed = flagOf(seen.half[0]) != flag ? flagOf(seen.half[0]) : flagOf(seen.half[1]);
      recordFailure(s, numbers, kStepLlData, peer, observed, flag);
      return false;
    }
  }
  return true;
}

template <int Type, int Op>
__global__ void __launch_bounds__(kLlThreads) collLlKernel(const __grid_constant__ CollLlArgs args) {
  using S = typename Elem<Type>::S;
  __shared__ KernelNumbers numbers;
  readNumbers(args.sync, &numbers);
  const CollSyncArgs& s = args.sync;
  const unsigned int flag = static_cast<unsigned int>(numbers.seq % 0xffffffffull) + 1u;
  const int parity = static_cast<int>(numbers.seq & 1u);
  const std::size_t bytes = args.count * sizeof(S);
  const std::size_t lines = (bytes + 7) / 8;
  const std::size_t line = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line < lines) {
    const unsigned long long mine = loadPayload(static_cast<const unsigned char*>(args.send), bytes, line);
    unsigned long long payload[kCollMaxRanks];
#pragma unroll
    for (int p = 0; p < kCollMaxRanks; ++p) {
      payload[p] = mine;  // peers' entries are replaced as their lines arrive
      if (p < s.nranks && p != s.rank) storeLine(slotOf(args.scratch[p], parity, s.rank, s.nranks) + line, mine, flag);
    }
    if (gatherLines(args, numbers, parity, flag, line, payload) && args.recv != nullptr) {
      storePayload(static_cast<unsigned char*>(args.recv), bytes, line, reducePayloads<Type, Op>(payload, s.nranks));
    }
  }
  finishKernel(args.sync);
}

}  // namespace

int collLlThreads(std::size_t bytes) {
  const std::size_t lines = std::max<std::size_t>(1, (bytes + 7) / 8);
  if (lines >= static_cast<std::size_t>(kLlThreads)) return kLlThreads;
  return static_cast<int>((lines + 31) / 32 * 32);
}

int collLlBlocks(std::size_t bytes) {
  const std::size_t lines = std::max<std::size_t>(1, (bytes + 7) / 8);
  return static_cast<int>((lines + kLlThreads - 1) / kLlThreads);
}

void launchCollLl(const CollLlArgs& args, CollType type, CollOp op, int blocks, int threads, cudaStream_t stream) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    collLlKernel<kType, kOp><<<blocks, threads, 0, stream>>>(args);
  });
  PEERLINK_CUDA_CHECK_LAUNCH();
}

namespace detail {

void preloadCollLlKernels() {
  for (int type = kF64; type <= kU8; ++type) {
    for (int op = kSum; op <= kAvg; ++op) {
      if (op == kAvg && type > kBf16) continue;
      dispatchTypeOp(static_cast<CollType>(type), static_cast<CollOp>(op), [](auto typeConstant, auto opConstant) {
        constexpr int kType = decltype(typeConstant)::value;
        constexpr int kOp = decltype(opConstant)::value;
        loadKernel(collLlKernel<kType, kOp>, "collLlKernel");
      });
    }
  }
}

}  // namespace detail
}  // namespace peerlink::kernels
