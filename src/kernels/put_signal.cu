#include "kernels/put_signal.cuh"

#include <string>

#include "core/cuda_check.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/kernel_preload.cuh"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kUnroll = 4;  // 1024 threads x 4 x 16 B = 64 KiB: the largest put-with-signal in one pass

// Stores the payload, then releases the flag. Other threads' stores are covered by thread 0's release
// because they precede it in causality order through the barrier (PTX fences are cumulative).
template <typename T>
__device__ __forceinline__ void put(void* peerDst, const void* src, size_t bytes, uint64_t* peerFlag, uint64_t value,
                                    bool storeFlag) {
  detail::copyRange<CopyHint::Streaming, T, kUnroll>(peerDst, src, bytes, threadIdx.x, blockDim.x);
  __syncthreads();
  if (threadIdx.x == 0 && storeFlag) storeReleaseSys(peerFlag, value);
}

template <typename T>
__global__ void __launch_bounds__(kMaxThreads)
    putSignalKernel(void* peerDst, const void* src, size_t bytes, uint64_t* peerFlag, uint64_t value, bool dropFlag) {
  put<T>(peerDst, src, bytes, peerFlag, value, !dropFlag);
}

__global__ void waitSignalKernel(const volatile uint64_t* flag, uint64_t value, uint64_t timeoutNs,
                                 DeviceStatus* status) {
  uint64_t observed = 0;
  const bool arrived = waitFlagAtLeast(flag, value, Deadline::after(timeoutNs), &observed);
  reportStatus(status, arrived ? PEERLINK_STATUS_OK : PEERLINK_STATUS_TIMEOUT, 0, observed);
}

// Thread 0 waits; the block learns the outcome through shared memory at the barrier.
__device__ __forceinline__ bool blockWait(const PingPongSide& side, uint64_t value, int round, int* stalled) {
  if (threadIdx.x == 0) {
    uint64_t observed = 0;
    if (!waitFlagAtLeast(side.localFlag, value, Deadline::after(side.timeoutNs), &observed)) {
      reportStatus(side.status, PEERLINK_STATUS_TIMEOUT, round, observed);
      *stalled = 1;
    }
  }
  __syncthreads();
  return *stalled == 0;
}

template <typename T>
__global__ void __launch_bounds__(kMaxThreads) pingPongKernel(PingPongSide side) {
  __shared__ int stalled;
  if (threadIdx.x == 0) stalled = 0;
  __syncthreads();
  const int rounds = side.warmup + side.iterations;
  uint64_t start = 0;
  for (int round = 0; round < rounds; ++round) {
    const auto value = static_cast<uint64_t>(round) + 1;
    if (side.initiator) {
      if (round == side.warmup && threadIdx.x == 0) start = globalTimerNs();
      put<T>(side.peerPayload, side.localPayload, side.payloadBytes, side.peerFlag, value, true);
      if (!blockWait(side, value, round, &stalled)) return;
    } else {
      if (!blockWait(side, value, round, &stalled)) return;
      put<T>(side.peerPayload, side.localPayload, side.payloadBytes, side.peerFlag, value, true);
    }
  }
  if (threadIdx.x == 0) {
    if (side.initiator) *side.elapsedNs = globalTimerNs() - start;
    reportStatus(side.status, PEERLINK_STATUS_OK, rounds, side.initiator ? rounds : 0);
  }
}

void requireFlag(const void* flag, const char* call, const char* what) {
  if (flag == nullptr || reinterpret_cast<uintptr_t>(flag) % sizeof(uint64_t) != 0) {
    throw Error(ErrorCode::InvalidUsage,
                std::string(call) + ": " + what + (flag == nullptr ? " is null" : " is not 8-byte aligned"));
  }
}

}  // namespace

namespace detail {

void preloadPutSignalKernels() {
  loadKernel(waitSignalKernel, "waitSignalKernel");
  for (const int unit : {16, 8, 4, 2, 1}) {
    withUnitType(unit, [](auto element) {
      using T = decltype(element);
      loadKernel(putSignalKernel<T>, "putSignalKernel");
      loadKernel(pingPongKernel<T>, "pingPongKernel");
    });
  }
}

}  // namespace detail

void launchPutSignal(void* peerDst, const void* src, size_t bytes, uint64_t* peerFlag, uint64_t value, bool dropFlag,
                     cudaStream_t stream) {
  requireFlag(peerFlag, "launchPutSignal", "peerFlag");
  if (bytes > 0 && (peerDst == nullptr || src == nullptr)) {
    throw Error(ErrorCode::InvalidUsage, "launchPutSignal: null buffer for " + std::to_string(bytes) + " bytes");
  }
  const int unit = bytes > 0 ? detail::unitBytes(peerDst, src) : 16;
  const int threads = detail::oneBlockThreads(bytes, unit, kUnroll, kMaxThreads);
  ensureKernelsLoaded();  // this put may be the partner of a wait already spinning on the current device
  detail::withUnitType(unit, [&](auto element) {
    using T = decltype(element);
    putSignalKernel<T><<<1, threads, 0, stream>>>(peerDst, src, bytes, peerFlag, value, dropFlag);
  });
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchWaitSignal(const volatile uint64_t* localFlag, uint64_t value, uint64_t timeoutNs, DeviceStatus* status,
                      cudaStream_t stream) {
  requireFlag(const_cast<const uint64_t*>(localFlag), "launchWaitSignal", "localFlag");
  if (status == nullptr) throw Error(ErrorCode::InvalidUsage, "launchWaitSignal: status is null");
  ensureKernelsLoaded();  // before it spins: its partner's first launch on this device must not load
  waitSignalKernel<<<1, 1, 0, stream>>>(localFlag, value, timeoutNs, status);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

void launchPingPong(const PingPongSide& side, cudaStream_t stream) {
  requireFlag(side.localFlag, "launchPingPong", "localFlag");
  requireFlag(side.peerFlag, "launchPingPong", "peerFlag");
  if (side.payloadBytes > 0 && (side.peerPayload == nullptr || side.localPayload == nullptr)) {
    throw Error(ErrorCode::InvalidUsage,
                "launchPingPong: null payload buffer for " + std::to_string(side.payloadBytes) + " bytes");
  }
  if (side.warmup < 0 || side.iterations < 1) {
    throw Error(ErrorCode::InvalidUsage, "launchPingPong: needs warmup >= 0 and iterations >= 1");
  }
  if (side.status == nullptr || (side.initiator && side.elapsedNs == nullptr)) {
    throw Error(ErrorCode::InvalidUsage, "launchPingPong: status (and elapsedNs on the initiator) must be set");
  }
  const bool payload = side.payloadBytes > 0;
  const int unit = payload ? detail::unitBytes(side.peerPayload, side.localPayload) : 16;
  const int threads = payload ? detail::oneBlockThreads(side.payloadBytes, unit, kUnroll, kMaxThreads) : 1;
  ensureKernelsLoaded();
  detail::withUnitType(unit, [&](auto element) {
    using T = decltype(element);
    pingPongKernel<T><<<1, threads, 0, stream>>>(side);
  });
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
