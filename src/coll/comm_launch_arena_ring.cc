// The arena ring's launches (comm_launch_arena_ring.hpp).
#include "coll/comm_launch_arena_ring.hpp"

#include "coll/comm_launch_support.hpp"

namespace peerlink::coll {

bool runsAsArenaRing(const CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& shape = set[static_cast<std::size_t>(state.localRanks().front())];
  return state.layout.hasRingArea &&
         runsAsArenaRing(shape.collective, shape.count, shape.type, state.nranks, state.arenaRing);
}

void launchArenaRingSet(const CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const RankResources& rank = state.ranks[static_cast<std::size_t>(r)];
    const HostRingShape shape = arenaRingShape(hostRingCallBytes(call.collective, call.count, call.type, state.nranks),
                                               state.arenaRingShape, state.maxBlocks);
    kernels::HostRingArgs args = arenaRingCallArgs(call.collective, call.count, call.type, state.nranks, r, call.root,
                                                   shape, state.tableOf(r).ringArea);
    args.state = static_cast<kernels::HostRingBlockState*>(rank.ringState.data());
    args.failure = state.failure(r);
    args.abort = state.abortWord;
    args.timeoutNs = state.timeoutNs;
    // The own block on the rank's copy stream.
    launchRingCall(args, call, r, rank.copyStream.get(), rank.forkEvent.get(), rank.joinEvent.get(),
                   launchOf(state, r, capturing));
  });
}

}  // namespace peerlink::coll
