// The collective kernels' launch shapes (coll_kernels.cuh): their grids, chunks and rounds, as host functions
// of rank-independent sizes, so every rank of a call computes the same shape, the kernel choice can check a
// pipelined kernel's rounds without linking device code, and CPU tests pin them down.
#include <algorithm>

#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {
namespace {

// Copies: one pass of a block's 16-byte loads (512 threads x 16 B) is the smallest chunk, 64 KiB the largest.
constexpr std::size_t kCopyMinChunkBytes = std::size_t{8} << 10;
constexpr std::size_t kCopyMaxChunkBytes = std::size_t{64} << 10;
// Direct-read reductions: a block per 16 KiB of a rank's work.
constexpr std::size_t kReduceBytesPerBlock = std::size_t{16} << 10;
// The rings' smallest chunk, unless the setting asks for less.
constexpr std::size_t kRingMinChunkBytes = std::size_t{8} << 10;
// Rounds per block the reduce kernels and the SM gather aim at: a chain's fill costs n - 1 rounds, and 16
// rounds of at least 8 KiB beat 8 of 16 KiB from 16 MiB (4 KiB rounds cost the reduce 40% at 8 MiB).
constexpr std::size_t kRoundsPerBlock = 16;
// The broadcast aims at 64 rounds of at most 32 KiB: a chain of n ranks ends n - 2 whole-grid rounds after the
// root's last store, so smaller rounds fill sooner; below 8 KiB their flags and barriers cost more than that.
constexpr std::size_t kBroadcastRoundsPerBlock = 64;
constexpr std::size_t kBroadcastMaxChunkBytes = std::size_t{32} << 10;
// The ring reduce's grid cap: with the 32 MiB stage every block gets 64 KiB slots, and the block count at that
// slot size is what counts (128 beat 64; 132 was no faster).
constexpr int kRingReduceMaxBlocks = 128;
// The reduce's single chain: its blocks claim chunks as they go, and a chain on fewer, faster blocks fills
// sooner (32 blocks beat 128 by 2-5%; 16-20 are too few, one block moving at most ~13.5 GB/s).
constexpr int kSingleChainBlocks = 32;
// The single chain's largest chunk from 256 MiB on its default grid: 128 KiB rounds beat 64 KiB ones there by
// 1%; below, 64 KiB (a chain of 4 MiB rounds takes twice as long to fill).
constexpr std::size_t kSingleChainLargeChunkFrom = std::size_t{256} << 20;
constexpr std::size_t kSingleChainLargeChunk = std::size_t{128} << 10;

// Up to `largest` (16-byte multiples), at least kRingMinChunkBytes unless `largest` is less, aiming at `rounds`
// rounds per block in whole 128-byte lines: a chunk that starts mid-line makes each warp's 512-byte stores touch
// five lines, not four.
std::size_t ringChunk(std::size_t bytes, int maxBlocks, std::size_t rounds, std::size_t largest) {
  const std::size_t blocks = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t perRound = bytes / (blocks * rounds) / 128 * 128;
  largest = std::max<std::size_t>(16, largest / 16 * 16);
  return std::min(largest, std::max(std::min(kRingMinChunkBytes, largest), perRound));
}

// Blocks for `bytes` in chunks of `chunk`, at most `maxBlocks`.
int blocksFor(std::size_t bytes, int maxBlocks, std::size_t chunk) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  return static_cast<int>(std::max<std::size_t>(1, std::min(cap, (bytes + chunk - 1) / chunk)));
}

// The ring reduce's largest chunk when the setting leaves it (0): 32 KiB on grids of 64 blocks or more, where
// each block moves at most 1/64 of the GPU's link rate, 64 KiB on smaller ones.
std::size_t reduceLargestChunk(int grid, std::size_t maxChunk) {
  if (maxChunk != 0) return maxChunk;
  return grid >= 64 ? std::size_t{32} << 10 : kCollRingMaxChunkBytes;
}

std::size_t singleChainChunk(std::size_t bytes, int grid, std::size_t maxChunk) {
  if (maxChunk != 0 || grid >= 64 || bytes < kSingleChainLargeChunkFrom) return maxChunk;
  return kSingleChainLargeChunk;
}

}  // namespace

bool collRoundsFit(std::size_t bytes, int blocks, std::size_t chunkBytes) {
  const std::size_t perRound = static_cast<std::size_t>(std::max(1, blocks)) * std::max<std::size_t>(1, chunkBytes);
  return (bytes + perRound - 1) / perRound < (std::size_t{1} << kCollRoundBits);
}

int collLlBlocks(std::size_t bytes, int maxBlocks) {
  const std::size_t lines = std::max<std::size_t>(1, (bytes + 7) / 8);
  const std::size_t wanted = (lines + kCollLlThreads - 1) / kCollLlThreads;
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  return static_cast<int>(std::min(wanted, cap));
}

