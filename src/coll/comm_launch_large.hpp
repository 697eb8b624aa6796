// Launchers of the large-message kernels (comm_launch_large.cc): the all-reduce split into a reduce-scatter
// and an all-gather kernel, and the rings (broadcast, reduce, all-reduce, reduce-scatter). comm_launch.cc
// dispatches to them.
#pragma once

#include <vector>

#include "coll/comm_launch.hpp"
#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// Two-shot all-reduce as two kernels per rank (Kernel::SplitTwoShot).
void launchSplitTwoShotSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                           bool capturing);

/// The ring broadcast (Kernel::RingBroadcast) and the ring reduce (Kernel::RingReduce). The rings move 16-byte
/// units and number each block's rounds in their flags: the kernel choice runs them only where the buffers are
/// aligned and the rounds fit (kernel_registry.cc).
void launchRingBroadcastSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                            bool capturing);
void launchRingReduceSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                         bool capturing);
/// The ring all-reduce (Kernel::RingAllReduce): the two above with one chain per segment, as two kernels.
void launchRingAllReduceSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                            bool capturing);
/// The first kernel of each all-reduce above on its own: once it has ended on rank j, rank j's shard
/// (segment) of the result is complete in its output and no rank reads that shard of any input any more.
/// The copy-engine all-reduces (comm_launch_copy_engine.cc) gather the shards after them.
void launchShardReduceScatter(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                              bool capturing);
void launchRingSegmentReduces(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                              bool capturing);
/// The ring reduce-scatter (Kernel::RingReduceScatter): the ring reduce with one chain per block.
void launchRingReduceScatterSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                                bool capturing);

}  // namespace peerlink::coll
