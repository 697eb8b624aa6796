// Internals shared by the plan builders (plan.cc, plan_builders.cc): addressing the send/recv/scratch
// data of a rank through its layout, shards and chunks, and the pipeline that turns (chunk, phase) into
// steps.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "coll/partition.hpp"
#include "coll/plan.hpp"

namespace peerlink::coll {

class PlanBuilder {
 public:
  explicit PlanBuilder(Plan& plan) : plan_(plan) {}

  int nranks() const { return plan_.nranks; }
  int root() const { return plan_.root; }
  bool inPlace() const { return plan_.inPlace; }
  std::size_t count() const { return plan_.count; }
  /// The call's message in bytes (count elements of the plan's type).
  std::size_t bytes() const { return plan_.count * dataTypeSize(plan_.type); }
  /// Shard and chunk boundaries are multiples of this (Plan::alignElements).
  std::size_t alignElements() const { return plan_.alignElements; }
  /// r mod nranks for any r (ring neighbours).
  int wrap(int r) const { return ((r % plan_.nranks) + plan_.nranks) % plan_.nranks; }

  /// Element `offset` of rank r's send data, recv data, scratch, wherever the layout put them.
  BufferRef send(int r, std::size_t offset) const { return shifted(plan_.ranks[idx(r)].send, offset); }
  BufferRef recv(int r, std::size_t offset) const { return shifted(plan_.ranks[idx(r)].recv, offset); }
  BufferRef scratch(int r, std::size_t offset) const { return {r, BufferKind::Scratch, offset}; }

  /// Shard `part` of `total` elements among nranks, aligned (partition.hpp: the kernels cut the same way).
  ElementRange shard(std::size_t total, int part) const {
    return partitionRange(total, plan_.nranks, part, plan_.alignElements);
  }
  /// Sets how many chunks every piece is cut into, from the largest piece; returns it.
  std::size_t setChunks(std::size_t largestPiece);
  /// Chunk c of `piece` (absolute offsets).
  ElementRange chunk(ElementRange piece, std::size_t c) const {
    ElementRange part =
        partitionRange(piece.count, static_cast<int>(plan_.chunks), static_cast<int>(c), plan_.alignElements);
    part.begin += piece.begin;
    return part;
  }
  std::size_t chunks() const { return plan_.chunks; }

  void copy(std::size_t chunkIndex, int phase, BufferRef dst, BufferRef src, std::size_t count);
  void reduce(std::size_t chunkIndex, int phase, BufferRef dst, std::vector<BufferRef> srcs, std::size_t count,
              bool finish);
  /// A copy carried out by `executor`, which may store into another rank's buffer (a push). Only for
  /// kernels that do store to peers (broadcast and reduce two-shot, all-gather and all-to-all direct, the
  /// push reductions): copy() and reduce() pull, executed by dst's rank.
  void pushCopy(std::size_t chunkIndex, int phase, int executor, BufferRef dst, BufferRef src, std::size_t count) {
    if (count == 0) return;
    pending_[{chunkIndex, phase}].push_back(Transfer{executor, TransferKind::Copy, dst, {src}, count, false});
  }
  /// A reduction carried out by `executor` into another rank's buffer (reduce two-shot), as pushCopy.
  void pushReduce(std::size_t chunkIndex, int phase, int executor, BufferRef dst, std::vector<BufferRef> srcs,
                  std::size_t count, bool finish) {
    if (count == 0) return;
    pending_[{chunkIndex, phase}].push_back(
        Transfer{executor, TransferKind::Reduce, dst, std::move(srcs), count, finish});
  }

  /// Chunk c's phase p runs at step c + p (pipelined) when `pipelined`, else at step p with every chunk
  /// together. Appends the steps to the plan, dropping empty ones.
  void emit(bool pipelined);

  void setScratch(int r, std::size_t elements) { plan_.ranks[idx(r)].scratchElements = elements; }

 private:
  static std::size_t idx(int r) { return static_cast<std::size_t>(r); }
  static BufferRef shifted(BufferRef base, std::size_t offset) {
    base.offset += offset;
    return base;
  }
  void add(std::size_t chunkIndex, int phase, Transfer transfer);

  Plan& plan_;
  std::map<std::pair<std::size_t, int>, std::vector<Transfer>> pending_;  // (chunk, phase) -> transfers
};

/// Fills plan.ranks from the collective, nranks, count, root and in place: where each rank's send and recv data
/// lie (in place, in the one user buffer the API says).
void fillLayout(Plan& plan);

// One builder per (collective, algorithm), in plan_builders.cc; nranks >= 2, layout filled in.
void buildAllReduceOneShot(PlanBuilder& b);
void buildAllReduceTwoShot(PlanBuilder& b);
void buildAllReduceTwoShotPush(PlanBuilder& b);
void buildAllReduceRing(PlanBuilder& b);
void buildReduceScatterDirect(PlanBuilder& b);
void buildReduceScatterPush(PlanBuilder& b);
void buildReduceScatterRing(PlanBuilder& b);
void buildAllGatherDirect(PlanBuilder& b);
void buildAllGatherRing(PlanBuilder& b);
void buildBroadcastDirect(PlanBuilder& b);
void buildBroadcastTwoShot(PlanBuilder& b);
void buildBroadcastRing(PlanBuilder& b);
void buildReduceDirect(PlanBuilder& b);
void buildReduceTwoShot(PlanBuilder& b);
void buildReduceRing(PlanBuilder& b);
void buildAllToAllDirect(PlanBuilder& b);
void buildSendRecvShift(PlanBuilder& b);

}  // namespace peerlink::coll