int collLl128Blocks(std::size_t bytes, int maxBlocks) {
  constexpr std::size_t kLinesPerBlock = kCollLlThreads / kCollLl128LanesPerLine;
  const std::size_t lines = std::max<std::size_t>(1, (bytes + kCollLl128LinePayload - 1) / kCollLl128LinePayload);
  const std::size_t wanted = (lines + kLinesPerBlock - 1) / kLinesPerBlock;
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  return static_cast<int>(std::min(wanted, cap));
}

int collReduceBlocks(std::size_t bytes, int maxBlocks) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t wanted = (bytes + kReduceBytesPerBlock - 1) / kReduceBytesPerBlock;
  return static_cast<int>(std::max<std::size_t>(1, std::min(wanted, cap)));
}

int collReduceRankBound(int nranks, int ndst) {
  const int most = std::max(nranks, ndst);
  return most <= 2 ? 2 : most <= 4 ? 4 : kCollMaxRanks;
}

std::size_t collCopyChunkBytes(std::size_t bytes, int maxBlocks) {
  const std::size_t blocks = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t perBlock = (bytes + blocks - 1) / blocks;
  const std::size_t rounded = (perBlock + kCopyMinChunkBytes - 1) / kCopyMinChunkBytes * kCopyMinChunkBytes;
  return std::min(kCopyMaxChunkBytes, std::max(kCopyMinChunkBytes, rounded));
}

int collCopyBlocks(std::size_t bytes, int maxBlocks) {
  const std::size_t cap = static_cast<std::size_t>(std::max(1, std::min(maxBlocks, kCollMaxBlocks)));
  const std::size_t chunk = collCopyChunkBytes(bytes, maxBlocks);
  const std::size_t wanted = (bytes + chunk - 1) / chunk;
  return static_cast<int>(std::max<std::size_t>(1, std::min(wanted, cap)));
}

std::size_t collRingChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return ringChunk(bytes, maxBlocks, kRoundsPerBlock, maxChunk == 0 ? kCollRingMaxChunkBytes : maxChunk);
}

int collRingBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return blocksFor(bytes, maxBlocks, collRingChunkBytes(bytes, maxBlocks, maxChunk));
}

int collRingChainBlocks(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk) {
  return collRingBlocks(bytes, std::max(1, maxBlocks / std::max(1, chains)), maxChunk);
}

std::size_t collRingBroadcastChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return ringChunk(bytes, maxBlocks, kBroadcastRoundsPerBlock, maxChunk == 0 ? kBroadcastMaxChunkBytes : maxChunk);
}

int collRingBroadcastBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk) {
  return blocksFor(bytes, maxBlocks, collRingBroadcastChunkBytes(bytes, maxBlocks, maxChunk));
}

int collRingReduceChainBlocks(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk) {
  const int capped = std::min(maxBlocks, kRingReduceMaxBlocks);
  return collRingChainBlocks(bytes, chains, capped, reduceLargestChunk(capped, maxChunk));
}

std::size_t collRingReduceChainChunkBytes(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk) {
  const int capped = std::min(maxBlocks, kRingReduceMaxBlocks);
  const std::size_t largest = reduceLargestChunk(capped, maxChunk);
  const std::size_t slots = static_cast<std::size_t>(kCollRingSlots) * static_cast<std::size_t>(chains) *
                            static_cast<std::size_t>(collRingChainBlocks(bytes, chains, capped, largest));
  return std::min(collRingChunkBytes(bytes, std::max(1, capped / std::max(1, chains)), largest),
                  kCollRingStageBytes / slots / 128 * 128);  // whole lines, as ringChunk's
}

bool collRingReduceRoundsFit(std::size_t bytes, std::size_t chunkBytes) {
  return collRoundsFit(bytes + chunkBytes, 1, chunkBytes);  // every chunk and the end marker on one block
}

int collRingReduceBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk, int chainBlocks) {
  const int grid = std::min({maxBlocks, chainBlocks > 0 ? chainBlocks : kSingleChainBlocks, kRingReduceMaxBlocks});
  return collRingReduceChainBlocks(bytes, 1, grid, singleChainChunk(bytes, grid, maxChunk));
}

std::size_t collRingReduceChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk, int chainBlocks) {
  const int grid = std::min({maxBlocks, chainBlocks > 0 ? chainBlocks : kSingleChainBlocks, kRingReduceMaxBlocks});
  return collRingReduceChainChunkBytes(bytes, 1, grid, singleChainChunk(bytes, grid, maxChunk));
}

CollRingChainsShape collRingChainsShape(std::size_t longest, int chains, int maxBlocks, std::size_t maxChunk) {
  CollRingChainsShape shape;
  shape.reduceBlocks = chains * collRingReduceChainBlocks(longest, chains, maxBlocks, maxChunk);
  shape.reduceChunk = collRingReduceChainChunkBytes(longest, chains, maxBlocks, maxChunk);
  shape.gatherBlocks = chains * collRingChainBlocks(longest, chains, maxBlocks, maxChunk);
  shape.gatherChunk = collRingChunkBytes(longest, std::max(1, maxBlocks / std::max(1, chains)), maxChunk);
  return shape;
}

}  // namespace peerlink::kernels
