// The order in which a graph runs one phase's captured pieces (coll/captured_calls.hpp): a stream runs its kernels
// one at a time, so a piece's kernel that copies in and then waits for its messages would leave the transport idle
// while the piece copies out, and the next piece not copied in yet. Split into a kernel that copies in and one that
// copies out, the copies in run ahead of the copies out by as many pieces as the slot sets allow.
#pragma once

#include <cstddef>
#include <vector>

namespace peerlink::net {

enum class ReplayedPart {
  Whole,    ///< the piece's kernel copies in, waits for the piece's messages, copies out
  CopyIn,   ///< copies in and hands the ticket on to the piece's CopyOut
  CopyOut,  ///< waits for the piece's messages, copies out
};

struct ReplayedStep {
  std::size_t piece = 0;
  ReplayedPart part = ReplayedPart::Whole;
  bool operator==(const ReplayedStep& other) const { return piece == other.piece && part == other.part; }
};

/// The steps, in stream order, of a call of `pieces` pieces whose tickets follow each other, over `sets` slot sets
/// (ticket % sets). One piece, or one set, runs as whole kernels. Otherwise the copies in lead the copies out by
/// sets - 1 pieces: piece k's copies in come right after piece k - sets's copies out, since a copy in first waits for
/// its set's previous piece (sets tickets before) to have copied out, which must come earlier on the stream, or the
/// stream waits forever.
std::vector<ReplayedStep> replayedSteps(std::size_t pieces, std::size_t sets);

}  // namespace peerlink::net
