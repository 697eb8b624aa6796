// DeviceAccess (net_call.hpp) on a GPU: the staged path's copies on a stream of their own, markers as events, and
// pinned host memory from cudaHostAlloc, so the copy of one piece overlaps MPI's transfer of the one before.
#pragma once

#include <memory>

#include "net/net_call.hpp"

namespace peerlink::net {

/// Copies between `device`'s memory and pinned host memory. A call's data must be ready when the call starts (the
/// communicator makes it from a host function of its stream, or after an event), since these copies run on their
/// own stream. Error(CudaError) naming the call for a CUDA failure.
std::unique_ptr<DeviceAccess> cudaDeviceAccess(int device);

}  // namespace peerlink::net
