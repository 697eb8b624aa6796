// Collective algorithms as plans: which elements move where, at which step, reduced with what. A plan is
// plain data; the host executor (host_executor.hpp) runs it over host buffers in CPU tests, and the GPU
// kernels carry out the same plan over peer-mapped buffers. docs/collectives.md describes each algorithm.
//
// Execution model. Steps run in order; every transfer of a step may run concurrently with the others, and
// a step starts only when every rank has finished the previous one (on the GPU: flags between ranks). A
// plan is race-free by construction and the host executor checks it: within a step no element is written
// by two transfers, and none is written by one transfer while another reads it. A Reduce may read the
// exact range it writes (dst = op(dst, peer), element by element).
//
// Buffers. Each rank has an Input (the user's send buffer), an Output (the user's recv buffer) and a
// Scratch (library-owned staging) buffer, of the element counts RankLayout declares. In place, the plan
// already addresses the one user buffer that exists (e.g. all-reduce in place reads and writes Output
// only; reduce-scatter in place lives in Input), so executors never alias buffers themselves. Plans never
// write Input outside the rank's recv range: the user's send data stays intact.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// HostStage: pinned host memory the rank owns (shared memory across processes), which every rank reaches
/// without peer access: the stage of a hop between two GPUs that cannot use P2P (plan_staged.hpp).
enum class BufferKind { Input, Output, Scratch, HostStage };

/// "input", "output", "scratch", "host_stage".
const char* bufferKindName(BufferKind buffer) noexcept;

/// An element position in one rank's buffer.
struct BufferRef {
  int rank = 0;
  BufferKind buffer = BufferKind::Input;
  std::size_t offset = 0;  ///< in elements
};

enum class TransferKind {
  Copy,    ///< dst = srcs[0]
  Reduce,  ///< dst = op(srcs[0], srcs[1], ...), left to right, accumulated in the type's accumulator
};

/// `count` elements into `dst`, carried out by the GPU of `executor`: dst's rank when the plan pulls (a rank
/// reads its peers' buffers and writes its own), the source's when it pushes (broadcast two-shot's shard
/// owners, all-gather and all-to-all direct), as the kernels do.
struct Transfer {
  int executor = 0;
  TransferKind kind = TransferKind::Copy;
  BufferRef dst;
  std::vector<BufferRef> srcs;
  std::size_t count = 0;
  /// The last reduction these elements get: with ReduceOp::Avg, the sum is divided by the plan's nranks
  /// here, before the result is rounded to the element type. Before it, Avg reduces as Sum.
  bool finish = false;
};

/// Transfers that may run concurrently.
struct Step {
  std::vector<Transfer> transfers;
  /// Some transfer moves data between nodes (a source on another node than its destination): the net transport
  /// carries it (hierarchical_plan.hpp). The host executor checks that a step not marked so crosses no node.
  bool acrossNodes = false;
};

/// One rank's buffers, in elements, and where the collective's data lies in them.
struct RankLayout {
  std::size_t inputElements = 0;
  std::size_t outputElements = 0;
  std::size_t scratchElements = 0;
  std::size_t hostStageElements = 0;  ///< 0 except in plans with host-staged hops (plan_staged.hpp)
  BufferRef send;                     ///< where this rank's send data is before the plan runs
  std::size_t sendElements = 0;
  BufferRef recv;  ///< where this rank's result is after the plan ran
  std::size_t recvElements = 0;
};

struct Plan {
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::OneShot;
  DataType type = DataType::F32;
  int nranks = 1;
  std::size_t count = 0;  ///< the API's count argument (communicator.hpp)
  int root = 0;           ///< broadcast and reduce; 0 otherwise
  bool inPlace = false;
  std::size_t chunkElements = 0;  ///< requested chunk, 0 = unchunked
  std::size_t alignElements = 1;  ///< shard and chunk boundaries are multiples of this (16 bytes)
  std::size_t chunks = 1;         ///< chunks each shard (or block) was cut into
  bool push = false;              ///< the push variant (all-reduce two-shot, reduce-scatter direct)
  std::vector<RankLayout> ranks;  ///< indexed by rank
  std::vector<Step> steps;
  /// Ranks per node, rank r on node r / ranksPerNode (hierarchical_plan.hpp); 0: every rank on one node.
  int ranksPerNode = 0;
};

/// The node of `rank` (0 when the plan has one node).
int nodeOfRank(const Plan& plan, int rank) noexcept;
/// Whether `transfer` moves data between nodes: a source or the destination on another node than its executor.
bool crossesNodes(const Plan& plan, const Transfer& transfer) noexcept;

/// 16 bytes in elements of `type` (at least 1): the alignment of shard and chunk boundaries.
std::size_t alignElementsOf(DataType type) noexcept;

/// The plan of `algorithm` for `collective` over `nranks` ranks, with the API's `count` (communicator.hpp)
/// of elements of `type`. `root` matters for broadcast and reduce. `chunkElements` > 0 cuts each shard
/// (or block) into chunks of about that many elements (rounded up to alignElementsOf(type)), pipelined
/// across steps where the algorithm has several phases; 0 = one chunk. Send/recv is the ring shift
/// nccl-tests runs (rank r receives from rank r - 1); buildSendRecvPlan takes any set of pairs.
/// `push`: the data flow of the push kernel (PEERLINK_COLL_PUSH=1; all-reduce two-shot and reduce-scatter
/// direct only): every rank stores its pieces into the owners' scratch, the owners reduce locally and
/// (all-reduce) store the result to every rank; no rank reads a peer's buffer.
/// Throws Error(InvalidUsage) for an algorithm the collective lacks (algorithmsOf) or Auto, a push variant it
/// lacks, nranks < 1, a root out of range, or in place for all-to-all and send/recv (which have no in-place
/// form).
Plan buildPlan(Collective collective, Algorithm algorithm, int nranks, std::size_t count, int root, bool inPlace,
               std::size_t chunkElements, DataType type, bool push = false);

/// One send/recv pair of a group: `count` elements from rank `from` to rank `to`.
struct PointToPoint {
  int from = 0;
  int to = 0;
  std::size_t count = 0;
};

/// The plan of a group of send/recv pairs, all in one step (chunked as buildPlan does). Each rank's sends
/// lie back to back in its Input in the order given, its receives back to back in its Output; RankLayout
/// describes the whole Input and Output. Throws Error(InvalidUsage) for a rank out of range.
Plan buildSendRecvPlan(int nranks, const std::vector<PointToPoint>& pairs, DataType type,
                       std::size_t chunkElements = 0);

/// One line: "rank 2: reduce rank 2 output[128, 256) <- rank 0 input[128, 256), rank 1 input[...] (finish)".
std::string describeTransfer(const Transfer& transfer);
/// The whole plan, a header line then one line per transfer grouped by step, for logs and debugging.
std::string describePlan(const Plan& plan);
/// "all_reduce/ring n=4 count=1001 f32 out-of-place chunk=64": names a plan in messages.
std::string planName(const Plan& plan);

/// Elements each rank reads from other ranks' buffers over the whole plan (the traffic on its links).
std::vector<std::size_t> remoteReadElements(const Plan& plan);
/// Per rank, the elements its transfers store into other ranks' buffers (pushes).
std::vector<std::size_t> remoteWriteElements(const Plan& plan);

}  // namespace peerlink::coll
