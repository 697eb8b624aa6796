// LL one-shot (CollLlArgs): every collective's small and medium messages, with no barrier. Each thread
// owns lines (8 payload bytes each) of every message: it loads its inputs, stores its lines of each outgoing
// message into the receiving rank's scratch with the call's flag (ll_line.cuh), then polls its lines of
// every incoming message in its own scratch and reduces them in rank order (reduce) or stores each to its
// destination (copy). The flag of call `seq` is seq mod (2^32 - 1) + 1: never 0 (what the zeroed scratch holds), and
// different for the calls before and after on the same parity slot.
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
using namespace llline;

__device__ __forceinline__ Line* slotOf(void* scratch, int parity, int sender, int nranks, int slotShift) {
  return reinterpret_cast<Line*>(static_cast<unsigned char*>(scratch) +
                                 ((static_cast<std::size_t>(parity) * nranks + sender) << slotShift));
}

// Up to kPollBatch peers' lines of one thread, polled together (awaitLines). Indexed only in unrolled
// loops, so the arrays stay in registers.
struct PendingLines {
  const Line* at[kPollBatch];  // the line in this rank's scratch
  int peer[kPollBatch];
  bool waits[kPollBatch];
  unsigned long long data[kPollBatch];  // the payload once the line shows the flag (left as set elsewhere)
};

// Polls every pending line until it shows `flag`: each pass issues the loads of all lines still missing,
// then looks at them. False (failure recorded for the first peer missing) on a timeout.
__device__ __forceinline__ bool awaitLines(PendingLines& lines, const CollSyncArgs& s, const KernelNumbers& numbers,
                                           uint32_t flag) {
  bool got[kPollBatch];
#pragma unroll
  for (int j = 0; j < kPollBatch; ++j) got[j] = !lines.waits[j];
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1;; ++polls) {
    Line seen[kPollBatch];
#pragma unroll
    for (int j = 0; j < kPollBatch; ++j) {
      if (!got[j]) seen[j] = loadLine(lines.at[j]);
    }
    bool all = true;
#pragma unroll
    for (int j = 0; j < kPollBatch; ++j) {
      if (!got[j] && hasFlag(seen[j], flag)) {
        lines.data[j] = dataOf(seen[j]);
        got[j] = true;
      }
      all = all && got[j];
    }
    if (all) return true;
    if (polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(s.timeoutNs);
      armed = true;
    } else if (givingUp(s, deadline, polls)) {
      // The first peer missing, picked by value: a loop that breaks at it leads the compiler to index the
      // arrays at run time, which moves them to local memory.
      int stalled = -1;
      uint32_t observed = 0;
#pragma unroll
      for (int j = kPollBatch - 1; j >= 0; --j) {
        if (!got[j]) {
          stalled = lines.peer[j];
          observed = staleFlagOf(seen[j], flag);
        }
      }
      if (stalled >= 0) recordFailure(s, numbers, kStepLlData, stalled, observed, flag);
      return false;
    }
  }
}

// The payload of `line` of the message at `from` (null: a token, 0).
__device__ __forceinline__ unsigned long long payloadOf(const unsigned char* from, std::size_t bytes,
                                                        std::size_t line) {
  return from != nullptr ? loadPayload(from, bytes, line) : 0;
}

