// The direct collective kernels' arguments for one rank's part of a matched call: pure functions of the rank's
// view of the communicator (RankView, plain data), the call and every rank's buffers (PeerPointerTable), so
// tests/cpu/test_coll_kernel_args.cc checks them without a GPU by running a host model of each kernel over
// host buffers against the closed forms. comm_launch.cc launches what they return. Internal to src/coll/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/comm_state.hpp"
#include "kernels/coll_kernels.cuh"
#include "peerlink/collective_choice.hpp"

namespace peerlink::coll {

/// What one rank's kernels take from the communicator besides the call: its symmetric buffers as its GPU
/// addresses them, its own counters and failure record, the abort word and the deadline. Whether the peers
/// are in this process or others changes only the table's pointers (comm_state.hpp, SymmetricTable).
struct RankView {
  int rank = 0;
  int nranks = 0;
  int maxBlocks = 1;  ///< the communicator's grid cap
  const SymmetricTable* table = nullptr;
  kernels::CollRankSync* sync = nullptr;
  kernels::CollFailure* failure = nullptr;
  const unsigned int* abort = nullptr;
  std::uint64_t timeoutNs = 0;
};

/// Every rank of the world, as a peer mask.
inline unsigned int everyRank(int nranks) {
  return nranks >= 32 ? ~0u : (1u << nranks) - 1u;
}

/// The synchronization part of every kernel's arguments.
kernels::CollSyncArgs syncArgs(const RankView& view, Collective collective, bool p2p, unsigned int peerMask);

/// A copy job of `bytes` from src to dst; nothing when empty or src is dst.
void addCopyJob(kernels::CollCopyArgs& args, const void* src, void* dst, std::size_t bytes);

/// LL one-shot (ll128: in LL128 lines): what this rank sends each rank (null: a token), where what it hears goes.
/// `bytes`: every message's size (the per-rank block for reduce-scatter, all-gather and all-to-all).
kernels::CollLlArgs llArgs(const RankView& view, const CallArgs& call, std::size_t bytes, bool ll128);

/// A direct-read reduction's arguments and grid.
struct ReductionLaunch {
  kernels::CollReduceArgs args;
  int blocks = 1;
};
/// The direct-read reduction kernels (one-shot, two-shot, reduce-scatter's shard reduction) for this rank.
/// `bytes`: the call's count in bytes (per rank for reduce-scatter).
ReductionLaunch reductionArgs(const RankView& view, const PeerPointerTable& table, const CallArgs& call,
                              const CollectiveChoice& choice, std::size_t bytes);

/// The push reduction's part `part` for this rank: every shard cut in parts of one stage slot (`slotCount`
/// elements).
kernels::CollPushReduceArgs pushReduceArgs(const RankView& view, const PeerPointerTable& table, const CallArgs& call,
                                           std::size_t slotCount, std::size_t part);
/// The longest shard of a push reduction, in elements (reduce-scatter: every shard is count elements).
std::size_t longestPushShard(const CallArgs& call, int nranks);

/// Broadcast, all-gather and all-to-all by the copy kernel for this rank: the jobs, the synchronization and the
/// chunk size. `bytes`: the call's count in bytes (per rank for all-gather and all-to-all).
kernels::CollCopyArgs copyArgs(const RankView& view, const PeerPointerTable& table, const CallArgs& call,
                               const CollectiveChoice& choice, std::size_t bytes);
/// The copy kernel's grid for a call of `bytes` (every rank the same).
int copyBlocks(const RankView& view, const CallArgs& call, const CollectiveChoice& choice, std::size_t bytes);

}  // namespace peerlink::coll
