// Calls across nodes captured into CUDA graphs (NodeWorld, when the caller's stream is capturing): each piece is a
// kernel (kernels::launchReplayedAsyncCall) on the stream, or two where a call has several pieces, so that their
// copies in run ahead of their copies out (net/replayed_steps.hpp); every time the graph runs, one host function, a
// root of the graph, starts all its captured calls on the transport in the order they were captured
// (net::NetGroup::startReplay takes a ticket for each piece) and leaves each ticket in pinned memory, where the
// piece's kernels wait for it. A graph keeps what its calls use alive (a CUDA user object); while any graph holding one
// may still run, the communicator's eager calls across nodes first wait for their stream (NodeWorld), so that every
// rank numbers the calls alike: in the order of its stream. A graph's executable graphs run one at a time (the calls'
// tickets are left in one place).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

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

  /// Captures the `pieces` of one call of `group` (whose tickets follow each other) on `stream`, which is capturing:
  /// their kernels on the stream, in net::replayedSteps's order (each gives up waiting after `timeoutNs`), and the
  /// pieces started by the graph's start. The graph owns them from then on.
  void capture(net::NetGroup& group, std::vector<net::ReplayedCall> pieces, cudaStream_t stream,
               std::uint64_t timeoutNs);
  /// Whether a graph holding a captured call has not been destroyed yet (it may run again).
  bool anyAlive() const;
  /// The communicator is going: a graph launched from now on starts none of its calls (its kernels leave at once),
  /// and one starting them now finishes first.
  void close() noexcept;

  struct Shared;      ///< the tickets' memory, the count of captured calls alive, the graphs' starts
  struct Replay;      ///< one captured call
  struct GraphStart;  ///< a graph's calls, started together as it runs

 private:
  /// The graph start of `stream`'s capture: made at its first call (a root host node of the graph).
  GraphStart& startOf(cudaStream_t stream, net::NetWorld& world);

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
