// Markers on one CUDA stream for the transport's thread, which never waits on the GPU: mark() records an event after
// the work queued so far, reached() polls it (cudaEventQuery). Used by the staged path's copies and its reductions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "peerlink/cuda.hpp"

namespace peerlink::net {

class StreamMarkers {
 public:
  StreamMarkers(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

  /// A marker after everything queued on the stream so far (from 1 on).
  std::uint64_t mark();
  /// Whether the work before `marker` is done (0: nothing is before it). Error(CudaError) for a failure on the stream.
  bool reached(std::uint64_t marker);

 private:
  int device_;
  cudaStream_t stream_;
  std::uint64_t marks_ = 0;
  std::deque<std::pair<std::uint64_t, Event>> pending_;
  std::vector<Event> spare_;
};

}  // namespace peerlink::net
