// CudaDeviceAccess (cuda_device_access.hpp).
#include "net/cuda_device_access.hpp"

#include "core/cuda_check.hpp"
#include "net/gpu_staged_memory.hpp"

namespace peerlink::net {

CudaDeviceAccess::CudaDeviceAccess(int device)
    : device_(device), stream_(device), markers_(device, stream_.get()), copied_(device, cudaEventDisableTiming) {}

void CudaDeviceAccess::copyAsync(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
}

void* CudaDeviceAccess::allocateHost(std::size_t bytes) {
  DeviceGuard guard(device_);
  void* memory = nullptr;
  PEERLINK_CUDA_CHECK(cudaHostAlloc(&memory, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
  return memory;
}

std::unique_ptr<LocalMemory> CudaDeviceAccess::stagedMemory() {
  return gpuStagedMemory(device_);
}

// A stream waits for the event as last recorded when it is told to; recording it again later changes nothing for it.
void CudaDeviceAccess::orderAfterCopies(cudaStream_t stream) {
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaEventRecord(copied_.get(), stream_.get()));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, copied_.get(), 0));
}

void CudaDeviceAccess::orderCopiesAfter(cudaEvent_t event) {
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), event, 0));
}

std::unique_ptr<CudaDeviceAccess> cudaDeviceAccess(int device) {
  return std::make_unique<CudaDeviceAccess>(device);
}

}  // namespace peerlink::net
