// How a pipelined two-hop transfer (STAGED through host memory, RELAY through a third GPU) is cut into
// chunks and which staging slot each chunk uses. Pure; the executor (two_hop_pipeline.cc) follows it.
#pragma once

#include <cstddef>
#include <vector>

namespace peerlink {

struct PipelineChunk {
  std::size_t offset = 0;  ///< into the source and the destination
  std::size_t bytes = 0;
  int slot = 0;  ///< staging buffer slot, chunk index modulo the slot count
};

/// Cuts `bytes` into chunks of `chunkBytes` (the last may be shorter) assigned round-robin to `slots`
/// staging slots. Chunk i may reuse slot i % slots only after chunk i - slots has left it (hop 2 done).
/// Throws Error(InvalidUsage) for chunkBytes == 0 or slots < 1.
std::vector<PipelineChunk> planChunks(std::size_t bytes, std::size_t chunkBytes, int slots);

}  // namespace peerlink
