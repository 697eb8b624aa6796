// Calls across nodes captured into CUDA graphs (NodeWorld, when the caller's stream is capturing): each is a host
// function that starts the call on the transport every time the graph runs (net::NetGroup::startReplay, which takes
// the call's ticket in the stream's order) and the kernel after it (kernels::launchReplayedAsyncCall), which reads
// that ticket from pinned memory the host function wrote. A graph keeps what its calls use alive (a CUDA user
// object each); while any graph holding one may still run, the communicator's eager calls across nodes first wait
// for their stream (NodeWorld), so that every rank numbers the calls in its stream's order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "net/net_world.hpp"

namespace peerlink::coll {

class CapturedCalls {
 public:
  CapturedCalls();
  /// Frees the tickets' pinned memory, unless a graph still holds a call (then it is kept: such a graph must not run
  /// again, but its destruction must not touch freed memory).
  ~CapturedCalls();
  CapturedCalls(const CapturedCalls&) = delete;
  CapturedCalls& operator=(const CapturedCalls&) = delete;

  /// Queues `call` of `group` on `stream`, which is capturing: the host function, then the kernel (which gives up
  /// waiting after `timeoutNs`). The graph the capture makes owns the call from then on.
  void capture(net::NetGroup& group, net::ReplayedCall call, cudaStream_t stream, std::uint64_t timeoutNs);
  /// Whether a graph holding a captured call has not been destroyed yet (it may run again).
  bool anyAlive() const;

  struct Shared;  ///< the tickets' memory and the count of captured calls alive, shared with the graphs

 private:
  std::shared_ptr<Shared> shared_;
};

/// This thread's CUDA calls in the relaxed capture mode while it lives: memory is allocated during a capture.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode();
  ~RelaxedCaptureMode();
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace peerlink::coll
