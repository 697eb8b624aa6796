// LL128 one-shot (CollLlArgs, the exchange of coll_ll.cu with a denser line). A line is 128 bytes, stored by
// eight consecutive lanes of a warp in one st.v2.u64 instruction, 16 bytes each; the last lane's second
// 8 bytes are the call's flag, so a line carries 120 payload bytes where an LL line carries 8 of 16. A
// receiver's eight lanes load the line in one instruction and take it when the last lane sees the flag.
//
// That relies on the whole path between two GPUs' SMs (memory system, NVLink, NVSwitch) delivering a warp's
// aligned 128-byte store without splitting and reordering it, so a load that sees the flag at the line's
// end sees the bytes before it: NCCL's LL128 rests on the same assumption and enables it by default only
// over NVLink on Volta, Ampere and Hopper (NVIDIA/nccl#281, #786; a PCIe or C2C path may split the line and
// corrupt data silently, nccl#2053). fabricOf (collective_choice.hpp) therefore allows it (ll128Capable) only on an
// NVLink mesh of compute capability 9.0 and up.
//
// Line k of a message holds payload bytes 120 k .. 120 k + 119: lane j < 7 of its lane group bytes
// 120 k + 16 j .. + 15, lane 7 bytes 120 k + 112 .. + 119 and the flag. Payload moves in 8-byte packs
// (PackReducer), so every type's elements stay whole. LL128 lines live in their own scratch area, apart
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

constexpr int kLanesPerLine = kCollLl128LanesPerLine;
constexpr unsigned int kFullWarp = 0xffffffffu;
constexpr int kFlagLane = kLanesPerLine - 1;

template <typename Byte>
__device__ __forceinline__ Byte* slotOf(Byte* scratch, int parity, int sender, int nranks) {
  return scratch + (static_cast<std::size_t>(parity) * nranks + sender) * kCollLl128SlotBytes;
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
  int groupShift;          // the group's first lane in the warp (its bits in a ballot)
  std::size_t firstLine;   // this lane group's first line
  std::size_t warpFirst;   // the warp's first group's first line (the warp loops while it has a line)
  std::size_t lineStride;  // lane groups in the grid
};

__device__ __forceinline__ LanePlace lanePlace() {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  LanePlace place;
  place.lane = static_cast<int>(threadIdx.x % kLanesPerLine);
  place.groupShift = static_cast<int>(threadIdx.x % 32) / kLanesPerLine * kLanesPerLine;
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

// A lane's share of a line: packs `a` and `b` (the flag lane: `a` and the flag).
struct Piece {
  unsigned long long a = 0;
  unsigned long long b = 0;
};

// This lane's packs of the message at `from` (null: a token, zeros).
__device__ __forceinline__ Piece payloadOf(const unsigned char* from, std::size_t bytes, std::size_t pack,
                                           bool flagLane) {
  Piece piece;
  if (from == nullptr) return piece;
  piece.a = loadPayload(from, bytes, pack);
  if (!flagLane) piece.b = loadPayload(from, bytes, pack + 1);
  return piece;
}

__device__ __forceinline__ void storePayloads(unsigned char* to, std::size_t bytes, std::size_t pack, bool flagLane,
                                              const Piece& piece) {
  storePayload(to, bytes, pack, piece.a);
  if (!flagLane) storePayload(to, bytes, pack + 1, piece.b);
}

// Up to kPollBatch peers' lines of one iteration, polled together (awaitPieces). Indexed only in unrolled
// loops, so the arrays stay in registers.
struct PendingLines {
  const unsigned char* at[kPollBatch];  // this lane's 16 bytes of the peer's line in this rank's scratch
  int peer[kPollBatch];
  bool waits[kPollBatch];   // whether this lane's group expects the line (the same for its eight lanes)
  Piece piece[kPollBatch];  // what this lane loaded (left as set where it does not wait)
};

// Polls every pending line until its group's flag lane sees `flag` in the same load (the line's eight lanes
// load it in one instruction): each pass issues the loads of all lines still missing, then looks at them.
// Every lane of the warp calls it with the same batch. True once every group of the warp has its lines;
// false (failure recorded for the first peer missing) when the deadline passes first, for the whole warp.
__device__ __forceinline__ bool awaitPieces(PendingLines& lines, bool flagLane, int groupShift, unsigned long long flag,
                                            const CollSyncArgs& s, const KernelNumbers& numbers) {
  bool got[kPollBatch];  // whether this lane's group has line j
#pragma unroll
  for (int j = 0; j < kPollBatch; ++j) got[j] = !lines.waits[j];
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1;; ++polls) {
#pragma unroll
    for (int j = 0; j < kPollBatch; ++j) {
      if (!got[j]) loadPiece(lines.at[j], lines.piece[j].a, lines.piece[j].b);
    }
    bool seen[kPollBatch];
    bool all = true;
#pragma unroll
    for (int j = 0; j < kPollBatch; ++j) {
      seen[j] = got[j] || !flagLane || lines.piece[j].b == flag;
      all = all && seen[j];
    }
    if (__all_sync(kFullWarp, all)) return true;
#pragma unroll
    for (int j = 0; j < kPollBatch; ++j) got[j] = ((__ballot_sync(kFullWarp, seen[j]) >> groupShift) & 0xffu) == 0xffu;
    if (polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(s.timeoutNs);
      armed = true;
    } else if (__any_sync(kFullWarp, givingUp(s, deadline, polls))) {
      // The first peer missing, picked by value: a loop that breaks at it leads the compiler to index the
      // arrays at run time, which moves them to local memory.
      int stalled = -1;
      unsigned long long observed = 0;
#pragma unroll
      for (int j = kPollBatch - 1; j >= 0; --j) {
        if (!got[j]) {
          stalled = lines.peer[j];
          observed = lines.piece[j].b;
        }
      }
      if (stalled >= 0 && flagLane) recordFailure(s, numbers, kStepLlData, stalled, observed, flag);
      return false;
    }
  }
}

