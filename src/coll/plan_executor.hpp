// Runs a plan (plan.hpp) on the GPUs of one process. Each transfer runs on its executor rank's stream: a copy on
// the copy engine (cudaMemcpyAsync reaches device, peer and pinned host memory alike through unified addressing),
// a reduction in plan_reduce's kernel on the executor's GPU. Between steps every rank's stream waits for every
// other rank's (an event each), so a step starts when the previous one has ended on every rank, as the plan's
// step model says; a wait before the first step orders the plan after each rank's earlier work on its stream, and
// one after the last lets no rank go on before every store into its buffers has landed. Nothing blocks the host
// and nothing allocates: a run is capturable in a CUDA graph.
//
// Buffers. A plan addresses element offsets in each rank's Input, Output, Scratch and HostStage; PlanBuffers
// says where each range of them is, as extents, so one plan can cover several user buffers (the pairs of a
// send/recv group) or a piece of one (a segment of a large call: segment_plans.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

#include "coll/plan.hpp"

namespace peerlink::coll {

/// Elements [begin, begin + elements) of a plan buffer are at `base` (as every GPU of the process addresses it).
struct BufferExtent {
  std::size_t begin = 0;
  std::size_t elements = 0;
  const void* base = nullptr;
};

/// Where one rank's plan buffers are, by BufferKind (Input, Output, Scratch, HostStage), and what runs its part.
/// A rank with no device takes no part (a send/recv group's bystander): no transfer may involve it.
struct PlanRank {
  std::array<std::vector<BufferExtent>, 4> extents;
  int device = -1;
  cudaStream_t stream = nullptr;
  cudaEvent_t stepDone = nullptr;  ///< an event of `device`, this rank's alone while the plan runs
  int reduceBlocks = 1;            ///< the grid of the rank's reductions

  bool takesPart() const noexcept { return device >= 0; }

  /// Elements [offset, offset + count) of `buffer` as a pointer: Error(Internal) naming the range where no one
  /// extent holds all of it (a plan and its buffers that disagree).
  void* address(BufferKind buffer, std::size_t offset, std::size_t count, std::size_t elementSize) const;
};

/// One extent: the whole buffer at `base`.
std::vector<BufferExtent> wholeBuffer(const void* base, std::size_t elements);

/// Runs `plan` (its reductions with `op`) over `ranks` (one per plan rank; every rank of the plan is this
/// process's). Throws Error(Internal) for a plan that does not fit its buffers, and what the CUDA calls throw.
void runPlanOnGpus(const Plan& plan, ReduceOp op, const std::vector<PlanRank>& ranks);

}  // namespace peerlink::coll
