// The Hopper bulk-copy kernel (launchBulkCopy) on real GPUs: one GPU, peer write, peer read; every size class
// and offsets 0..17 on both sides (offsets that disagree modulo 16 take the SM-copy fallback); stage, chunk
// and grid variants. Destinations are poisoned, guards included. Skipped below compute capability 9.0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "copy_checker.hpp"
#include "core/cuda_check.hpp"
#include "gpu_test_buffers.hpp"
#include "kernels/bulk_copy.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

using namespace ::peerlink::testing;  // shared gpu test helpers

constexpr size_t kMaxOffset = kCopyMaxOffset;  // offsets 0..17 on both sides
constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// "" when GPUs 0..count-1 all do bulk copies, else why not.
std::string bulkUnavailable(int count) {
  for (int device = 0; device < count; ++device) {
    if (!bulkCopySupported(device)) {
      cudaDeviceProp properties{};
      PEERLINK_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
      return "bulk copies need compute capability 9.0; GPU " + std::to_string(device) + " is " +
             std::to_string(properties.major) + "." + std::to_string(properties.minor);
    }
  }
  return "";
}

#define PEERLINK_REQUIRE_BULK(n)                                         \
  do {                                                                   \
    PEERLINK_REQUIRE_GPUS(n);                                            \
    const std::string peerlink_bulk_why_ = bulkUnavailable(n);           \
    if (!peerlink_bulk_why_.empty()) GTEST_SKIP() << peerlink_bulk_why_; \
    if ((n) > 1) {                                                       \
      const std::string peerlink_why_ = peersUnavailable();              \
      if (!peerlink_why_.empty()) GTEST_SKIP() << peerlink_why_;         \
    }                                                                    \
  } while (0)

// One bulk-copy launch through the shared checker, described by its configuration.
std::string check(CopyChecker& checker, size_t bytes, size_t srcOffset, size_t dstOffset, const SmCopyConfig& config,
                  int smCount = 0) {
  const std::string variant = "chunk " + std::to_string(config.bulkChunkBytes) + " x" +
                              std::to_string(config.bulkStages) + " stages, " + std::to_string(config.blocksPerSm) +
                              " blk/SM, smCount " + std::to_string(smCount);
  return checker.check(bytes, srcOffset, dstOffset, variant,
                       [&](void* dst, const void* src, size_t n, cudaStream_t stream) {
                         launchBulkCopy(dst, src, n, smCount, stream, config);
                       });
}

// Every size with offsets 0..17 on both sides; 64 MiB + 5 with every equal pair (heads of 0..15 bytes on the
// bulk path) and a few unequal ones (the fallback), which keeps the host-side checks to about a second.
void checkAllSizesAndOffsets(const CopyPlacement& placement) {
  constexpr size_t kLarge = 64 * kMiB + 5;
  const std::vector<size_t> sizes = {1, 15, 16, 17, 4095, 64 * kKiB + 13, kMiB + 7};
  CopyChecker checker(placement, kLarge, 0x5eed0b01);
  const SmCopyConfig config;
  for (const size_t bytes : sizes) {
    for (size_t srcOffset = 0; srcOffset <= kMaxOffset; ++srcOffset) {
      for (size_t dstOffset = 0; dstOffset <= kMaxOffset; ++dstOffset) {
        const std::string failure = check(checker, bytes, srcOffset, dstOffset, config);
        ASSERT_TRUE(failure.empty()) << failure;
      }
    }
  }
  std::vector<std::pair<size_t, size_t>> pairs = {{16, 0}, {0, 16}, {17, 1}, {0, 8}, {4, 8}, {1, 0}};
  for (size_t offset = 0; offset <= kMaxOffset; ++offset) pairs.emplace_back(offset, offset);
  for (const auto& [srcOffset, dstOffset] : pairs) {
    const std::string failure = check(checker, kLarge, srcOffset, dstOffset, config);
    ASSERT_TRUE(failure.empty()) << failure;
  }
}

