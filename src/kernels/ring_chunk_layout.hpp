// How a ring chain's bytes are cut into chunks: chunks of the chain's chunk size, then a tail of smaller ones.
// Host and device code (the kernels find a chunk's bytes from its number; the host checks the round count and
// the CPU tests check the cut).
#pragma once

#include <cstddef>

#if defined(__CUDACC__)
#define PEERLINK_RING_HD __host__ __device__
#else
#define PEERLINK_RING_HD
#endif

namespace peerlink::kernels {

/// The most tail tiers (PEERLINK_COLL_RING_TAIL) and the smallest tail chunk.
constexpr int kRingMaxTailTiers = 3;
constexpr std::size_t kRingMinTailChunkBytes = std::size_t{4} << 10;

/// Chunk `number` of a chain: bytes [offset, offset + bytes) of the chain's range.
struct RingChunk {
  std::size_t offset;
  std::size_t bytes;
};

/// A chain of a ring kernel ends one hop per rank after its first rank's last store, each hop taking a chunk's
/// time on its block (a block moves at most ~13.5 GB/s, so a 64 KiB chunk ~5 us a hop). The tail cuts the
/// chain's last bytes finer so that drain shrinks, while the body keeps the large chunks whose rounds cost
/// less per byte: tier t (1..tiers) in chunks of chunkBytes >> t, one chunk per block (the last tier takes
/// what is left, so up to 2^tiers more). Chunks are numbered in offset order; the body's are whole, and with
/// no tail the last may be short. A tier is dropped when its chunks would be under kRingMinTailChunkBytes or
/// not whole 128-byte lines (a chunk that starts mid-line costs every warp's stores a line more).
struct RingChunkLayout {
  std::size_t bytes = 0;
  std::size_t chunkBytes = 1;
  std::size_t bodyChunks = 0;
  int tiers = 0;
  std::size_t tierChunks[kRingMaxTailTiers] = {};

  PEERLINK_RING_HD static RingChunkLayout make(std::size_t bytes, std::size_t chunkBytes, std::size_t blocks,
                                               int tiers) {
    RingChunkLayout layout;
    layout.bytes = bytes;
    layout.chunkBytes = chunkBytes == 0 ? 1 : chunkBytes;
    int kept = tiers < 0 ? 0 : (tiers > kRingMaxTailTiers ? kRingMaxTailTiers : tiers);
    while (kept > 0 &&
           ((layout.chunkBytes >> kept) < kRingMinTailChunkBytes || (layout.chunkBytes >> kept) % 128 != 0)) {
      --kept;
    }
    layout.tiers = kept;
    if (kept == 0) {
      layout.bodyChunks = (bytes + layout.chunkBytes - 1) / layout.chunkBytes;
      return layout;
    }
    const std::size_t perTier = blocks == 0 ? 1 : blocks;
    std::size_t tail = 0;
    for (int t = 1; t <= kept; ++t) tail += perTier * (layout.chunkBytes >> t);
    layout.bodyChunks = bytes > tail ? (bytes - tail) / layout.chunkBytes : 0;
    std::size_t rest = bytes - layout.bodyChunks * layout.chunkBytes;
    for (int t = 1; t <= kept; ++t) {
      const std::size_t size = layout.chunkBytes >> t;
      const std::size_t whole = rest / size < perTier ? rest / size : perTier;
      const std::size_t chunks = t < kept ? whole : (rest + size - 1) / size;  // the last tier: every byte left
      layout.tierChunks[t - 1] = chunks;
      rest -= chunks * size < rest ? chunks * size : rest;
    }
    return layout;
  }

  PEERLINK_RING_HD std::size_t count() const {
    std::size_t chunks = bodyChunks;
    for (int t = 0; t < tiers; ++t) chunks += tierChunks[t];
    return chunks;
  }

  /// Chunk `number` (< count()); past the end, {bytes, 0}.
  PEERLINK_RING_HD RingChunk at(std::size_t number) const {
    if (number < bodyChunks) {
      const std::size_t offset = number * chunkBytes;
      return {offset, bytes - offset < chunkBytes ? bytes - offset : chunkBytes};
    }
    std::size_t offset = bodyChunks * chunkBytes;
    number -= bodyChunks;
    for (int t = 1; t <= tiers; ++t) {
      const std::size_t size = chunkBytes >> t;
      if (number < tierChunks[t - 1]) {
        const std::size_t first = offset + number * size;
        return {first, bytes - first < size ? bytes - first : size};
      }
      offset += tierChunks[t - 1] * size;
      number -= tierChunks[t - 1];
    }
    return {bytes, 0};
  }
};

}  // namespace peerlink::kernels
