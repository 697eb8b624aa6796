// replayedSteps (net/replayed_steps.hpp): the stream order of a captured call's pieces' kernels, the copies in ahead
// of the copies out by the slot sets less one, and never a copy in waiting for a copy out later on the stream. Pure.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "net/replayed_steps.hpp"

namespace peerlink::net {
namespace {

// One piece, or one slot set, runs as whole kernels; 5 pieces over 4 sets copy in 3 ahead of the copies out.
TEST(NetReplayedSteps, CopiesInRunAheadOfCopiesOutByTheSetsLessOne) {
  using P = ReplayedPart;
  EXPECT_EQ(replayedSteps(1, 4), (std::vector<ReplayedStep>{{0, P::Whole}}));
  EXPECT_EQ(replayedSteps(3, 1), (std::vector<ReplayedStep>{{0, P::Whole}, {1, P::Whole}, {2, P::Whole}}));
  EXPECT_TRUE(replayedSteps(0, 4).empty());
  EXPECT_EQ(replayedSteps(5, 4), (std::vector<ReplayedStep>{{0, P::CopyIn},
                                                            {1, P::CopyIn},
                                                            {2, P::CopyIn},
                                                            {3, P::CopyIn},
                                                            {0, P::CopyOut},
                                                            {4, P::CopyIn},
                                                            {1, P::CopyOut},
                                                            {2, P::CopyOut},
                                                            {3, P::CopyOut},
                                                            {4, P::CopyOut}}));
}

// For every count of pieces and sets: each piece copies in once, then out once, both in piece order; a piece's
// copies in never wait for a copy out later on the stream (its set's previous piece, `sets` before, copied out
// earlier), and they run as far ahead as that allows (piece k + sets - 1 copied in before piece k copies out).
TEST(NetReplayedSteps, NoCopyInWaitsForACopyOutLaterOnTheStream) {
  for (std::size_t sets = 2; sets <= 6; ++sets) {
    for (std::size_t pieces = 2; pieces <= 13; ++pieces) {
      const std::vector<ReplayedStep> steps = replayedSteps(pieces, sets);
      std::vector<std::size_t> in(pieces, steps.size()), out(pieces, steps.size());
      for (std::size_t i = 0; i < steps.size(); ++i) {
        ASSERT_LT(steps[i].piece, pieces);
        ASSERT_NE(steps[i].part, ReplayedPart::Whole);
        std::size_t& at = steps[i].part == ReplayedPart::CopyIn ? in[steps[i].piece] : out[steps[i].piece];
        EXPECT_EQ(at, steps.size()) << "a piece's part twice";
        at = i;
      }
      ASSERT_EQ(steps.size(), 2 * pieces);
      for (std::size_t k = 0; k < pieces; ++k) {
        const std::string where =
            std::to_string(pieces) + " pieces, " + std::to_string(sets) + " sets, piece " + std::to_string(k);
        EXPECT_LT(in[k], out[k]) << where;
        if (k > 0) {
          EXPECT_LT(in[k - 1], in[k]) << where;
          EXPECT_LT(out[k - 1], out[k]) << where;
        }
        if (k >= sets) {
          EXPECT_LT(out[k - sets], in[k]) << where;
        }
        EXPECT_LT(in[std::min(k + sets - 1, pieces - 1)], out[k]) << where;
      }
    }
  }
}

}  // namespace
}  // namespace peerlink::net