TEST(GpuBulkCopy, OnOneGpuAllSizesAndOffsets) {
  PEERLINK_REQUIRE_BULK(1);
  checkAllSizesAndOffsets(kLocalCopy);
}

TEST(GpuBulkCopy, WritesToPeerAllSizesAndOffsets) {
  PEERLINK_REQUIRE_BULK(2);
  checkAllSizesAndOffsets(kWriteCopy);
}

TEST(GpuBulkCopy, ReadsFromPeerAllSizesAndOffsets) {
  PEERLINK_REQUIRE_BULK(2);
  checkAllSizesAndOffsets(kReadCopy);
}

// Every chunk, stage count and blocks per SM of the tuning sweep, 1 KiB stages (many ring turns) and a
// one-SM grid, on sizes that leave a partial last chunk and a partial last block share.
TEST(GpuBulkCopy, ConfigVariantsAreCorrect) {
  PEERLINK_REQUIRE_BULK(1);
  std::vector<CopyPlacement> placements = {kLocalCopy};
  if (bulkUnavailable(2).empty() && peersUnavailable().empty())
    placements.insert(placements.end(), {kWriteCopy, kReadCopy});
  const std::vector<size_t> sizes = {4097, 200 * kKiB + 3, 8 * kMiB + 29};
  const std::vector<std::pair<size_t, size_t>> pairs = {{0, 0}, {3, 3}, {17, 1}};
  for (const CopyPlacement& placement : placements) {
    CopyChecker checker(placement, 8 * kMiB + 29, 0x5eed0b01);
    for (const int chunkKiB : {1, 16, 32, 64}) {
      for (const int stages : {2, 3, 4}) {
        for (const int perSm : {0, 1, 2}) {
          if (chunkKiB * stages > 192) continue;  // more than a block's shared memory
          SmCopyConfig config;
          config.bulkChunkBytes = chunkKiB * 1024;
          config.bulkStages = stages;
          config.blocksPerSm = perSm;
          for (const int smCount : {0, 1}) {
            for (const size_t bytes : sizes) {
              for (const auto& [srcOffset, dstOffset] : pairs) {
                const std::string failure = check(checker, bytes, srcOffset, dstOffset, config, smCount);
                ASSERT_TRUE(failure.empty()) << failure;
              }
            }
          }
        }
      }
    }
  }
}

// Each call throws before launching anything, so host pointers do.
TEST(GpuBulkCopy, RejectsBadArguments) {
  PEERLINK_REQUIRE_GPUS(1);
  uint64_t word = 0;
  EXPECT_NO_THROW(launchBulkCopy(nullptr, nullptr, 0, 0, nullptr));
  EXPECT_THROW(launchBulkCopy(nullptr, &word, 8, 0, nullptr), Error);
  if (!bulkUnavailable(1).empty()) {
    try {
      launchBulkCopy(&word, &word, 8, 0, nullptr);
      ADD_FAILURE() << "launchBulkCopy ran below compute capability 9.0";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Unsupported) << error.what();
    }
    return;
  }
  SmCopyConfig badChunk, badStages, tooBig;
  badChunk.bulkChunkBytes = 1000;
  badStages.bulkStages = 5;
  tooBig.bulkChunkBytes = 128 << 10;
  tooBig.bulkStages = 4;  // 512 KiB of shared memory
  for (const SmCopyConfig& config : {badChunk, badStages, tooBig}) {
    try {
      launchBulkCopy(&word, &word, 8, 0, nullptr, config);
      ADD_FAILURE() << "accepted chunk " << config.bulkChunkBytes << " x" << config.bulkStages;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage) << error.what();
    }
  }
  EXPECT_GE(bulkCopyBlocksPerSm(SmCopyConfig()), 1);
}

}  // namespace
}  // namespace peerlink::kernels
