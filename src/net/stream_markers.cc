// StreamMarkers (stream_markers.hpp).
#include "net/stream_markers.hpp"

#include "core/cuda_check.hpp"

namespace peerlink::net {

// Events are reused once reached: a call marks every piece's work, and creating an event each time costs more than
// recording one.
std::uint64_t StreamMarkers::mark() {
  DeviceGuard guard(device_);
  Event event;
  if (spare_.empty()) {
    event = Event(device_, cudaEventDisableTiming);
  } else {
    event = std::move(spare_.back());
    spare_.pop_back();
  }
  PEERLINK_CUDA_CHECK(cudaEventRecord(event.get(), stream_));
  pending_.emplace_back(++marks_, std::move(event));
  return marks_;
}

// Events complete in the order they were recorded on the one stream: the first not done ends the scan.
bool StreamMarkers::reached(std::uint64_t marker) {
  while (!pending_.empty() && pending_.front().first <= marker) {
    const cudaError_t status = cudaEventQuery(pending_.front().second.get());
    if (status == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    PEERLINK_CUDA_CHECK(status);
    spare_.push_back(std::move(pending_.front().second));
    pending_.pop_front();
  }
  return true;
}

}  // namespace peerlink::net
