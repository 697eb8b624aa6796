#include "core/cuda_check.hpp"
#include "kernels/kernel_preload.cuh"
#include "kernels/latch_kernel.cuh"

namespace peerlink::kernels {
namespace {

__global__ void latchKernel(const volatile uint64_t* flag, uint64_t timeoutNs, DeviceStatus* status) {
  const Deadline deadline = Deadline::after(timeoutNs);
  uint64_t observed = 0;
  const bool opened = waitFlagAtLeast(flag, 1, deadline, &observed);
  reportStatus(status, opened ? PEERLINK_STATUS_OK : PEERLINK_STATUS_TIMEOUT, 0, observed);
}

}  // namespace

namespace detail {

void preloadLatchKernels() {
  loadKernel(latchKernel, "latchKernel");
}

}  // namespace detail

void launchLatch(const volatile uint64_t* flag, uint64_t timeoutNs, DeviceStatus* status, cudaStream_t stream) {
  ensureKernelsLoaded();  // the copies queued behind the latch must not load while it spins
  latchKernel<<<1, 1, 0, stream>>>(flag, timeoutNs, status);
  PEERLINK_CUDA_CHECK_LAUNCH();
}

}  // namespace peerlink::kernels
