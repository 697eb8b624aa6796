// LL128 one-shot (CollLlArgs, the exchange of coll_ll.cu with a denser line). A line is 128 bytes, stored by
// eight consecutive lanes of a warp in one st.v2.u64 instruction, 16 bytes each; the last lane's second
// 8 bytes are the call's flag, so a line carries 120 payload bytes where an LL line carries 8 of 16. A
// receiver's eight lanes load the line in one instruction and take it when the last lane sees the flag.
//
// That relies on the whole path between two GPUs' SMs (memory system, NVLink, NVSwitch) delivering a warp's
// aligned 128-byte store without splitting and reordering it, so a load that sees the flag at the line's
// end sees the bytes before it: NCCL's LL128 rests on the same assumption and enables it by default only
// over NVLink on Volta, Ampere and Hopper (NVIDIA/nccl#281, #786; a PCIe or C2C path may split the line and
// corrupt data silently, nccl#2053). chooseLineFormat (algorithm_select.hpp) therefore uses it only on an
// NVLink mesh of compute capability 9.0 and up.
//
// Line k of a message holds payload bytes 120 k .. 120 k + 119: lane j < 7 of its lane group bytes
// 120 k + 16 j .. + 15, lane 7 bytes 120 k + 112 .. + 119 and the flag. Payload moves in 8-byte packs
// (reducePack), so every type's elements stay whole. LL128 lines live in their own scratch area, apart
// from LL's: an LL receiver must never find an LL128 call's payload where it expects its flags.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"
#include "kernels/ll_line.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;
using llline::loadPayload;
using llline::storePayload;

constexpr int kLanesPerLine = 8;
constexpr unsigned int kFullWarp = 0xffffffffu;
constexpr int kFlagLane = kLanesPerLine - 1;

__device__ __forceinline__ unsigned char* slotOf(void* scratch, int parity, int sender, int nranks) {
  return static_cast<unsigned char*>(scratch) +
         (static_cast<std::size_t>(parity) * nranks + sender) * kCollLl128SlotBytes;
}

__device__ __forceinline__ bool inMask(unsigned int mask, int rank) {
  return ((mask >> rank) & 1u) != 0;
}

// This lane's 16 bytes of a line: st/ld.relaxed.sys.v2.u64, one instruction for the warp's 512 bytes.
__device__ __forceinline__ void storePiece(unsigned char* at, unsigned long long a, unsigned long long b) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(at), "l"(a), "l"(b) : "memory");
}

__device__ __forceinline__ void loadPiece(const unsigned char* at, unsigned long long& a, unsigned long long& b) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(at) : "memory");
}

// Where a thread works: its lane in its line's lane group, the group's place in the warp, the first line.
struct LanePlace {
  int lane;                // 0..7 within the line
  int groupInWarp;         // 0..3
  std::size_t firstLine;   // this lane group's first line
  std::size_t warpFirst;   // the warp's first group's first line (the warp loops while it has a line)
  std::size_t lineStride;  // lane groups in the grid
};

__device__ __forceinline__ LanePlace lanePlace() {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  LanePlace place;
  place.lane = static_cast<int>(threadIdx.x % kLanesPerLine);
  place.groupInWarp = static_cast<int>((threadIdx.x % 32) / kLanesPerLine);
  place.firstLine = thread / kLanesPerLine;
  place.warpFirst = (thread - threadIdx.x % 32) / kLanesPerLine;
  place.lineStride = static_cast<std::size_t>(gridDim.x) * blockDim.x / kLanesPerLine;
  return place;
}

// The 8-byte packs of the message this lane carries in `line`: pack index 15 line + 2 lane (+ 1 for lanes
// 0-6; lane 7 carries one pack and the flag).
__device__ __forceinline__ std::size_t packOf(std::size_t line, int lane) {
  return line * (kCollLl128LinePayload / 8) + 2 * static_cast<std::size_t>(lane);
}

