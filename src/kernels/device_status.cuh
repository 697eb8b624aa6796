// Device-side deadlines and the status word kernels report through: device code cannot throw, so a kernel
// that gives up writes a DeviceStatus and returns (never traps: a trap kills the context and every other
// transfer with it), and the host turns a non-OK status into a peerlink::Error naming the pair.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "peerlink/error.hpp"
#include "peerlink/status.h"

namespace peerlink::kernels {

/// What a kernel reports. Lives in device memory or in mapped pinned host memory (cudaHostAllocMapped), so
/// the host may poll it while the kernel runs. Written observed/step first, status last.
struct DeviceStatus {
  int status;         ///< a peerlink_status_t, or kStatusPending until the kernel finishes
  int step;           ///< where it stopped: the round of a ping-pong, 0 for a single wait
  uint64_t observed;  ///< the flag value last seen (on a timeout: what arrived instead of the value awaited)
};

/// The status value a host writes before a launch; a kernel always replaces it when it returns.
constexpr int kStatusPending = -1;

/// A DeviceStatus reset to pending.
inline DeviceStatus pendingStatus() {
  return DeviceStatus{kStatusPending, 0, 0};
}

/// Throws Error unless `status` is OK. `what` names the transfer and the pair, e.g. "put-signal 0 -> 1".
inline void throwIfDeviceFailed(const DeviceStatus& status, const std::string& what) {
  if (status.status == PEERLINK_STATUS_OK) return;
  if (status.status == kStatusPending) {
    throw Error(ErrorCode::Internal, what + ": the kernel finished without writing its status");
  }
  // Checked before it becomes an enum: a value outside the enum's range is undefined.
  const std::optional<ErrorCode> code = errorCodeFromValue(status.status);
  const std::string name =
      code ? peerlink_status_name(toStatus(*code)) : "status " + std::to_string(status.status) + " (not a status)";
  throw Error(code.value_or(ErrorCode::Internal), what + ": device reported " + name + " at step " +
                                                      std::to_string(status.step) + " (flag observed " +
                                                      std::to_string(status.observed) + ")");
}

#if defined(__CUDACC__)

/// Nanoseconds of the GPU's global timer. Its update interval is ~1 us on recent GPUs (finer while a
/// profiler runs): fine for deadlines and for timing many round trips, too coarse for one.
__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

/// The SM this thread runs on.
__device__ __forceinline__ unsigned int smId() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/// A point on the global timer after which a spin loop gives up.
struct Deadline {
  uint64_t endNs;
  __device__ __forceinline__ static Deadline after(uint64_t timeoutNs) {
    const uint64_t now = globalTimerNs();
    return Deadline{timeoutNs > ~uint64_t{0} - now ? ~uint64_t{0} : now + timeoutNs};
  }
  __device__ __forceinline__ bool passed() const { return globalTimerNs() > endNs; }
};

/// Relaxed load at system scope: sees stores of other GPUs and the host without the cost of an acquire on
/// every poll; follow a successful poll with acquireFenceSys() or loadAcquireSys().
__device__ __forceinline__ uint64_t loadRelaxedSys(const volatile uint64_t* flag) {
  uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(flag) : "memory");
  return value;
}

/// With the relaxed load before it, an acquire at system scope: the peer's stores released before its flag
/// store are visible to this thread's later loads (and, through the kernel boundary, to later kernels).
__device__ __forceinline__ void acquireFenceSys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/// Acquire load at system scope: after relaxed polls have seen a flag, one of these makes the stores the
/// peer released before it visible to this thread's later accesses, without a fence's wait for this
/// thread's own outstanding stores (a coherent re-read of the same flag sees at least what the polls saw).
__device__ __forceinline__ uint64_t loadAcquireSys(const volatile uint64_t* flag) {
  uint64_t value;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(flag) : "memory");
  return value;
}

/// Release store at system scope: every store this thread made, and those of the threads of its block
/// that reached a __syncthreads() before it (PTX fences are cumulative), is visible to a peer GPU or the
/// host before it sees `value`.
__device__ __forceinline__ void storeReleaseSys(uint64_t* flag, uint64_t value) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(flag), "l"(value) : "memory");
}

/// Relaxed store at system scope: orders nothing before it; for a signal that only says "I have read"
/// (loads whose values were used before a __syncthreads() are complete).
__device__ __forceinline__ void storeRelaxedSys(uint64_t* flag, uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(flag), "l"(value) : "memory");
}

/// Spins until *flag >= value (then acquires) or the deadline passes. Returns whether the value arrived;
/// `observed` gets the last value read either way.
__device__ __forceinline__ bool waitFlagAtLeast(const volatile uint64_t* flag, uint64_t value, Deadline deadline,
                                                uint64_t* observed) {
  for (;;) {
    const uint64_t seen = loadRelaxedSys(flag);
    if (seen >= value) {
      acquireFenceSys();
      *observed = seen;
      return true;
    }
    if (deadline.passed()) {
      *observed = loadRelaxedSys(flag);
      if (*observed >= value) {
        acquireFenceSys();
        return true;
      }
      return false;
    }
  }
}

/// Writes a status for the host: observed and step first, status last, each a volatile store, with a
/// system-scope fence between so a host polling mapped memory never sees a final status with stale fields.
__device__ __forceinline__ void reportStatus(DeviceStatus* out, int status, int step, uint64_t observed) {
  if (out == nullptr) return;
  volatile DeviceStatus* target = out;
  target->observed = observed;
  target->step = step;
  __threadfence_system();
  target->status = status;
  __threadfence_system();
}

#endif  // __CUDACC__

}  // namespace peerlink::kernels
