// Small messages from one GPU to another without the copy engine: put-with-signal. The sender's kernel
// stores each message together with its sequence number (data and flag in the same 8-byte stores, the LL
// protocol of src/kernels/ll_protocol.cuh) into a line buffer on the receiving GPU; the receiver's kernel
// waits for it with a deadline and unpacks it. Both sides are stream-ordered, so they compose with other
// GPU work and CUDA graphs; neither needs the host in the loop.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace peerlink {

class Transport;

/// One direction, GPU `src` -> GPU `dst`, of this process. Messages are received in the order sent, one at
/// a time: send message k+1 only after message k's receive was enqueued (the receive's stream must reach
/// it before the next send lands, which stream order on the two GPUs gives when the receiver's stream
/// waits for its own previous receive — as it does).
class SignalChannel {
 public:
  /// Allocates the receiver's line buffer for messages of up to `maxBytes` on `dst` and enables peer
  /// access src -> dst through `transport`. PEERLINK_TIMEOUT_MS bounds each receive;
  /// PEERLINK_FAULT_DROP_FLAG=1 (tests only) makes every send store a stale flag.
  SignalChannel(Transport& transport, int src, int dst, std::size_t maxBytes);
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  /// Enqueues on `srcStream` (a stream of GPU src) the store of `bytes` from `data` (GPU src memory).
  void send(const void* data, std::size_t bytes, cudaStream_t srcStream);
  /// Enqueues on `dstStream` (a stream of GPU dst) the wait for the next message and its copy into `data`
  /// (GPU dst memory). `bytes` must match what was sent.
  void receive(void* data, std::size_t bytes, cudaStream_t dstStream);
  /// The outcome of the latest receive, once `dstStream` has reached it: throws Error(Timeout) naming the
  /// pair, the direction and the message when it gave up at its deadline (the message never arrived), and
  /// resets that state. Receives report into one slot, so check after each receive whose fate matters.
  void check();

  int src() const noexcept;
  int dst() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace peerlink
