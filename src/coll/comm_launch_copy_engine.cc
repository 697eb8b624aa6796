// Collectives whose data the copy engines move (comm_launch_copy_engine.hpp). On NVLink the copy engines
// carry more than SM stores, most of all when every link carries traffic both ways at once, as in these
// collectives: on 4x H200 nvbandwidth measured copy-engine copies at 396 GB/s one way (writes) and 389 each
// way with both directions loaded, SM copies at 370 and 338 (../shared/reference/nvbandwidth-4xH200.txt).
//
// Each rank pushes with cudaMemcpyAsync on its own GPU, so its copy engine writes into the peers (the faster
// direction), one peer after another, the next rank first: at any moment the ranks' copies form a
// permutation and no GPU receives from two at once. Side by side on streams of their own the pushes took
// 1.6x as long at 512 MiB (4x H100: a GPU's flows to several peers at once share its copy
// engines badly, as the all-pairs benchmark saw); one after another each costs ~8 us more than its bytes
// (../shared/DEVICE.md), which is why AUTO keeps the SM kernels below some hundred MiB. The local copy (out
// of place) is an SM kernel on the caller's stream meanwhile (on a copy engine it added ~40 us at 512 MiB,
// call A). A copy engine cannot wait on a flag with a deadline, so the waits stay in kernels: a one-block
// kernel meets every rank before the copies (their destinations are free, their sources ready) and after
// them (every copy into this rank has landed: each rank's kernel starts only once its copies have
// completed, and its barrier releases that to the peers).
#include "coll/comm_launch_copy_engine.hpp"

#include <algorithm>

#include "coll/comm_launch.hpp"
#include "coll/comm_launch_large.hpp"
#include "coll/comm_launch_support.hpp"
#include "core/cuda_check.hpp"
#include "kernels/copy_kernels.cuh"

namespace peerlink::coll {
namespace {

struct EngineCopy {
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t bytes = 0;
};

// Every rank meets every other: a one-block copy kernel without jobs (its start and end barriers, each with
// a deadline).
void launchBarriers(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  forEachRank(state, capturing, [&](int r) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    kernels::CollCopyArgs args;
    args.sync = syncArgs(state, r, call.collective, false, allRanks(state));
    kernels::launchCollCopy(args, 1, call.stream, launchOf(state, r, capturing));
  });
}

// Rank r's copies, with its GPU current: `pushes` (to its peers) one after another on its copy stream, forked
// from and joined back into the caller's stream (in a capture the events become the graph's edges); the
// `local` copy meanwhile on the caller's stream, by a few SMs, as it only has to keep up with the pushes.
void enqueueCopies(const CommState& state, int r, cudaStream_t stream, const std::vector<EngineCopy>& pushes,
                   const EngineCopy& local) {
  constexpr int kLocalCopySms = 16;
  const RankResources& rank = state.ranks[static_cast<std::size_t>(r)];
  const cudaStream_t side = rank.copyStream.get();
  PEERLINK_CUDA_CHECK(cudaEventRecord(rank.forkEvent.get(), stream));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(side, rank.forkEvent.get(), 0));
  for (const EngineCopy& push : pushes) {
    if (push.bytes > 0 && push.src != push.dst) {  // a send/recv to itself may name one buffer twice
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(push.dst, push.src, push.bytes, cudaMemcpyDefault, side));
    }
  }
  PEERLINK_CUDA_CHECK(cudaEventRecord(rank.joinEvent.get(), side));
  if (local.bytes > 0 && local.src != local.dst) {
    kernels::launchSmCopy(local.dst, local.src, local.bytes, kLocalCopySms, stream);
  }
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, rank.joinEvent.get(), 0));
}

