#include "kernels/ll_protocol.cuh"

#include <string>

#include "core/cuda_check.hpp"
#include "kernels/kernel_preload.cuh"
#include "kernels/ll_line.cuh"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

using namespace llline;

constexpr int kThreads = 128;       // per block of a message of more than one slice
constexpr int kLinesPerThread = 2;  // two 16-byte loads in flight per poll
constexpr int kSliceLines = kThreads * kLinesPerThread;
constexpr unsigned int kPollsPerTimerRead = 256;  // a power of two

// The receiver's bookkeeping at the start of its line buffer; only its own kernels touch it, and the last
// block of each kernel leaves it zeroed for the next.
struct Header {
  unsigned int blocksDone;       // blocks that finished
  unsigned int failedStepPlus1;  // 0, or 1 + the step of the first failure
  unsigned long long observed;   // the flag the first failure saw
  unsigned long long notStart;   // ping-pong initiator: ~(earliest start), so atomicMax keeps the earliest
  unsigned long long unused;
};
static_assert(sizeof(Header) == kLlHeaderBytes, "the header is what llLineBytes reserves");

struct Geometry {
  unsigned int blocks;
  int threads;
};

// One slice of kSliceLines per block; a message of one slice gets the fewest whole warps that hold it.
// Both sides of a ping-pong compute the same geometry, so block b of each side owns the same lines.
Geometry geometryOf(size_t lines) {
  if (lines <= static_cast<size_t>(kSliceLines)) {
    const size_t perThread = (lines + kLinesPerThread - 1) / kLinesPerThread;
    return Geometry{1, static_cast<int>((perThread + 31) / 32 * 32)};
  }
  return Geometry{static_cast<unsigned int>((lines + kSliceLines - 1) / kSliceLines), kThreads};
}

__device__ __forceinline__ Line* linesOf(void* buffer) {
  return reinterpret_cast<Line*>(static_cast<unsigned char*>(buffer) + kLlHeaderBytes);
}

// Line k of this thread: block b owns lines [b * slice, (b + 1) * slice), and a warp's lanes touch
// consecutive lines, so its 16-byte accesses coalesce into 512 contiguous bytes.
__device__ __forceinline__ size_t lineOf(int k) {
  return (static_cast<size_t>(blockIdx.x) * kLinesPerThread + k) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ void sendLines(Line* lines, size_t count,
                                          const unsigned long long (&payload)[kLinesPerThread], uint32_t flag) {
#pragma unroll
  for (int k = 0; k < kLinesPerThread; ++k) {
    if (lineOf(k) < count) storeLine(lines + lineOf(k), payload[k], flag);
  }
}

// Polls this thread's lines until each carries `seq` or the deadline passes, then unpacks them into dst
// (unless null). The deadline starts at the first timer read, kPollsPerTimerRead polls in: a message that
// is already there costs no timer read. On a timeout returns false with the stalled line and its flag.
__device__ __forceinline__ bool receiveLines(const Line* lines, size_t count, uint32_t seq, uint64_t timeoutNs,
                                             unsigned char* dst, size_t bytes, size_t* stalled, uint32_t* observed) {
  bool pending[kLinesPerThread];
  Line seen[kLinesPerThread];
#pragma unroll
  for (int k = 0; k < kLinesPerThread; ++k) pending[k] = lineOf(k) < count;
  Deadline deadline{0};
  bool armed = false;
  for (unsigned int polls = 1;; ++polls) {
#pragma unroll
    for (int k = 0; k < kLinesPerThread; ++k) {
      if (pending[k]) seen[k] = loadLine(lines + lineOf(k));
    }
    bool waiting = false;
#pragma unroll
    for (int k = 0; k < kLinesPerThread; ++k) {
      if (pending[k]) pending[k] = !hasFlag(seen[k], seq);
      waiting = waiting || pending[k];
    }
    if (!waiting) break;
    if (polls % kPollsPerTimerRead != 0) continue;
    if (!armed) {
      deadline = Deadline::after(timeoutNs);
      armed = true;
    } else if (deadline.passed()) {
#pragma unroll
      for (int k = kLinesPerThread - 1; k >= 0; --k) {
        if (pending[k]) {
          *stalled = lineOf(k);
          *observed = staleFlagOf(seen[k], seq);
        }
      }
      return false;
    }
  }
  if (dst != nullptr) {
#pragma unroll
    for (int k = 0; k < kLinesPerThread; ++k) {
      if (lineOf(k) < count) storePayload(dst, bytes, lineOf(k), dataOf(seen[k]));
    }
  }
  return true;
}

// The first failure of the kernel wins the header; the fence orders the record before this block's count.
__device__ __forceinline__ void recordFailure(Header* header, int step, uint32_t observed) {
  if (atomicCAS(&header->failedStepPlus1, 0u, static_cast<unsigned int>(step) + 1u) == 0u) {
    *reinterpret_cast<volatile unsigned long long*>(&header->observed) = observed;
  }
  __threadfence();
}

// Every block counts itself done; the last one reports for the kernel (OK only when no block failed), writes
// the initiator's elapsed time, and zeroes the header for the next kernel on this buffer.
__device__ __forceinline__ void finishBlock(Header* header, DeviceStatus* status, int okStep, uint64_t okObserved,
                                            uint64_t* elapsedNs) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(&header->blocksDone, 1u) != gridDim.x - 1) return;
  __threadfence();
  volatile Header* last = header;
  const unsigned int failedStepPlus1 = last->failedStepPlus1;
  const unsigned long long observed = last->observed;
  const unsigned long long notStart = last->notStart;
  last->blocksDone = 0;
  last->failedStepPlus1 = 0;
  last->observed = 0;
  last->notStart = 0;
  if (failedStepPlus1 != 0) {
    reportStatus(status, PEERLINK_STATUS_TIMEOUT, static_cast<int>(failedStepPlus1 - 1), observed);
    return;
  }
  if (elapsedNs != nullptr) *elapsedNs = globalTimerNs() - ~notStart;
  reportStatus(status, PEERLINK_STATUS_OK, okStep, okObserved);
}

