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

// On 4xH200 (session 8, round 37, peerlink_relay_timeline) the pass-through kernels ran faster on fewer
// SMs: split across two relays, both kernels together took 236 us for 64 MiB on all 132 SMs each, 194 on 33,
// 187 on 16 and 8 (359 GB/s, a direct SM read's 356), and 774 / 734 / 723 us for 256 MiB; one relay moving
// it all took 239 us on 132 SMs, 212 on 33, 213 on 16 (820-826 us for 256 MiB from 33 SMs down, 840 on 132).
// Why is not measured: on all SMs each of the two relays' kernels took about 1.8x as long as one kernel
// alone on the same bytes (242 against 135 us for 32 MiB).
int relayKernelSms(int smCount, std::size_t relays) {
  const int divisor = relays > 1 ? 8 : 4;
  return std::max(1, smCount / divisor);
}

}  // namespace peerlink