// Every lane of a warp runs the same iterations (a line's eight lanes must store and load it in one
// instruction, and the ballots need the whole warp): iteration i is line firstLine + i * lineStride of each
// lane group, active where that line exists. The group with the warp's first line has the most.
//
// The loops over ranks run at run time, not unrolled over kCollMaxRanks (only a batch of kPollBatch peers
// is), and a reduction folds the ranks' packs in rank order as each batch comes (PackReducer) instead of
// gathering every rank's in arrays: the kernel's code and its path stay short, which is what a one-line
// call's time is made of.
//
// Sending: per peer (from the next rank on) each active lane stores its 16 bytes of the peer's line,
// loading the message's packs only where the message differs from the last (an all-reduce loads its input
// once). Receiving: the warp polls up to kPollBatch peers' lines at once until every group has them
// (awaitPieces), then a reduction folds them in, a copy stores each. A lane stores only its own packs of
// the outputs, whose inputs it read before (a reduction reloads its own contribution, which no one else
// writes), so in-place calls are safe, as in coll_ll.cu.
template <int Type, int Op, bool Reduce>
__global__ void __launch_bounds__(kCollLlThreads) collLl128Kernel(const __grid_constant__ CollLlArgs args) {
  __shared__ KernelNumbers numbers;
  const CollSyncArgs& s = args.sync;
  const int n = s.nranks;
  const int rank = s.rank;
  const std::size_t lines = (args.bytes + kCollLl128LinePayload - 1) / kCollLl128LinePayload;
  const LanePlace place = lanePlace();
  const bool flagLane = place.lane == kFlagLane;
  const std::size_t pieceOffset = static_cast<std::size_t>(place.lane) * 16;
  const auto* own = static_cast<const unsigned char*>(args.toRank[rank]);
  Piece ownFirst;  // this lane's packs of its first line of its own message, loaded with the counters
  awaitPreviousKernel();
  if (place.firstLine < lines) ownFirst = payloadOf(own, args.bytes, packOf(place.firstLine, place.lane), flagLane);
  readNumbers(s, &numbers);
  const unsigned long long flag = numbers.seq;  // >= 1; a zeroed line shows 0
  const int parity = static_cast<int>(numbers.seq & 1u);
  auto* local = static_cast<unsigned char*>(args.fromRank[rank]);
  const bool localCopy = !Reduce && local != nullptr && local != own;

  for (std::size_t i = 0; place.warpFirst + i * place.lineStride < lines; ++i) {
    const std::size_t line = place.firstLine + i * place.lineStride;
    if (line >= lines) continue;  // the warp's other groups still have this iteration
    const std::size_t pack = packOf(line, place.lane);
    Piece piece = ownFirst;
    const unsigned char* loadedFrom = own;
    bool loaded = i == 0;
    for (int k = 1; k < n; ++k) {
      const int p = rankAfter(rank, k, n);
      const auto* from = static_cast<const unsigned char*>(args.toRank[p]);
      if (line != 0 && from == nullptr) continue;  // a token is line 0 alone
      if (!loaded || from != loadedFrom) {
        piece = payloadOf(from, args.bytes, pack, flagLane);
        loadedFrom = from;
        loaded = true;
      }
      unsigned char* at = slotOf(static_cast<unsigned char*>(args.scratch[p]), parity, rank, n) +
                          line * kCollLl128LineBytes + pieceOffset;
      storePiece(at, piece.a, flagLane ? flag : piece.b);
    }
    if (localCopy) {
      storePayloads(local, args.bytes, pack, flagLane, i == 0 ? ownFirst : payloadOf(own, args.bytes, pack, flagLane));
    }
  }

  const auto* mine = static_cast<const unsigned char*>(args.scratch[rank]);
  for (std::size_t i = 0; place.warpFirst + i * place.lineStride < lines; ++i) {
    const std::size_t line = place.firstLine + i * place.lineStride;
    const bool active = line < lines;
    const std::size_t pack = packOf(line, place.lane);
    const std::size_t lineOffset = line * kCollLl128LineBytes + pieceOffset;
    bool failed = false;
    if constexpr (Reduce) {
      const bool result = active && args.out != nullptr;
      PackReducer<Type, Op, unsigned long long> lo;
      PackReducer<Type, Op, unsigned long long> hi;  // the flag lane's second pack is the flag: never stored
      for (int base = 0; base < n && !failed; base += kPollBatch) {
        PendingLines pending;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          const int p = base + j;
          pending.at[j] = slotOf(mine, parity, p, n) + lineOffset;
          pending.peer[j] = p;
          pending.waits[j] = active && p < n && p != rank && (line == 0 || !inMask(args.tokenMask, p));
          pending.piece[j] = Piece{};
          if (p == rank && result) pending.piece[j] = i == 0 ? ownFirst : payloadOf(own, args.bytes, pack, flagLane);
        }
        failed = !awaitPieces(pending, flagLane, place.groupShift, flag, s, numbers);
        if (failed) break;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          if (base + j >= n) break;
          if (base + j == 0) {
            lo.first(pending.piece[j].a);
            hi.first(pending.piece[j].b);
          } else {
            lo.add(pending.piece[j].a);
            hi.add(pending.piece[j].b);
          }
        }
      }
      if (!failed && result) {
        storePayloads(static_cast<unsigned char*>(args.out), args.bytes, pack, flagLane, {lo.result(n), hi.result(n)});
      }
    } else {
      for (int base = 1; base < n && !failed; base += kPollBatch) {
        PendingLines pending;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          const int k = base + j;
          const int p = k < n ? rankAfter(rank, k, n) : rank;
          pending.at[j] = slotOf(mine, parity, p, n) + lineOffset;
          pending.peer[j] = p;
          pending.waits[j] = active && k < n && (line == 0 || !inMask(args.tokenMask, p));
          pending.piece[j] = Piece{};
        }
        failed = !awaitPieces(pending, flagLane, place.groupShift, flag, s, numbers);
        if (failed) break;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          if (base + j >= n) break;
          const int p = pending.peer[j];
          auto* to = static_cast<unsigned char*>(args.fromRank[p]);
          if (active && to != nullptr && !inMask(args.tokenMask, p)) {
            storePayloads(to, args.bytes, pack, flagLane, pending.piece[j]);
          }
        }
      }
    }
    if (failed) break;  // the same for the whole warp (awaitPieces)
  }
  finishKernel(s, numbers);
}

template <int Type, int Op, bool Reduce>
void loadLl128Kernel() {
  detail::loadKernel(collLl128Kernel<Type, Op, Reduce>, "collLl128Kernel");
}

}  // namespace

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