// Each rank's shard of an all-reduce, complete in its output, copied into every peer's output at the same
// place, then the closing barrier. No barrier before: the reduce kernel before has ended on the rank that
// copies, so its shard is final, every peer has joined the call (its output is free: the ring reduce's chain
// that ends at this rank passed through every peer's kernel, the reduce-scatter kernel began with a barrier
// of every rank) and no rank reads that shard of any input any more (in place, the copies overwrite only it).
void gatherShards(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers, bool capturing) {
  const int n = state.nranks;
  const std::size_t size = dataTypeSize(set.front().type);
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const ElementRange shard = shardOf(call, n, r);
    std::vector<EngineCopy> pushes;
    for (int p = 1; p < n; ++p) {
      pushes.push_back({offsetBy(table.recv[r], shard.begin * size),
                        offsetBy(table.recv[(r + p) % n], shard.begin * size), shard.count * size});
    }
    enqueueCopies(state, r, call.stream, pushes, EngineCopy{});
  });
  launchBarriers(state, set, capturing);
}

}  // namespace

// All-gather: rank r's input into block r of every output; all-to-all: block p of rank r's input into block
// r of rank p's output (all-to-all is never in place: comm_validation.cc).
void launchCeCopySet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers, bool capturing) {
  const int n = state.nranks;
  const CallArgs& first = set.front();
  const std::size_t bytes = first.count * dataTypeSize(first.type);
  const bool allGather = first.collective == Collective::AllGather;
  launchBarriers(state, set, capturing);
  forEachRank(state, capturing, [&](int r) {
    const PeerPointerTable& table = pointers.of(r);
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    const auto sourceFor = [&](int to) { return allGather ? table.send[r] : blockOf(table.send[r], bytes, to); };
    std::vector<EngineCopy> pushes;
    for (int p = 1; p < n; ++p) {
      const int to = (r + p) % n;
      pushes.push_back({sourceFor(to), blockOf(table.recv[to], bytes, r), bytes});
    }
    enqueueCopies(state, r, call.stream, pushes, EngineCopy{sourceFor(r), blockOf(table.recv[r], bytes, r), bytes});
  });
  launchBarriers(state, set, capturing);
}

void launchCeTwoShotSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                        bool capturing) {
  launchShardReduceScatter(state, set, pointers, capturing);
  gatherShards(state, set, pointers, capturing);
}

void launchCeRingAllReduceSet(CommState& state, const std::vector<CallArgs>& set, const SetPointers& pointers,
                              bool capturing) {
  launchRingSegmentReduces(state, set, pointers, capturing);
  gatherShards(state, set, pointers, capturing);
}

// The first barrier tells a sender that its receivers have reached the call (their buffers are free) and a
// receiver that its senders have (their data is ready); the second, that the copies into a receiver have
// landed: a sender's second kernel starts only once its copies have completed, and it releases that to the
// receivers. A rank sending to itself copies on its copy engine too, after its pushes to the peers.
void launchCeSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs,
                           const std::vector<cudaStream_t>& streams, const std::vector<unsigned int>& peerMasks,
                           bool capturing) {
  const int n = state.nranks;
  const auto barriers = [&] {
    forEachRank(state, capturing, [&](int r) {
      const auto index = static_cast<std::size_t>(r);
      if (peerMasks[index] == 0) return;  // not in the group (a null stream is the default stream)
      kernels::CollCopyArgs args;
      args.sync = syncArgs(state, r, Collective::SendRecv, true, peerMasks[index]);
      kernels::launchCollCopy(args, 1, streams[index], launchOf(state, r, capturing));
    });
  };
  barriers();
  forEachRank(state, capturing, [&](int r) {
    std::vector<std::pair<int, EngineCopy>> sends;  // (how far along the ranks the receiver is, the copy)
    for (const SendRecvPair& pair : pairs) {
      if (pair.send.rank != r) continue;
      const int to = pair.recv.rank;
      const int distance = to == r ? n : (to - r + n) % n;  // the next rank first, this rank's own copy last
      sends.push_back({distance, {pair.send.send, pair.recv.recv, pair.recv.count * dataTypeSize(pair.recv.type)}});
    }
    if (sends.empty()) return;
    std::stable_sort(sends.begin(), sends.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<EngineCopy> pushes;
    for (const auto& send : sends) pushes.push_back(send.second);
    enqueueCopies(state, r, streams[static_cast<std::size_t>(r)], pushes, EngineCopy{});
  });
  barriers();
}

}  // namespace peerlink::coll
