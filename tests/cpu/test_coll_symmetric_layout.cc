// The arena's regions (src/coll/symmetric_layout.hpp): aligned, large enough, never overlapping.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "coll/symmetric_layout.hpp"
#include "kernels/coll_kernels.cuh"
#include "kernels/host_ring.cuh"

namespace peerlink::coll {
namespace {

struct Region {
  std::size_t offset;
  std::size_t bytes;
};

std::vector<Region> regionsOf(const SymmetricLayout& layout, int nranks) {
  const auto n = static_cast<std::size_t>(nranks);
  std::vector<Region> regions = {{layout.flags, kernels::kCollFlagBytes},
                                 {layout.scratch, 2 * n * kernels::kCollLlSlotBytes},
                                 {layout.ll128Scratch, 2 * n * kernels::kCollLl128SlotBytes},
                                 {layout.p2pScratch, 2 * n * kernels::kCollP2pLlSlotBytes}};
  if (layout.hasRingStage) regions.push_back({layout.ringStage, kernels::kCollRingStageBytes});
  if (layout.hasStage) regions.push_back({layout.stage, n * kernels::kCollPushSlotBytes});
  if (layout.windowBytes > 0) regions.push_back({layout.window, layout.windowBytes});
  if (layout.hasRingArea) regions.push_back({layout.ringArea, kernels::kArenaRingAreaBytes});
  return regions;
}

TEST(SymmetricLayout, RegionsAreAlignedDisjointAndInside) {
  for (int n = 1; n <= kernels::kCollMaxRanks; ++n) {
    for (const bool push : {false, true}) {
      for (const std::size_t window : {std::size_t{0}, std::size_t{1}, std::size_t{64} << 20}) {
        for (const bool ringArea : {false, true}) {
          const SymmetricLayout layout = symmetricLayout(n, push, window, ringArea);
          std::vector<Region> regions = regionsOf(layout, n);
          std::sort(regions.begin(), regions.end(),
                    [](const Region& a, const Region& b) { return a.offset < b.offset; });
          for (std::size_t i = 0; i < regions.size(); ++i) {
            EXPECT_EQ(regions[i].offset % kSymmetricAlignment, 0u) << "n=" << n;
            EXPECT_LE(regions[i].offset + regions[i].bytes, layout.bytes) << "n=" << n;
            if (i > 0) {
              EXPECT_GE(regions[i].offset, regions[i - 1].offset + regions[i - 1].bytes) << "n=" << n;
            }
          }
          EXPECT_EQ(layout.hasRingStage, n > 1);
          EXPECT_EQ(layout.hasStage, push);
          EXPECT_GE(layout.windowBytes, window);
          EXPECT_EQ(layout.hasRingArea, ringArea && window > 0);
        }
      }
    }
  }
}

TEST(SymmetricLayout, WhatMustBeZeroComesFirstInOneRange) {
  const SymmetricLayout layout = symmetricLayout(4, true, std::size_t{64} << 20);
  EXPECT_EQ(layout.flags, 0u);
  EXPECT_GE(layout.zeroedBytes, layout.p2pScratch + 2 * 4 * kernels::kCollP2pLlSlotBytes);
  EXPECT_LE(layout.zeroedBytes, layout.ringStage);
  EXPECT_LE(layout.zeroedBytes, layout.stage);
  EXPECT_LE(layout.zeroedBytes, layout.window);
}

}  // namespace
}  // namespace peerlink::coll
