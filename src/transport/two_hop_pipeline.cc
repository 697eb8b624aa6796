#include "transport/two_hop_pipeline.hpp"

#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

TwoHopPipeline::TwoHopPipeline(int firstDevice, int secondDevice, int slots)
    : firstEnd_(firstDevice, cudaEventDisableTiming), secondEnd_(secondDevice, cudaEventDisableTiming) {
  for (int slot = 0; slot < slots; ++slot) {
    firstDone_.emplace_back(firstDevice, cudaEventDisableTiming);
    secondDone_.emplace_back(secondDevice, cudaEventDisableTiming);
  }
}

void TwoHopPipeline::enqueue(const std::vector<PipelineChunk>& chunks, const std::vector<void*>& slots,
                             const Hop& first, const Hop& second, cudaStream_t caller, int callerDevice) {
  if (static_cast<int>(slots.size()) != this->slots()) {
    throw Error(ErrorCode::Internal, "two-hop pipeline: slot buffers do not match the plan's slot count");
  }
  if (startDevice_ != callerDevice) {
    start_ = Event(callerDevice, cudaEventDisableTiming);
    startDevice_ = callerDevice;
  }
  {
    DeviceGuard guard(callerDevice);
    PEERLINK_CUDA_CHECK(cudaEventRecord(start_.get(), caller));
  }
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(first.stream, start_.get(), 0));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(second.stream, start_.get(), 0));
  // The previous run (perhaps gated by another caller stream) may still be draining the slots.
  if (ran_) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(first.stream, secondEnd_.get(), 0));
  ran_ = true;

  std::vector<bool> slotUsed(slots.size(), false);
  for (const PipelineChunk& chunk : chunks) {
    const auto slot = static_cast<std::size_t>(chunk.slot);
    {
      DeviceGuard guard(first.device);
      // The slot still holds the chunk before last until hop 2 has moved it on.
      if (slotUsed[slot]) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(first.stream, secondDone_[slot].get(), 0));
      first.enqueue(chunk.offset, chunk.bytes, slots[slot], first.stream);
      PEERLINK_CUDA_CHECK(cudaEventRecord(firstDone_[slot].get(), first.stream));
    }
    {
      DeviceGuard guard(second.device);
      PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(second.stream, firstDone_[slot].get(), 0));
      second.enqueue(chunk.offset, chunk.bytes, slots[slot], second.stream);
      PEERLINK_CUDA_CHECK(cudaEventRecord(secondDone_[slot].get(), second.stream));
    }
    slotUsed[slot] = true;
  }

  {
    DeviceGuard guard(first.device);
    PEERLINK_CUDA_CHECK(cudaEventRecord(firstEnd_.get(), first.stream));
  }
  {
    DeviceGuard guard(second.device);
    PEERLINK_CUDA_CHECK(cudaEventRecord(secondEnd_.get(), second.stream));
  }
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(caller, firstEnd_.get(), 0));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(caller, secondEnd_.get(), 0));
}

}  // namespace peerlink
