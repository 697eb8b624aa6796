// Scratch and host stages reused over a plan's steps. The staged plans (plan_staged.hpp) give every chunk its own
// offsets in each rank's scratch and host stage, so those buffers hold a call's whole data; yet a chunk's staged copy
// lives only from the step that writes it to the last step that reads it. Remapping each such range onto a slot that
// is free again once that last read's step has ended lets one plan pipeline a whole large call through buffers a
// few chunks deep, instead of cutting the call into segments that each fill and drain the pipeline again.
//
// Safe under plan.hpp's step model: a slot is taken by a write at step s only when every read of its previous
// contents happened at a step before s, and every step ends on every rank before the next begins. The host
// executor (host_executor.hpp) checks the result like any plan.
#pragma once

#include "coll/plan.hpp"

namespace peerlink::coll {

/// Remaps every Scratch and HostStage range of `plan` onto slots of its largest such range (rounded up to
/// plan.alignElements), one pool per rank and buffer, and sets each rank's scratchElements and hostStageElements
/// to the slots it uses. Returns false and leaves the plan unchanged where its staging does not follow the pattern
/// the remapping needs: every read of scratch or host stage is exactly a range written at an earlier step (or the
/// range the same transfer writes, a reduction in place), and no write overlaps a range still to be read.
bool reuseStagingSlots(Plan& plan);

}  // namespace peerlink::coll
