// cudaDeviceAccess (cuda_device_access.hpp).
#include "net/cuda_device_access.hpp"

#include <cuda_runtime_api.h>

#include <deque>
#include <utility>
#include <vector>

#include "core/cuda_check.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::net {
namespace {

class CudaDevice final : public DeviceAccess {
 public:
  explicit CudaDevice(int device) : device_(device), stream_(device) {}

  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    DeviceGuard guard(device_);
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
  }

  // Events are reused once reached: a call marks every piece's copies, and creating an event each time costs more
  // than recording one.
  std::uint64_t mark() override {
    DeviceGuard guard(device_);
    Event event;
    if (spare_.empty()) {
      event = Event(device_, cudaEventDisableTiming);
    } else {
      event = std::move(spare_.back());
      spare_.pop_back();
    }
    PEERLINK_CUDA_CHECK(cudaEventRecord(event.get(), stream_.get()));
    pending_.emplace_back(++marks_, std::move(event));
    return marks_;
  }

  // Events complete in the order they were recorded on the one stream: the first not done ends the scan.
  bool reached(std::uint64_t marker) override {
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

  void* allocateHost(std::size_t bytes) override {
    void* memory = nullptr;
    PEERLINK_CUDA_CHECK(cudaHostAlloc(&memory, bytes, cudaHostAllocPortable));
    return memory;
  }

  void freeHost(void* memory) noexcept override { (void)cudaFreeHost(memory); }

 private:
  int device_;
  Stream stream_;
  std::uint64_t marks_ = 0;
  std::deque<std::pair<std::uint64_t, Event>> pending_;
  std::vector<Event> spare_;
};

}  // namespace

std::unique_ptr<DeviceAccess> cudaDeviceAccess(int device) {
  return std::make_unique<CudaDevice>(device);
}

}  // namespace peerlink::net