// A thread owns lines first, first + stride, ... of every message (the grid is at most one block per SM,
// so every block is resident and no waiting block can keep a sender's block from running). It sends all
// its lines, then receives them: it stores only to its own lines of the outputs, whose inputs it read in
// the send pass (a reduction reloads its own contribution, which no one else writes), so in-place calls
// are safe. Tokens are line 0 of their message: its thread sends and awaits them, the others only messages.
//
// The loops over ranks run at run time, not unrolled over kCollMaxRanks (only a batch of kPollBatch peers
// polled together is), a message's payload is loaded only where it differs from the last one sent (an
// all-reduce loads its input once), and a reduction folds the ranks' payloads in rank order as each batch
// comes (PackReducer) rather than gathering every rank's in an array: the kernel's code and its path stay
// short, which is what a one-line call's time is made of.
template <int Type, int Op, bool Reduce>
__global__ void __launch_bounds__(kCollLlThreads) collLlKernel(const __grid_constant__ CollLlArgs args) {
  __shared__ KernelNumbers numbers;
  const CollSyncArgs& s = args.sync;
  const int n = s.nranks;
  const int rank = s.rank;
  const std::size_t lines = (args.bytes + kPayloadBytes - 1) / kPayloadBytes;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto* own = static_cast<const unsigned char*>(args.toRank[rank]);
  unsigned long long ownFirst = 0;  // this thread's first line of its own message, loaded with the counters
  awaitPreviousKernel();
  if (first < lines) ownFirst = payloadOf(own, args.bytes, first);
  readNumbers(s, &numbers);
  const uint32_t flag = static_cast<uint32_t>(numbers.seq % 0xffffffffull) + 1u;
  const int parity = static_cast<int>(numbers.seq & 1u);
  auto* local = static_cast<unsigned char*>(args.fromRank[rank]);
  const bool localCopy = !Reduce && local != nullptr && local != own;
  for (std::size_t line = first; line < lines; line += stride) {
    const unsigned long long ownPayload = line == first ? ownFirst : payloadOf(own, args.bytes, line);
    unsigned long long payload = ownPayload;
    const unsigned char* loadedFrom = own;
    for (int k = 1; k < n; ++k) {
      const int p = rankAfter(rank, k, n);  // from the next rank on
      const auto* from = static_cast<const unsigned char*>(args.toRank[p]);
      if (line != 0 && from == nullptr) continue;  // a token is line 0 alone
      if (from != loadedFrom) {
        payload = payloadOf(from, args.bytes, line);
        loadedFrom = from;
      }
      storeLine(slotOf(args.scratch[p], parity, rank, n, args.slotShift) + line, payload, flag);
    }
    if (localCopy) storePayload(local, args.bytes, line, ownPayload);
  }
  for (std::size_t line = first; line < lines; line += stride) {
    bool ok = true;
    if constexpr (Reduce) {
      PackReducer<Type, Op, unsigned long long> reducer;
      for (int base = 0; base < n && ok; base += kPollBatch) {
        PendingLines pending;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          const int p = base + j;
          pending.at[j] = slotOf(args.scratch[rank], parity, p, n, args.slotShift) + line;
          pending.peer[j] = p;
          pending.waits[j] = p < n && p != rank && (line == 0 || !inMask(args.tokenMask, p));
          pending.data[j] = 0;
          if (p == rank && args.out != nullptr) {
            pending.data[j] = line == first ? ownFirst : payloadOf(own, args.bytes, line);
          }
        }
        ok = awaitLines(pending, s, numbers, flag);
        if (!ok) break;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          if (base + j >= n) break;
          if (base + j == 0) {
            reducer.first(pending.data[j]);
          } else {
            reducer.add(pending.data[j]);
          }
        }
      }
      if (ok && args.out != nullptr) {
        storePayload(static_cast<unsigned char*>(args.out), args.bytes, line, reducer.result(n));
      }
    } else {
      for (int base = 1; base < n && ok; base += kPollBatch) {
        PendingLines pending;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          const int k = base + j;
          const int p = k < n ? rankAfter(rank, k, n) : rank;
          pending.at[j] = slotOf(args.scratch[rank], parity, p, n, args.slotShift) + line;
          pending.peer[j] = p;
          pending.waits[j] = k < n && (line == 0 || !inMask(args.tokenMask, p));
          pending.data[j] = 0;
        }
        ok = awaitLines(pending, s, numbers, flag);
        if (!ok) break;
#pragma unroll
        for (int j = 0; j < kPollBatch; ++j) {
          if (base + j >= n) break;
          auto* to = static_cast<unsigned char*>(args.fromRank[pending.peer[j]]);
          if (to != nullptr && !inMask(args.tokenMask, pending.peer[j])) {
            storePayload(to, args.bytes, line, pending.data[j]);
          }
        }
      }
    }
    if (!ok) break;
  }
  finishKernel(s, numbers);
}

template <int Type, int Op, bool Reduce>
void loadLlKernel() {
  detail::loadKernel(collLlKernel<Type, Op, Reduce>, "collLlKernel");
}

}  // namespace

void launchCollLl(const CollLlArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                  const KernelLaunch& launch) {
  if (!args.reduce) {
    detail::launchKernel(collLlKernel<kU8, kSum, false>, blocks, kCollLlThreads, stream, args, launch);
    return;
  }
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(collLlKernel<kType, kOp, true>, blocks, kCollLlThreads, stream, args, launch);
  });
}

namespace detail {

void preloadCollLlKernels() {
  loadLlKernel<kU8, kSum, false>();
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadLlKernel<decltype(typeConstant)::value, decltype(opConstant)::value, true>();
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
