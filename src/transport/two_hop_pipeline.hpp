// Executes a chunk plan (chunk_plan.hpp) across two hops through a set of staging slots: hop 1 moves a
// chunk from the source into a slot, hop 2 from the slot to the destination. The two hops run on their
// own streams, so hop 1 of chunk i+1 overlaps hop 2 of chunk i; events order each slot's reuse.
// STAGED (slots in pinned host memory) and RELAY (slots on a third GPU) are both this pipeline.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "peerlink/cuda.hpp"
#include "transport/chunk_plan.hpp"

namespace peerlink {

/// Enqueues one hop of one chunk: (offset into source/destination, bytes, staging slot, stream).
using HopFunction = std::function<void(std::size_t offset, std::size_t bytes, void* slot, cudaStream_t stream)>;

struct Hop {
  int device = -1;  ///< the GPU whose stream carries the hop
  cudaStream_t stream = nullptr;
  HopFunction enqueue;
};

/// Events for one pipeline shape, reused across runs (re-recording an event is legal once the waits
/// that name it have been enqueued, which the enqueue order below guarantees).
class TwoHopPipeline {
 public:
  TwoHopPipeline(int firstDevice, int secondDevice, int slots);

  /// Enqueues every chunk. `caller` (a stream of `callerDevice`) gates the start and waits for the end.
  void enqueue(const std::vector<PipelineChunk>& chunks, const std::vector<void*>& slots, const Hop& first,
               const Hop& second, cudaStream_t caller, int callerDevice);

  int slots() const noexcept { return static_cast<int>(firstDone_.size()); }

 private:
  std::vector<Event> firstDone_;   ///< per slot, on the first hop's device
  std::vector<Event> secondDone_;  ///< per slot, on the second hop's device
  Event start_;                    ///< created lazily on the caller's device
  int startDevice_ = -1;
  Event firstEnd_;
  Event secondEnd_;
  bool ran_ = false;
};

}  // namespace peerlink
