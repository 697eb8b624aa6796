// The staged path's computations on the GPU whose memory a call's data lives in: the pieces lie in pinned host
// memory (the slots, and landing buffers of this memory's own), which the GPU reads and writes directly over PCIe,
// so a reduction of a received piece is a kernel on a stream of the transport's (the plans' reduction,
// kernels/plan_reduce.cuh), not work of the host's cores, which stay with MPI. The transport's thread only queues
// the kernels and polls their events (LocalMemory::queues). A plan's own copies between pinned buffers (rare on the
// staged path) go on the same stream, in order with the reductions.
#pragma once

#include <memory>

#include "net/plan_runner.hpp"

namespace peerlink::net {

/// Reductions on `device` over pinned host memory (cudaHostAlloc, mapped): the memory of the staged path's pieces
/// where the caller's data is on that GPU. Every reduction is queued on one stream, in order (more sources than a
/// kernel takes, kCollMaxRanks, in several launches). Error(CudaError) naming the call for a CUDA failure.
std::unique_ptr<LocalMemory> gpuStagedMemory(int device);

}  // namespace peerlink::net
