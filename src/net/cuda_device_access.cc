// cudaDeviceAccess (cuda_device_access.hpp).
#include "net/cuda_device_access.hpp"

#include <cuda_runtime_api.h>

#include <deque>
#include <utility>

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

  std::uint64_t mark() override {
    DeviceGuard guard(device_);
    Event event(device_, cudaEventDisableTiming);
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
};

}  // namespace

std::unique_ptr<DeviceAccess> cudaDeviceAccess(int device) {
  return std::make_unique<CudaDevice>(device);
}

}  // namespace peerlink::net
