// The arena ring's launches (comm_launch_arena_ring.hpp).
#include "coll/comm_launch_arena_ring.hpp"

#include "coll/comm_launch_support.hpp"
#include "core/cuda_check.hpp"

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
    const HostRingShape shape =
        arenaRingShape(hostRingCallBytes(call.collective, call.count, call.type, state.nranks), state.arenaRingShape);
    kernels::HostRingArgs args = arenaRingCallArgs(call.collective, call.count, call.type, state.nranks, r, call.root,
                                                   shape, state.tableOf(r).ringArea);
    args.input = call.send;
    args.output = call.recv;
    args.state = static_cast<kernels::HostRingBlockState*>(rank.ringState.data());
    args.failure = state.failure(r);
    args.abort = state.abortWord;
    args.timeoutNs = state.timeoutNs;
    // The all-to-all's own block, which the exchange does not carry: beside the kernel on the rank's copy stream,
    // forked from the caller's and joined after the kernel.
    const HostRingOwnCopy own = hostRingOwnCopy(call.collective, call.count, r);
    const std::size_t size = dataTypeSize(call.type);
    const auto* from = static_cast<const unsigned char*>(call.send) + own.inBegin * size;
    auto* to = static_cast<unsigned char*>(call.recv) + own.outBegin * size;
    const bool ownCopy = own.count > 0 && from != to;
    if (ownCopy) {
      PEERLINK_CUDA_CHECK(cudaEventRecord(rank.forkEvent.get(), call.stream));
      PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(rank.copyStream.get(), rank.forkEvent.get(), 0));
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(to, from, own.count * size, cudaMemcpyDeviceToDevice, rank.copyStream.get()));
      PEERLINK_CUDA_CHECK(cudaEventRecord(rank.joinEvent.get(), rank.copyStream.get()));
    }
    kernels::launchHostRing(args, collType(call.type), collOp(call.op), call.stream, launchOf(state, r, capturing));
    if (ownCopy) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(call.stream, rank.joinEvent.get(), 0));
  });
}

}  // namespace peerlink::coll
