#include "net/replayed_steps.hpp"

namespace peerlink::net {

std::vector<ReplayedStep> replayedSteps(std::size_t pieces, std::size_t sets) {
  std::vector<ReplayedStep> steps;
  if (pieces <= 1 || sets <= 1) {
    for (std::size_t piece = 0; piece < pieces; ++piece) steps.push_back({piece, ReplayedPart::Whole});
    return steps;
  }
  const std::size_t ahead = sets - 1;  // copies in that lead the copies out
  for (std::size_t piece = 0; piece < pieces; ++piece) {
    steps.push_back({piece, ReplayedPart::CopyIn});
    if (piece >= ahead) steps.push_back({piece - ahead, ReplayedPart::CopyOut});
  }
  for (std::size_t piece = pieces > ahead ? pieces - ahead : 0; piece < pieces; ++piece) {
    steps.push_back({piece, ReplayedPart::CopyOut});
  }
  return steps;
}

}  // namespace peerlink::net