__global__ void __launch_bounds__(kThreads)
    llPutKernel(void* peerLines, const unsigned char* src, size_t bytes, uint32_t flag) {
  const size_t count = llLines(bytes);
  unsigned long long payload[kLinesPerThread];
#pragma unroll
  for (int k = 0; k < kLinesPerThread; ++k) payload[k] = lineOf(k) < count ? loadPayload(src, bytes, lineOf(k)) : 0;
  sendLines(linesOf(peerLines), count, payload, flag);
}

__global__ void __launch_bounds__(kThreads) llReceiveKernel(unsigned char* dst, void* localLines, size_t bytes,
                                                            uint32_t seq, uint64_t timeoutNs, DeviceStatus* status) {
  auto* header = static_cast<Header*>(localLines);
  size_t stalled = 0;
  uint32_t observed = 0;
  if (!receiveLines(linesOf(localLines), llLines(bytes), seq, timeoutNs, dst, bytes, &stalled, &observed)) {
    recordFailure(header, static_cast<int>(stalled), observed);
  }
  finishBlock(header, status, 0, seq, nullptr);
}

__global__ void __launch_bounds__(kThreads) llPingPongKernel(LlPingPongSide side) {
  auto* header = static_cast<Header*>(side.localLines);
  const Line* inbox = linesOf(side.localLines);
  Line* outbox = linesOf(side.peerLines);
  const size_t count = llLines(side.payloadBytes);
  const auto* send = static_cast<const unsigned char*>(side.send);
  auto* receive = static_cast<unsigned char*>(side.receive);
  // The payload never changes: loaded once, so no load sits between a slice's arrival and its reply.
  unsigned long long payload[kLinesPerThread];
#pragma unroll
  for (int k = 0; k < kLinesPerThread; ++k) {
    payload[k] = lineOf(k) < count ? loadPayload(send, side.payloadBytes, lineOf(k)) : 0;
  }
  const int rounds = side.warmup + side.iterations;
  for (int round = 0; round < rounds; ++round) {
    const auto seq = static_cast<uint32_t>(round) + 1u;
    if (side.initiator) {
      if (round == side.warmup && threadIdx.x == 0) atomicMax(&header->notStart, ~globalTimerNs());
      sendLines(outbox, count, payload, seq);
    }
    size_t stalled = 0;
    uint32_t observed = 0;
    const bool arrived =
        receiveLines(inbox, count, seq, side.timeoutNs, receive, side.payloadBytes, &stalled, &observed);
    // The whole slice is in before this block replies (or sends the next round), or the block stops.
    if (__syncthreads_or(!arrived)) {
      if (!arrived) recordFailure(header, round, observed);
      break;
    }
    if (!side.initiator) sendLines(outbox, count, payload, seq);
  }
  finishBlock(header, side.status, rounds, static_cast<uint32_t>(rounds), side.initiator ? side.elapsedNs : nullptr);
}

