// The Hopper bulk-copy variant of the SM copy: the SM's bulk copy unit (TMA, cp.async.bulk) moves the
// bytes through shared memory instead of per-thread loads and stores. Host code includes this; the kernel
// lives in bulk_copy.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/copy_kernels.cuh"

namespace peerlink::kernels {

/// Whether launchBulkCopy can run on `device`: compute capability 9.0 or newer.
bool bulkCopySupported(int device);

/// Blocks per SM that launchBulkCopy runs with `config` on the current device: config.blocksPerSm (0: as many
/// as fit), capped by how many blocks with bulkStages x bulkChunkBytes of shared memory fit on an SM.
/// Throws like launchBulkCopy for a bad config or a device without bulk copies.
int bulkCopyBlocksPerSm(const SmCopyConfig& config);

/// launchSmCopy's contract (memcpy semantics, any size and alignment, either side a peer's memory, async on
/// `stream` of the current device, smCount <= 0: every SM), moved by bulk copies: each of smCount x
/// blocks-per-SM blocks (fewer for small copies) streams an equal share of the range through
/// config.bulkStages shared-memory buffers of config.bulkChunkBytes. When dst and src disagree modulo 16, or
/// the range holds no whole aligned 16-byte unit, it runs launchSmCopy with the same config instead.
/// Throws Error(Unsupported) on devices below compute capability 9.0, Error(InvalidUsage) for null pointers
/// or bad bulk fields (launchSmCopy checks its own fields when it runs), Error(CudaError) when the launch fails.
void launchBulkCopy(void* dst, const void* src, std::size_t bytes, int smCount, cudaStream_t stream,
                    const SmCopyConfig& config = SmCopyConfig());

}  // namespace peerlink::kernels