// This lane's packs of every message this rank sends (own contribution at [rank]); a token's are 0.
__device__ __forceinline__ void loadInputs(const CollLlArgs& args, std::size_t pack, bool twoPacks,
                                           unsigned long long (&lo)[kCollMaxRanks],
                                           unsigned long long (&hi)[kCollMaxRanks]) {
#pragma unroll
  for (int p = 0; p < kCollMaxRanks; ++p) {
    const auto* from = static_cast<const unsigned char*>(args.toRank[p]);
    if (p > 0 && from == args.toRank[p - 1]) {  // all-reduce sends one buffer to everyone: load it once
      lo[p] = lo[p - 1];
      hi[p] = hi[p - 1];
      continue;
    }
    const bool has = p < args.sync.nranks && from != nullptr;
    lo[p] = has ? loadPayload(from, args.bytes, pack) : 0;
    hi[p] = has && twoPacks ? loadPayload(from, args.bytes, pack + 1) : 0;
  }
}

// Every lane of a warp runs the same iterations (a line's eight lanes must store and load it in one
// instruction, and the ballots below need the whole warp): iteration i is line firstLine + i * lineStride
// of each lane group, active where that line exists. The group with the warp's first line has the most.
//
// Sending: each active lane loads its packs of every message and stores its 16 bytes of each peer's line.
// Receiving: per pending peer every active lane loads its 16 bytes of the line; the flag lane checks the
// flag; a ballot tells each group whether its flag lane saw it, and then all eight lanes take the line. A
// lane stores only its own packs of the outputs, whose inputs it read before (a reduction reloads its own
// contribution, which no one else writes), so in-place calls are safe, as in coll_ll.cu.
template <int Type, int Op, bool Reduce>
__global__ void __launch_bounds__(kCollLlThreads) collLl128Kernel(const __grid_constant__ CollLlArgs args) {
  __shared__ KernelNumbers numbers;
  const CollSyncArgs& s = args.sync;
  const std::size_t lines = (args.bytes + kCollLl128LinePayload - 1) / kCollLl128LinePayload;
  const LanePlace place = lanePlace();
  const bool flagLane = place.lane == kFlagLane;
  const bool twoPacks = !flagLane;
  const bool single = place.firstLine + place.lineStride >= lines;  // one line at most: inputs stay loaded
  unsigned long long lo[kCollMaxRanks];
  unsigned long long hi[kCollMaxRanks];
  awaitPreviousKernel();
  if (place.firstLine < lines) loadInputs(args, packOf(place.firstLine, place.lane), twoPacks, lo, hi);
  readNumbers(s, &numbers);
  const unsigned long long flag = numbers.seq;  // >= 1; a zeroed line shows 0
  const int parity = static_cast<int>(numbers.seq & 1u);
  unsigned int peers = 0;
  for (int p = 0; p < s.nranks; ++p) peers |= p == s.rank ? 0u : 1u << p;
  auto* local = static_cast<unsigned char*>(args.fromRank[s.rank]);
  const bool localCopy = !Reduce && local != nullptr && local != args.toRank[s.rank];
  const std::size_t pieceOffset = static_cast<std::size_t>(place.lane) * 16;

  for (std::size_t i = 0; place.warpFirst + i * place.lineStride < lines; ++i) {
    const std::size_t line = place.firstLine + i * place.lineStride;
    if (line >= lines) continue;  // the warp's other groups still have this iteration
    const std::size_t pack = packOf(line, place.lane);
    if (i != 0) loadInputs(args, pack, twoPacks, lo, hi);
#pragma unroll
    for (int p = 0; p < kCollMaxRanks; ++p) {
      if (inMask(peers, p) && (line == 0 || args.toRank[p] != nullptr)) {
        unsigned char* at = slotOf(args.scratch[p], parity, s.rank, s.nranks) + line * kCollLl128LineBytes;
        storePiece(at + pieceOffset, lo[p], flagLane ? flag : hi[p]);
      }
    }
    if (localCopy) {
      storePayload(local, args.bytes, pack, lo[s.rank]);
      if (twoPacks) storePayload(local, args.bytes, pack + 1, hi[s.rank]);
    }
  }

  bool failed = false;
  for (std::size_t i = 0; !failed && place.warpFirst + i * place.lineStride < lines; ++i) {
    const std::size_t line = place.firstLine + i * place.lineStride;
    const bool active = line < lines;
    const std::size_t pack = packOf(line, place.lane);
    unsigned int pending = !active ? 0u : line == 0 ? peers : peers & ~args.tokenMask;
    if constexpr (Reduce) {
      if (active && !single) {
        const auto* own = static_cast<const unsigned char*>(args.toRank[s.rank]);
        lo[s.rank] = loadPayload(own, args.bytes, pack);
        if (twoPacks) hi[s.rank] = loadPayload(own, args.bytes, pack + 1);
      }
    }
    Deadline deadline{0};
    bool armed = false;
    for (unsigned int polls = 1; __any_sync(kFullWarp, pending != 0); ++polls) {
#pragma unroll
      for (int p = 0; p < kCollMaxRanks; ++p) {
        if (p >= s.nranks) break;  // the same for the whole warp
        const bool needs = inMask(pending, p);
        unsigned long long a = 0;
        unsigned long long b = 0;
        if (needs) {
          loadPiece(slotOf(args.scratch[s.rank], parity, p, s.nranks) + line * kCollLl128LineBytes + pieceOffset, a, b);
        }
        const unsigned int seen = __ballot_sync(kFullWarp, !needs || !flagLane || b == flag);
        const bool lineReady = ((seen >> (place.groupInWarp * kLanesPerLine)) & 0xffu) == 0xffu;
        if (needs && lineReady) {
          if constexpr (Reduce) {
            lo[p] = a;
            hi[p] = b;
          } else {
            auto* to = static_cast<unsigned char*>(args.fromRank[p]);
            if (to != nullptr && !inMask(args.tokenMask, p)) {
              storePayload(to, args.bytes, pack, a);
              if (twoPacks) storePayload(to, args.bytes, pack + 1, b);
            }
          }
          pending &= ~(1u << p);
        }
      }
      if (polls % kPollsPerTimerRead != 0) continue;
      if (!armed) {
        deadline = Deadline::after(s.timeoutNs);
        armed = true;
      } else if (__any_sync(kFullWarp, deadline.passed())) {
        if (pending != 0 && flagLane) {
          const int peer = __ffs(pending) - 1;
          unsigned long long a = 0;
          unsigned long long b = 0;
          loadPiece(slotOf(args.scratch[s.rank], parity, peer, s.nranks) + line * kCollLl128LineBytes + pieceOffset, a,
                    b);
          recordFailure(s, numbers, kStepLlData, peer, b, flag);
        }
        failed = true;
        break;
      }
    }
    if constexpr (Reduce) {
      if (!failed && active && args.out != nullptr) {
        auto* out = static_cast<unsigned char*>(args.out);
        storePayload(out, args.bytes, pack, reducePack<Type, Op>(lo, s.nranks));
        if (twoPacks) storePayload(out, args.bytes, pack + 1, reducePack<Type, Op>(hi, s.nranks));
      }
    }
  }
  finishKernel(s, numbers);
}

template <int Type, int Op, bool Reduce>
void loadLl128Kernel() {
  detail::loadKernel(collLl128Kernel<Type, Op, Reduce>, "collLl128Kernel");
}

}  // namespace

int collLl128Blocks(std::size_t bytes, int maxBlocks) {
  constexpr std::size_t kLinesPerBlock = kCollLlThreads / kLanesPerLine;
  const std::size_t lines = std::max<std::size_t>(1, (bytes + kCollLl128LinePayload - 1) / kCollLl128LinePayload);
  const std::size_t wanted = (lines + kLinesPerBlock - 1) / kLinesPerBlock;
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  return static_cast<int>(std::min(wanted, cap));
}

void launchCollLl128(const CollLlArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                     const KernelLaunch& launch) {
  if (!args.reduce) {
    detail::launchKernel(collLl128Kernel<kU8, kSum, false>, blocks, kCollLlThreads, stream, args, launch);
    return;
  }
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collLl128Kernel<kType, kOp, true>, blocks, kCollLlThreads, stream, args, launch);
  });
}

namespace detail {

void preloadCollLl128Kernels() {
  loadLl128Kernel<kU8, kSum, false>();
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadLl128Kernel<decltype(typeConstant)::value, decltype(opConstant)::value, true>();
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