void requireLines(const void* lines, const char* call, const char* what) {
  if (lines == nullptr || reinterpret_cast<uintptr_t>(lines) % 16 != 0) {
    throw Error(ErrorCode::InvalidUsage,
                std::string(call) + ": " + what + (lines == nullptr ? " is null" : " is not 16-byte aligned"));
  }
}

void requireMessage(size_t bytes, const void* buffer, size_t maxBytes, const char* call, const char* what) {
  if (bytes > maxBytes) {
    throw Error(ErrorCode::InvalidUsage, std::string(call) + ": " + std::to_string(bytes) + " bytes is over the " +
                                             std::to_string(maxBytes) + "-byte limit");
  }
  if (bytes > 0 && buffer == nullptr) {
    throw Error(ErrorCode::InvalidUsage,
                std::string(call) + ": " + what + " is null for a message of " + std::to_string(bytes) + " bytes");
  }
}

void requireSeq(uint32_t seq, const char* call) {
  if (seq == 0) throw Error(ErrorCode::InvalidUsage, std::string(call) + ": seq 0 is what a zeroed line holds");
}

}  // namespace

namespace detail {

void preloadLlKernels() {
  loadKernel(llPutKernel, "llPutKernel");
  loadKernel(llReceiveKernel, "llReceiveKernel");
  loadKernel(llPingPongKernel, "llPingPongKernel");
}

}  // namespace detail

void launchLlPut(void* peerLines, const void* src, size_t bytes, uint32_t seq, bool dropFlag, cudaStream_t stream) {
  requireLines(peerLines, "launchLlPut", "peerLines");
  requireMessage(bytes, src, kLlMaxMessageBytes, "launchLlPut", "src");
  requireSeq(seq, "launchLlPut");
  const uint32_t flag = dropFlag ? (seq == 1 ? UINT32_MAX : seq - 1) : seq;
  const Geometry geometry = geometryOf(llLines(bytes));
  ensureKernelsLoaded();  // this put may be the partner of a receive already spinning on the current device
  llPutKernel<<<geometry.blocks, geometry.threads, 0, stream>>>(peerLines, static_cast<const unsigned char*>(src),
                                                                bytes, flag);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchLlReceive(void* dst, void* localLines, size_t bytes, uint32_t seq, uint64_t timeoutNs, DeviceStatus* status,
                     cudaStream_t stream) {
  requireLines(localLines, "launchLlReceive", "localLines");
  requireMessage(bytes, dst, kLlMaxMessageBytes, "launchLlReceive", "dst");
  requireSeq(seq, "launchLlReceive");
  if (status == nullptr) throw Error(ErrorCode::InvalidUsage, "launchLlReceive: status is null");
  const Geometry geometry = geometryOf(llLines(bytes));
  ensureKernelsLoaded();  // before it spins: its partner's first launch on this device must not load
  llReceiveKernel<<<geometry.blocks, geometry.threads, 0, stream>>>(static_cast<unsigned char*>(dst), localLines, bytes,
                                                                    seq, timeoutNs, status);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchLlPingPong(const LlPingPongSide& side, cudaStream_t stream) {
  requireLines(side.localLines, "launchLlPingPong", "localLines");
  requireLines(side.peerLines, "launchLlPingPong", "peerLines");
  requireMessage(side.payloadBytes, side.send, kLlMaxPingPongBytes, "launchLlPingPong", "send");
  requireMessage(side.payloadBytes, side.receive, kLlMaxPingPongBytes, "launchLlPingPong", "receive");
  if (side.warmup < 0 || side.iterations < 1 || side.iterations > (1 << 30) - side.warmup) {
    throw Error(ErrorCode::InvalidUsage,
                "launchLlPingPong: needs warmup >= 0, iterations >= 1, and fewer than 2^30 rounds");
  }
  if (side.status == nullptr || (side.initiator && side.elapsedNs == nullptr)) {
    throw Error(ErrorCode::InvalidUsage, "launchLlPingPong: status (and elapsedNs on the initiator) must be set");
  }
  const Geometry geometry = geometryOf(llLines(side.payloadBytes));
  ensureKernelsLoaded();
  llPingPongKernel<<<geometry.blocks, geometry.threads, 0, stream>>>(side);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
