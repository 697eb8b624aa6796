// The chains a large broadcast runs along (the ring broadcast kernel: launchRingBroadcastSet; its plan:
// buildBroadcastRing). Every chain starts at the root and passes its segment of the message through every
// other rank once, each rank storing it into the next one's output. One chain (round 28) loads every rank
// but the last both ways with the whole message; n - 1 chains, each starting at a different non-root rank
// after the root, have the root send the message once (a third of it to each non-root rank on 4 GPUs) and
// each non-root rank receive all of it but pass on only (n - 2) / (n - 1) of it, so no rank's links carry
// the whole message both ways.
#pragma once

#include <vector>

namespace peerlink::coll {

/// The chains of a broadcast over `nranks` ranks: `requested` (PEERLINK_COLL_BROADCAST_CHAINS) within
/// [1, nranks - 1], or with 0 nranks - 1 (at least 1).
int broadcastChainCount(int nranks, int requested);

/// Chain j (0 <= j < chains) of a broadcast from `root` over `nranks` ranks, in order: the root, then the
/// other ranks in ring order after the root, rotated to begin at the j-th of them. Distinct chains begin at
/// distinct ranks after the root.
std::vector<int> broadcastChainOrder(int nranks, int root, int j);

}  // namespace peerlink::coll
