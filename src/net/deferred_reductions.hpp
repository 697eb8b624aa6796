// A piece's reductions left to whoever copies its results out: the plan's messages then only move data, and the
// reductions run where the data ends up (a CUDA graph's kernel that copies a captured call's piece out reduces it on
// the GPU, coll/captured_calls.hpp) instead of on the transport's thread between messages.
//
// Only reductions that end a plan qualify: into the executor's Output, reading only Inputs, finishing, nothing later
// touching their result. Each source on another rank becomes a copy into the executor's Scratch (the message the plan
// already sent: the same bytes), and the reduction, in the plan's source order, is the copier's. Every process
// transforms the whole plan alike, so the messages still match.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/plan.hpp"

namespace peerlink::net {

/// One reduction of rank `rank`'s Output elements [output, output + count), finishing (Avg divides there), from
/// `sources` in order: the rank's own Input, or Scratch where a peer's Input landed.
struct DeferredReduction {
  std::size_t output = 0;
  std::size_t count = 0;
  std::vector<coll::BufferRef> sources;
};

/// Pure. Takes the plan's reductions that end it out of `plan`, for every rank, each source of another rank replaced
/// by a copy into the executor's Scratch (appended to its layout, each at a 16-byte boundary), and returns rank
/// `rank`'s, in order of output. A plan whose reductions do not all qualify is left as it is, and nothing returned:
/// its messages would still wait for a reduction.
std::vector<DeferredReduction> deferReductions(coll::Plan& plan, int rank);

}  // namespace peerlink::net
