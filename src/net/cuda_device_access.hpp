// DeviceAccess (net_call.hpp) on a GPU: the staged path's copies on a stream of their own, markers as events, and
// pinned host memory from cudaHostAlloc, so the copy of one piece overlaps MPI's transfer of the one before.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "net/net_call.hpp"
#include "net/queued_computations.hpp"
#include "net/stream_markers.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::net {

/// Copies between `device`'s memory and pinned host memory, on a stream of their own: a call's data must be ready
/// when its first copy starts (orderCopiesAfter, or the caller waits for its stream first). Error(CudaError) naming
/// the call for a CUDA failure.
class CudaDeviceAccess final : public DeviceAccess {
 public:
  explicit CudaDeviceAccess(int device);

  void copyAsync(void* dst, const void* src, std::size_t bytes) override;
  std::uint64_t mark() override { return markers_.mark(); }
  bool reached(std::uint64_t marker) override { return markers_.reached(marker); }
  void* allocateHost(std::size_t bytes) override;
  void freeHost(void* memory) noexcept override { (void)cudaFreeHost(memory); }
  std::unique_ptr<LocalMemory> stagedMemory() override;

  /// The work queued on `stream` from now on waits for every copy queued here so far: the copies out of a call left
  /// queued (NetOptions::copiesOutInStreamOrder). Any thread, between calls of the transport.
  void orderAfterCopies(cudaStream_t stream);
  /// The copies queued here from now on wait for `event` as last recorded (the work a caller's stream held then):
  /// a call's data is copied as the caller's stream leaves it, without the host waiting for the stream. Any thread,
  /// between calls of the transport.
  void orderCopiesAfter(cudaEvent_t event);
  /// Queues a queued call's device side (net::queuedDeviceOps) on the copy stream: its copies, the waits for `ready`
  /// to reach a ticket and the writes of tickets to `copied`, 64-bit stream memory operations on those words of
  /// pinned host memory; and its computations, on a stream of their own, each `kernel` on the arguments `asked`
  /// holds for its ticket, between a wait for the asked word and a write to the computed word; the copy stream's
  /// next work waits for the last. Submitted in the order of `ops`: where the two streams share a hardware queue,
  /// they run in that order, which never waits on later work. The caller's thread, while no call of the transport
  /// queues copies.
  void queue(const std::vector<QueuedDeviceOp>& ops, std::atomic<std::uint64_t>& copied,
             const std::atomic<std::uint64_t>& ready, AskedComputations& asked, const AskedKernel& kernel);

 private:
  int device_;
  Stream stream_;
  StreamMarkers markers_;
  Event copied_;  ///< recorded after the copies queued so far, for orderAfterCopies
  /// Queued calls' computations, apart from the copies: piece p + 1's kernels need not wait behind piece p's copies.
  Stream computeStream_;
  Event computed_;  ///< recorded after a call's last computation, for the copy stream
};

std::unique_ptr<CudaDeviceAccess> cudaDeviceAccess(int device);

}  // namespace peerlink::net
