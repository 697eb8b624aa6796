// Launchers of the large-message kernels (comm_launch_large.cc): the all-reduce split into a reduce-scatter
// and an all-gather kernel, and the rings (broadcast, reduce, all-reduce, reduce-scatter). comm_launch.cc
// dispatches to them.
#pragma once

#include <string>
#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// Two-shot all-reduce as two kernels per rank (Kernel::SplitTwoShot).
void launchSplitTwoShotSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

/// Why the rings cannot run this set (pipelinedBlocker), empty when they can: they move 16-byte units, so
/// the buffers they touch must be 16-byte aligned (the broadcast: the root's input and every output; the
/// reduce: every input and the root's output; the reduce-scatter: every block's start too), and their flags
/// must number every round of a block (kernels::collRoundsFit).
std::string ringBroadcastBlocker(const CommState& state, const std::vector<CallArgs>& set);
std::string ringReduceBlocker(const CommState& state, const std::vector<CallArgs>& set);
std::string ringAllReduceBlocker(const CommState& state, const std::vector<CallArgs>& set);
std::string ringReduceScatterBlocker(const CommState& state, const std::vector<CallArgs>& set);

/// The ring broadcast (Kernel::RingBroadcast) and the ring reduce (Kernel::RingReduce).
void launchRingBroadcastSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);
void launchRingReduceSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);
/// The ring all-reduce (Kernel::RingAllReduce): the two above with one chain per segment, as two kernels.
void launchRingAllReduceSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);
/// The first kernel of each all-reduce above on its own: once it has ended on rank j, rank j's shard
/// (segment) of the result is complete in its output and no rank reads that shard of any input any more.
/// The copy-engine all-reduces (comm_launch_copy_engine.cc) gather the shards after them.
void launchShardReduceScatter(CommState& state, const std::vector<CallArgs>& set, bool capturing);
void launchRingSegmentReduces(CommState& state, const std::vector<CallArgs>& set, bool capturing);
/// The ring reduce-scatter (Kernel::RingReduceScatter): the ring reduce with one chain per block.
void launchRingReduceScatterSet(CommState& state, const std::vector<CallArgs>& set, bool capturing);

}  // namespace peerlink::coll
