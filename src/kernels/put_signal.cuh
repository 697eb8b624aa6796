// Put-with-signal for small transfers, the receiver's wait, and a ping-pong pair that measures their
// latency. Host code includes this; kernel bodies live in put_signal.cu.
//
// Protocol. The sender's kernel stores the data into the peer's buffer, then (after a block barrier) one
// thread stores `value` to the peer's flag with a system-scope release. The receiver's wait kernel polls
// its local flag until it reads >= value, then acquires at system scope. Whatever runs after the wait
// kernel in its stream (a consumer kernel, a copy) is ordered after that acquire by the kernel boundary,
// so it sees the data; no other fence is needed. Flags only grow: use a fresh, larger value per transfer
// and never reset a flag while a peer may still store to it.
//
// Deadlines. Every spin loop in these kernels gives up after its timeout (GPU global timer) and reports
// PEERLINK_STATUS_TIMEOUT with the flag value it saw in a DeviceStatus; it never traps, because a trap
// destroys the CUDA context (and every other transfer of the process). The host checks the status after
// the stream completes and turns a failure into an Error naming the pair (throwIfDeviceFailed).
//
// Every launch function here loads all kernels of src/kernels/ on the current device before its first
// launch (kernel_preload.cuh), so a put's first launch never waits behind a spinning wait. For small
// messages the LL protocol (ll_protocol.cuh) avoids this protocol's fences.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/device_status.cuh"

namespace peerlink::kernels {

/// One block copies `bytes` (any size and alignment; meant for <= 64 KiB, as one block moves it) from
/// `src` to `peerDst`, then stores `value` to `peerFlag` (8-byte aligned) with a system-scope release.
/// Launched on the current device, which is the sender; `peerDst` and `peerFlag` are the receiver's memory
/// (UVA peer pointers). `dropFlag` (PEERLINK_FAULT_DROP_FLAG, tests only) copies the data but skips the
/// flag store, so the receiver's deadline path runs. bytes == 0 sends the flag alone.
void launchPutSignal(void* peerDst, const void* src, std::size_t bytes, uint64_t* peerFlag, uint64_t value,
                     bool dropFlag, cudaStream_t stream);

/// A one-thread kernel on the current device (the receiver) that waits until *localFlag >= value or
/// `timeoutNs` pass, then writes `status` (device memory or mapped pinned host memory): OK, or TIMEOUT
/// with the value it saw last in `observed`; `step` is 0.
void launchWaitSignal(const volatile uint64_t* localFlag, uint64_t value, uint64_t timeoutNs, DeviceStatus* status,
                      cudaStream_t stream);

/// One side of a ping-pong between two GPUs. Launch both sides (launchPingPong on each GPU, each with its
/// device current) without waiting for the first to finish. Round r = 1, 2, ...: the initiator puts the
/// payload and flag value r to the responder, then waits for r on its own flag; the responder waits for
/// r, then puts its payload and r back. Both flags must hold 0 before the launch; both sides must agree
/// on payloadBytes, warmup and iterations.
struct PingPongSide {
  uint64_t* localFlag = nullptr;       ///< on this GPU; the peer stores to it
  uint64_t* peerFlag = nullptr;        ///< on the peer GPU; this side stores to it
  void* peerPayload = nullptr;         ///< the peer's receive buffer of payloadBytes (unused when 0)
  const void* localPayload = nullptr;  ///< what this side sends (unused when payloadBytes is 0)
  std::size_t payloadBytes = 0;        ///< 0: the flag alone
  int warmup = 100;                    ///< untimed rounds first (they absorb the launch skew of the two sides)
  int iterations = 1000;               ///< timed round trips
  bool initiator = false;              ///< exactly one of the two sides
  uint64_t timeoutNs = 1000000000;     ///< per wait
  DeviceStatus* status = nullptr;      ///< OK, or TIMEOUT with step = the round that stalled (0-based)
  uint64_t* elapsedNs = nullptr;       ///< initiator only: global-timer ns of the timed rounds
};

/// Launches one side on the current device. One-way latency = *elapsedNs / (2 * iterations).
void launchPingPong(const PingPongSide& side, cudaStream_t stream);

}  // namespace peerlink::kernels
