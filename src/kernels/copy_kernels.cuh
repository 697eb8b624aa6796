// The SM copy kernel's host-side launch API. Host code includes this; kernel bodies live in copy_kernels.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace peerlink::kernels {

/// Cache hints of the copy kernel's loads and stores (see copy_kernels.cu for why Streaming is the default).
enum class CopyHint {
  Plain,      ///< ld.global / st.global
  Streaming,  ///< ld.global.nc (read-only path) / st.global.cs (evict-first)
};

const char* copyHintName(CopyHint hint) noexcept;  ///< "plain", "streaming"

/// Tuning of launchSmCopy and launchBulkCopy; the defaults are what the transport uses.
struct SmCopyConfig {
  CopyHint hint = CopyHint::Streaming;
  int unroll = 8;             ///< independent 16-byte loads in flight per thread before its stores: 4 or 8
  int threadsPerBlock = 512;  ///< a multiple of 32 in [32, 1024]
  int blocksPerSm = 0;        ///< 0: as many as fit on an SM (occupancy of the compiled kernel)
  // launchBulkCopy only (bulk_copy.cuh); blocksPerSm above applies to it too.
  int bulkChunkBytes = 32 << 10;  ///< bytes per shared-memory stage: a multiple of 1024
  int bulkStages = 3;             ///< shared-memory stages per block: 2, 3 or 4
};

/// Copies `bytes` from `src` to `dst` (memcpy semantics: the ranges must not overlap, and `src` must not
/// change while the kernel runs) with a kernel on the current device, asynchronously on `stream` (which
/// must belong to the current device). Either pointer may be a peer's memory (a UVA pointer with peer
/// access enabled) or mapped host memory: launched on the source GPU this is a WRITE to the peer, on the
/// destination GPU a READ. Any size and alignment: 16-byte accesses when dst and src agree modulo 16,
/// else the widest unit they agree on (8, 4, 2 or 1 bytes; slower). The grid is
/// smCount x blocks-per-SM blocks (smCount <= 0: every SM of the device), fewer for small copies.
/// bytes == 0 launches nothing. Throws Error(InvalidUsage) for null pointers or a bad config,
/// Error(CudaError) when the launch fails.
void launchSmCopy(void* dst, const void* src, std::size_t bytes, int smCount, cudaStream_t stream,
                  const SmCopyConfig& config = SmCopyConfig());

}  // namespace peerlink::kernels
