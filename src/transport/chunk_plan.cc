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

namespace {

constexpr std::size_t kRelayShareAlign = 4096;  // each kernel sees the whole transfer's alignment
// The caller's stripe starts at once while the others start behind an event and are waited for through
// another: on 4xH200 giving it 1 MiB more took a split relay from 0.893x to 0.914x a direct copy-engine hop
// at 64 MiB, 0.929x to 0.934x at 256 MiB and 0.79x to 0.87x at 16 MiB.
constexpr std::size_t kRelayCallerLeadBytes = std::size_t{1} << 20;

std::size_t alignUp(std::size_t value) {
  return (value + kRelayShareAlign - 1) / kRelayShareAlign * kRelayShareAlign;
}

}  // namespace

std::vector<RelayShare> planRelayShares(std::size_t bytes, std::size_t relays) {
  if (relays <= 1) return {{0, bytes}};
  const std::size_t first = std::min(bytes, alignUp((bytes + relays - 1) / relays) + kRelayCallerLeadBytes);
  const std::size_t per = alignUp((bytes - first + relays - 2) / (relays - 1));
  std::vector<RelayShare> shares = {{0, first}};
  for (std::size_t i = 1; i < relays; ++i) {
    const std::size_t offset = std::min(bytes, first + (i - 1) * per);
    shares.push_back({offset, std::min(per, bytes - offset)});
  }
  return shares;
}

// On 4xH200 (peerlink_relay_timeline) the pass-through kernels ran faster on fewer
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
