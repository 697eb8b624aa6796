// cudaDeviceAccess (cuda_device_access.hpp).
#include "net/cuda_device_access.hpp"

#include <cuda_runtime_api.h>

#include "core/cuda_check.hpp"
#include "net/gpu_staged_memory.hpp"
#include "net/stream_markers.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::net {
namespace {

class CudaDevice final : public DeviceAccess {
 public:
  explicit CudaDevice(int device) : device_(device), stream_(device), markers_(device, stream_.get()) {}

  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    DeviceGuard guard(device_);
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
  }

  std::uint64_t mark() override { return markers_.mark(); }
  bool reached(std::uint64_t marker) override { return markers_.reached(marker); }

  void* allocateHost(std::size_t bytes) override {
    DeviceGuard guard(device_);
    void* memory = nullptr;
    PEERLINK_CUDA_CHECK(cudaHostAlloc(&memory, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    return memory;
  }

  void freeHost(void* memory) noexcept override { (void)cudaFreeHost(memory); }

  std::unique_ptr<LocalMemory> stagedMemory() override { return gpuStagedMemory(device_); }

 private:
  int device_;
  Stream stream_;
  StreamMarkers markers_;
};

}  // namespace

std::unique_ptr<DeviceAccess> cudaDeviceAccess(int device) {
  return std::make_unique<CudaDevice>(device);
}

}  // namespace peerlink::net
