#include "transport/chunk_plan.hpp"

#include <algorithm>

#include "peerlink/error.hpp"

namespace peerlink {

std::vector<PipelineChunk> planChunks(std::size_t bytes, std::size_t chunkBytes, int slots) {
  if (chunkBytes == 0) throw Error(ErrorCode::InvalidUsage, "pipeline chunk size must be positive");
  if (slots < 1) throw Error(ErrorCode::InvalidUsage, "a pipeline needs at least one staging slot");
  std::vector<PipelineChunk> chunks;
  chunks.reserve(bytes / chunkBytes + 1);
  for (std::size_t offset = 0; offset < bytes; offset += chunkBytes) {
    const int slot = static_cast<int>(chunks.size() % static_cast<std::size_t>(slots));
    chunks.push_back({offset, std::min(chunkBytes, bytes - offset), slot});
  }
  return chunks;
}

}  // namespace peerlink
