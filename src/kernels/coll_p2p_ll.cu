// Send/recv in LL lines (CollP2pLlArgs): a small group's messages carry their own flags, so a receiver waits
// for the data itself, and no rank meets its peers at a start or an end barrier (the copy form's two
// handshakes are most of a small group's time: 6 us in a graph on 4x H100 where the LL collectives take 3).
//
// Flags and slots. Rank s's messages to rank r in the group with pair number q (both count their sets
// together: the pair counters) go into r's area, slot [q mod 2][s], as lines flagged q mod (2^32 - 1) + 1:
// never 0 (the zeroed area), and different from set q - 2's, whose lines the slot held before. Before its
// first store into r's slot a block waits until r has started the pair's set q - 1: every send/recv kernel
// (this one, the copy kernel, the copy engines' barrier kernel) says so to each of its peers at its start
// (kPhaseP2pStart, block 0 at least), and it starts only once r's kernel of set q - 2, which read the slot,
// has ended. In a run of sets the signal came long before.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_kernels.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"
#include "kernels/ll_line.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;
using namespace llline;

// The host places each message's lines (placeP2pLlJobs) by coll_kernels.cuh's line geometry.
static_assert(kPayloadBytes == kCollLlLinePayload && sizeof(Line) == kCollLlLineBytes, "one LL line format");

__device__ __forceinline__ Line* slotOf(void* area, unsigned long long pairNumber, int sender, int nranks) {
  const auto parity = static_cast<std::size_t>(pairNumber & 1u);
  return reinterpret_cast<Line*>(static_cast<unsigned char*>(area) +
                                 (parity * static_cast<std::size_t>(nranks) + static_cast<std::size_t>(sender)) *
                                     kCollP2pLlSlotBytes);
}

__device__ __forceinline__ uint32_t flagFor(unsigned long long pairNumber) {
  return static_cast<uint32_t>(pairNumber % 0xffffffffull) + 1u;
}

__device__ __forceinline__ std::size_t linesOf(std::size_t bytes) {
  return (bytes + kPayloadBytes - 1) / kPayloadBytes;
}

// Polls `line` until it shows `flag`; false (failure recorded, naming `peer`) on a timeout.
__device__ __forceinline__ bool awaitLine(const Line* line, uint32_t flag, const CollSyncArgs& s,
                                          const KernelNumbers& numbers, int peer, unsigned long long* data) {
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1;; ++polls) {
    const Line seen = loadLine(line);
    if (hasFlag(seen, flag)) {
      *data = dataOf(seen);
      return true;
    }
    if (polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(s.timeoutNs);
      armed = true;
    } else if (givingUp(s, deadline, polls)) {
      recordFailure(s, numbers, kStepLlData, peer, staleFlagOf(seen, flag), flag);
      return false;
    }
  }
}

// A thread owns lines first, first + stride, ... of every message; it sends all its lines, then receives its
// lines of every message (a receive's lines come whenever their sender stores them).
__global__ void __launch_bounds__(kCollLlThreads) collP2pLlKernel(const __grid_constant__ CollP2pLlArgs args) {
  __shared__ KernelNumbers numbers;
  const CollSyncArgs& s = args.sync;
  const int n = s.nranks;
  const int rank = s.rank;
  readNumbers(s, &numbers);
  const int thread = static_cast<int>(threadIdx.x);
  if (blockIdx.x == 0 && thread < n && thread != rank && inMask(s.peerMask, thread)) {
    signalPeer(s, kPhaseP2pStart, thread, numbers.peerSeq[thread], false);  // "started": relaxed, as blockBarrier's
  }
  // Thread j of each block waits for send j's receiver to have started the pair's previous set.
  bool ready = true;
  if (thread < args.nsends) {
    const int peer = args.sends[thread].peer;
    const unsigned long long previous = numbers.peerSeq[peer] - 1;
    if (previous > 0) ready = awaitPeer(s, numbers, kPhaseP2pStart, 0, peer, previous, kStepStartBarrier, true);
  }
  const bool slotsFree = __syncthreads_or(!ready) == 0;  // else the receivers time out on their lines too
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (slotsFree) {
    for (int j = 0; j < args.nsends; ++j) {
      const CollP2pLlJob& job = args.sends[j];
      const unsigned long long pairNumber = numbers.peerSeq[job.peer];
      Line* lines = slotOf(args.scratch[job.peer], pairNumber, rank, n) + job.lineOffset;
      const uint32_t flag = flagFor(pairNumber);
      const auto* src = static_cast<const unsigned char*>(job.src);
      for (std::size_t line = first; line < linesOf(job.bytes); line += stride) {
        storeLine(lines + line, loadPayload(src, job.bytes, line), flag);
      }
    }
  }
  bool ok = true;
  for (int j = 0; j < args.nrecvs && ok; ++j) {
    const CollP2pLlJob& job = args.recvs[j];
    auto* dst = static_cast<unsigned char*>(job.dst);
    if (job.peer == rank) {  // to itself: a copy (the API allows send and recv to name one buffer)
      const auto* src = static_cast<const unsigned char*>(job.src);
      if (src == dst) continue;
      for (std::size_t line = first; line < linesOf(job.bytes); line += stride) {
        storePayload(dst, job.bytes, line, loadPayload(src, job.bytes, line));
      }
      continue;
    }
    const unsigned long long pairNumber = numbers.peerSeq[job.peer];
    const Line* lines = slotOf(args.scratch[rank], pairNumber, job.peer, n) + job.lineOffset;
    const uint32_t flag = flagFor(pairNumber);
    for (std::size_t line = first; line < linesOf(job.bytes) && ok; line += stride) {
      unsigned long long data = 0;
      ok = awaitLine(lines + line, flag, s, numbers, job.peer, &data);
      if (ok) storePayload(dst, job.bytes, line, data);
    }
  }
  finishKernel(s, numbers);
}

}  // namespace

void launchCollP2pLl(const CollP2pLlArgs& args, int blocks, cudaStream_t stream, const KernelLaunch& launch) {
  detail::launchKernel(collP2pLlKernel, blocks, kCollLlThreads, stream, args, launch);
}

namespace detail {

void preloadCollP2pLlKernels() {
  loadKernel(collP2pLlKernel, "collP2pLlKernel");
}

}  // namespace detail
}  // namespace peerlink::kernels
