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

__device__ __forceinline__ bool inMask(unsigned int mask, int rank) {
  return ((mask >> rank) & 1u) != 0;
}

// Polls line `line` of the slots of the ranks in `pending` until each shows `flag`, handing each arrival to
// `arrived(rank, payload)`; false (failure recorded) on a timeout.
template <typename Arrived>
__device__ __forceinline__ bool receiveLines(const CollLlArgs& args, const KernelNumbers& numbers, int parity,
                                             uint32_t flag, std::size_t line, unsigned int pending, Arrived&& arrived) {
  const CollSyncArgs& s = args.sync;
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1; pending != 0; ++polls) {
#pragma unroll
    for (int p = 0; p < kCollMaxRanks; ++p) {
      if (!inMask(pending, p)) continue;
      const Line seen = loadLine(slotOf(args.scratch[s.rank], parity, p, s.nranks) + line);
      if (hasFlag(seen, flag)) {
        arrived(p, dataOf(seen));
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
      recordFailure(s, numbers, kStepLlData, peer, staleFlagOf(seen, flag), flag);
      return false;
    }
  }
  return true;
}

// The payload of `line` of every message this rank sends (own contribution at [rank]); a token's is 0.
__device__ __forceinline__ void loadInputs(const CollLlArgs& args, std::size_t line,
                                           unsigned long long (&payload)[kCollMaxRanks]) {
#pragma unroll
  for (int p = 0; p < kCollMaxRanks; ++p) {
    const auto* from = static_cast<const unsigned char*>(args.toRank[p]);
    payload[p] = p < args.sync.nranks && from != nullptr ? loadPayload(from, args.bytes, line) : 0;
  }
}

// A thread owns lines first, first + stride, ... of every message (the grid is at most one block per SM,
// so every block is resident and no waiting block can keep a sender's block from running). It sends all
// its lines, then receives them: it stores only to its own lines of the outputs, whose inputs it read in
// the send pass (a reduction reloads its own contribution, which no one else writes), so in-place calls
// are safe. Tokens are line 0 of their message: its thread sends and awaits them, the others only messages.
template <int Type, int Op, bool Reduce>
__global__ void __launch_bounds__(kCollLlThreads) collLlKernel(const __grid_constant__ CollLlArgs args) {
  __shared__ KernelNumbers numbers;
  const CollSyncArgs& s = args.sync;
  const std::size_t lines = (args.bytes + kPayloadBytes - 1) / kPayloadBytes;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool single = first + stride >= lines;  // at most one line: payload keeps its inputs throughout
  unsigned long long payload[kCollMaxRanks];
  awaitPreviousKernel();
  if (first < lines) loadInputs(args, first, payload);  // in flight together with the counters' read
  readNumbers(s, &numbers);
  const uint32_t flag = static_cast<uint32_t>(numbers.seq % 0xffffffffull) + 1u;
  const int parity = static_cast<int>(numbers.seq & 1u);
  unsigned int peers = 0;
  for (int p = 0; p < s.nranks; ++p) peers |= p == s.rank ? 0u : 1u << p;
  auto* local = static_cast<unsigned char*>(args.fromRank[s.rank]);
  const bool localCopy = !Reduce && local != nullptr && local != args.toRank[s.rank];
  for (std::size_t line = first; line < lines; line += stride) {
    if (line != first) loadInputs(args, line, payload);
#pragma unroll
    for (int p = 0; p < kCollMaxRanks; ++p) {
      if (inMask(peers, p) && (line == 0 || args.toRank[p] != nullptr)) {
        storeLine(slotOf(args.scratch[p], parity, s.rank, s.nranks) + line, payload[p], flag);
      }
    }
    if (localCopy) storePayload(local, args.bytes, line, payload[s.rank]);
  }
  for (std::size_t line = first; line < lines; line += stride) {
    const unsigned int messages = line == 0 ? peers : peers & ~args.tokenMask;
    if constexpr (Reduce) {
      if (!single) {
        payload[s.rank] = loadPayload(static_cast<const unsigned char*>(args.toRank[s.rank]), args.bytes, line);
      }
      // The incoming lines take the places of the outgoing ones, own contribution at [rank].
      const bool ok = receiveLines(args, numbers, parity, flag, line, messages,
                                   [&](int p, unsigned long long data) { payload[p] = data; });
      if (!ok) break;
      if (args.out != nullptr) {
        storePayload(static_cast<unsigned char*>(args.out), args.bytes, line, reducePack<Type, Op>(payload, s.nranks));
      }
    } else {
      const bool ok = receiveLines(args, numbers, parity, flag, line, messages, [&](int p, unsigned long long data) {
        auto* to = static_cast<unsigned char*>(args.fromRank[p]);
        if (to != nullptr && !inMask(args.tokenMask, p)) storePayload(to, args.bytes, line, data);
      });
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
