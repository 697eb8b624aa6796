// A latch: a one-thread kernel that holds its stream until the host opens it, so copies queued behind
// it on several streams start together (concurrent-transfer timing), as nvbandwidth does.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/device_status.cuh"

namespace peerlink::kernels {

/// Waits on the current device until *flag (mapped pinned host memory) is non-zero, or `timeoutNs`
/// pass; writes OK or TIMEOUT to `status` (mapped memory too).
void launchLatch(const volatile uint64_t* flag, uint64_t timeoutNs, DeviceStatus* status, cudaStream_t stream);

}  // namespace peerlink::kernels
