// What the launchers of every kernel family share (comm_launch.cc, comm_launch_large.cc): the synchronization
// part of the kernels' arguments, shards cut as the plans cut them, and launching on a rank's GPU. Internal
// to src/coll/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/kernel_args.hpp"
#include "coll/partition.hpp"
#include "core/cuda_check.hpp"
#include "kernels/coll_kernels.cuh"
#include "kernels/host_ring.cuh"
#include "kernels/kernel_launch.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::coll {

// The send/recv copy kernel's grid: rank-independent, as every rank of a pair must launch the same grid (the
// flags are per block).
constexpr int kP2pBlocksCap = 64;
inline int p2pCopyBlocks(const CommState& state) {
  return std::max(1, std::min(state.maxBlocks, kP2pBlocksCap));
}

inline const void* offsetBy(const void* pointer, std::size_t bytes) {
  return static_cast<const unsigned char*>(pointer) + bytes;
}
inline void* offsetBy(void* pointer, std::size_t bytes) {
  return static_cast<unsigned char*>(pointer) + bytes;
}

// Block `index` of a buffer cut in blocks of `bytes` (all-gather's output, all-to-all's and reduce-scatter's
// per-rank blocks).
template <typename Pointer>
Pointer blockOf(Pointer base, std::size_t bytes, int index) {
  return offsetBy(base, bytes * static_cast<std::size_t>(index));
}

// Rank `rank`'s view of the communicator for its kernels' arguments (kernel_args.hpp).
inline RankView rankView(const CommState& state, int rank) {
  RankView view;
  view.rank = rank;
  view.nranks = state.nranks;
  view.maxBlocks = state.maxBlocks;
  view.table = &state.tableOf(rank);
  view.sync = static_cast<kernels::CollRankSync*>(state.ranks[static_cast<std::size_t>(rank)].sync.data());
  view.failure = state.failure(rank);
  view.abort = state.abortWord;
  view.timeoutNs = state.timeoutNs;
  return view;
}

inline kernels::CollSyncArgs syncArgs(const CommState& state, int rank, Collective collective, bool p2p,
                                      unsigned int peerMask) {
  return syncArgs(rankView(state, rank), collective, p2p, peerMask);
}

// Part `part` of `parts` of a call's count, cut as the plans cut it (16-byte boundaries: partition.hpp).
inline ElementRange shardOf(const CallArgs& call, int parts, int part) {
  return partitionRange(call.count, parts, part, std::max<std::size_t>(1, 16 / dataTypeSize(call.type)));
}

// A non-root rank's part of a rooted two-shot (broadcast, reduce): the count cut among the n-1 ranks other
// than the root, part (rank - root - 1) mod n, as the plans cut it (plan_builders.cc).
inline ElementRange nonRootShardOf(const CallArgs& call, int n) {
  return shardOf(call, n - 1, (call.rank - call.root - 1 + n) % n);
}

inline unsigned int allRanks(const CommState& state) {
  return everyRank(state.nranks);
}

inline kernels::CollType collType(DataType type) {
  return static_cast<kernels::CollType>(static_cast<int>(type));
}
inline kernels::CollOp collOp(ReduceOp op) {
  return static_cast<kernels::CollOp>(static_cast<int>(op));
}

// Runs launchRank(r) for every rank r this process drives, with r's GPU current: eager sets on the
// communicator's launch threads side by side where it has them (launch_threads.hpp), captured ones one rank
// after another on this thread. launchRank must touch only rank r's resources (its stream, eager graph,
// events) and read the rest.
template <typename Fn>
void forEachRank(const CommState& state, bool capturing, Fn&& launchRank) {
  const std::vector<int>& local = state.localRanks();
  if (state.launchThreads != nullptr && !capturing && !state.launchOnCaller) {
    state.launchThreads->run([&](int index, bool here) {
      const int rank = local[static_cast<std::size_t>(index)];
      if (!here) {
        launchRank(rank);  // the rank's thread has its GPU current
        return;
      }
      DeviceGuard guard(state.devices[static_cast<std::size_t>(rank)]);
      launchRank(rank);
    });
    return;
  }
  for (const int rank : local) {
    DeviceGuard guard(state.devices[static_cast<std::size_t>(rank)]);
    launchRank(rank);
  }
}

// How rank r's kernel goes on its stream: eager calls through its KernelGraph, captured ones directly into
// the capture; direct launches overlap the previous kernel where the communicator allows it.
inline kernels::KernelLaunch launchOf(const CommState& state, int rank, bool capturing) {
  kernels::KernelLaunch launch;
  launch.graph = capturing ? nullptr : state.ranks[static_cast<std::size_t>(rank)].eagerGraph.get();
  launch.overlapPrevious = state.overlapLaunches;
  return launch;
}

// Launches the host ring's kernel (the host ring, or the arena ring) for rank `rank`'s `call` with `args` (its areas,
// state and deadline set; the call's buffers set here), and beside it the all-to-all's own block, which the ring's
// exchange does not carry (hostRingOwnCopy): on `lane`, forked from the caller's stream at `fork` and joined back after
// the kernel at `join`.
inline void launchRingCall(kernels::HostRingArgs args, const CallArgs& call, int rank, cudaStream_t lane,
                           cudaEvent_t fork, cudaEvent_t join, const kernels::KernelLaunch& launch) {
  args.input = call.send;
  args.output = call.recv;
  const HostRingOwnCopy own = hostRingOwnCopy(call.collective, call.count, rank);
  const std::size_t size = dataTypeSize(call.type);
  const auto* from = static_cast<const unsigned char*>(call.send) + own.inBegin * size;
  auto* to = static_cast<unsigned char*>(call.recv) + own.outBegin * size;
  const bool ownCopy = own.count > 0 && from != to;
  if (ownCopy) {
    PEERLINK_CUDA_CHECK(cudaEventRecord(fork, call.stream));
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(lane, fork, 0));
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(to, from, own.count * size, cudaMemcpyDeviceToDevice, lane));
    PEERLINK_CUDA_CHECK(cudaEventRecord(join, lane));
  }
  kernels::launchHostRing(args, collType(call.type), collOp(call.op), call.stream, launch);
  if (ownCopy) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(call.stream, join, 0));
}

// Whether a communicator's direct launches may overlap the previous kernel in their stream (programmatic
// dependent launch, KernelLaunch::overlapPrevious): when `requested` (PEERLINK_COLL_PDL), every GPU is of
// compute capability 9.0 or later (older ones have no griddepcontrol: the kernels built for them would not
// wait), and no GPU drives two ranks (a kernel there waits for its peers' kernels on the same GPU, so all of
// them must be resident at once; one rank's early next kernel could hold the SMs another rank's needs).
inline bool launchesMayOverlap(bool requested, const std::vector<int>& computeMajors, bool gpusShared) {
  if (!requested || gpusShared || computeMajors.empty()) return false;
  return std::all_of(computeMajors.begin(), computeMajors.end(), [](int major) { return major >= 9; });
}

}  // namespace peerlink::coll
