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

__device__ __forceinline__ Line* slotOf(void* scratch, int parity, int sender, int nranks) {
  return reinterpret_cast<Line*>(static_cast<unsigned char*>(scratch) +
                                 (static_cast<std::size_t>(parity) * nranks + sender) * kCollLlSlotBytes);
}

// Polls line `line` of `sender`'s slot until it shows `flag`; false (failure recorded) on a timeout.
__device__ __forceinline__ bool awaitLine(const CollLlArgs& args, const KernelNumbers& numbers, int parity,
                                          uint32_t flag, std::size_t line, int sender, unsigned long long& data) {
  const CollSyncArgs& s = args.sync;
  const Line* at = slotOf(args.scratch[s.rank], parity, sender, s.nranks) + line;
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1;; ++polls) {
    const Line seen = loadLine(at);
    if (hasFlag(seen, flag)) {
      data = dataOf(seen);
      return true;
    }
    if (polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(s.timeoutNs);
      armed = true;
    } else if (deadline.passed()) {
      recordFailure(s, numbers, kStepLlData, sender, staleFlagOf(seen, flag), flag);
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
// The loops over ranks run at run time, not unrolled over kCollMaxRanks, a message's payload is loaded only
// where it differs from the last one sent (an all-reduce loads its input once), and a reduction folds each
// rank's payload in as it comes, in rank order (PackReducer), rather than gathering them in an array: the
// kernel's code and its path stay short, which is what a one-line call's time is made of.
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
      const int p = rank + k < n ? rank + k : rank + k - n;  // from the next rank on
      const auto* from = static_cast<const unsigned char*>(args.toRank[p]);
      if (line != 0 && from == nullptr) continue;  // a token is line 0 alone
      if (from != loadedFrom) {
        payload = payloadOf(from, args.bytes, line);
        loadedFrom = from;
      }
      storeLine(slotOf(args.scratch[p], parity, rank, n) + line, payload, flag);
    }
    if (localCopy) storePayload(local, args.bytes, line, ownPayload);
  }
  for (std::size_t line = first; line < lines; line += stride) {
    if constexpr (Reduce) {
      PackReducer<Type, Op, unsigned long long> reducer;
      bool ok = true;
      for (int p = 0; p < n && ok; ++p) {
        unsigned long long data = 0;
        if (p == rank) {
          if (args.out != nullptr) data = line == first ? ownFirst : payloadOf(own, args.bytes, line);
        } else if (line == 0 || !inMask(args.tokenMask, p)) {
          ok = awaitLine(args, numbers, parity, flag, line, p, data);
        }
        if (p == 0) {
          reducer.first(data);
        } else {
          reducer.add(data);
        }
      }
      if (!ok) break;
      if (args.out != nullptr) storePayload(static_cast<unsigned char*>(args.out), args.bytes, line, reducer.result(n));
    } else {
      bool ok = true;
      for (int k = 1; k < n && ok; ++k) {
        const int p = rank + k < n ? rank + k : rank + k - n;
        if (line != 0 && inMask(args.tokenMask, p)) continue;
        unsigned long long data = 0;
        ok = awaitLine(args, numbers, parity, flag, line, p, data);
        auto* to = static_cast<unsigned char*>(args.fromRank[p]);
        if (ok && to != nullptr && !inMask(args.tokenMask, p)) storePayload(to, args.bytes, line, data);
      }
      if (!ok) break;
    }
  }
  finishKernel(s, numbers);
}

template <int Type, int Op, bool Reduce>
void loadLlKernel() {
  detail::loadKernel(collLlKernel<Type, Op, Reduce>, "collLlKernel");
}

}  // namespace

int collLlBlocks(std::size_t bytes, int maxBlocks) {
  const std::size_t lines = std::max<std::size_t>(1, (bytes + 7) / 8);
  const std::size_t wanted = (lines + kCollLlThreads - 1) / kCollLlThreads;
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  return static_cast<int>(std::min(wanted, cap));
}

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
