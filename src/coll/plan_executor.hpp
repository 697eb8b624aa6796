// Runs a plan (plan.hpp) on the GPUs of this process. Each transfer runs on its executor rank's stream: a copy on
// the copy engine (cudaMemcpyAsync reaches device, peer and pinned host memory alike through unified addressing),
// a reduction in plan_reduce's kernel on the executor's GPU; copies into and out of host memory on the rank's copy
// lanes where it has them. A transfer whose executor lives in another process is
// that process's to run. Before the first step, between steps and after the last, the ranks' streams meet (a
// StepBarrier): a step starts when the previous one has ended on every rank, as the plan's step model says; the
// first orders the plan after each rank's earlier work on its stream, the last lets no rank go on before every
// store into its buffers has landed (the communicator's barrier is plan_barrier's kernel on flags in host memory:
// it serves ranks in one process and across processes alike, and streams captured into one graph or each into its
// own). Nothing blocks the host and nothing allocates: a run is capturable in a CUDA graph.
//
// Buffers. A plan addresses element offsets in each rank's Input, Output, Scratch and HostStage; PlanRank's
// extents say where each range of them is, so one plan can cover several user buffers (the pairs of a send/recv
// group) or a piece of one (a segment of a large call: segment_plans.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

#include "coll/plan.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::coll {

/// Elements [begin, begin + elements) of a plan buffer are at `base` (as every GPU of the process addresses it).
struct BufferExtent {
  std::size_t begin = 0;
  std::size_t elements = 0;
  const void* base = nullptr;
};

/// Streams beside a rank's own on which a step's copies into and out of host memory run: copies queued on one stream
/// run one after another, so a rank whose copies to host and from host shared its stream would leave each direction
/// of its link idle half the time. At each step the lanes wait for the rank's stream (`forked`), and the rank's stream
/// waits for the lanes (`toHostDone`, `fromHostDone`) before its step barrier; a run captured into a graph captures
/// the lanes with it.
struct CopyLanes {
  cudaStream_t toHost = nullptr;
  cudaStream_t fromHost = nullptr;
  cudaEvent_t forked = nullptr;
  cudaEvent_t toHostDone = nullptr;
  cudaEvent_t fromHostDone = nullptr;
};

/// A rank's CopyLanes, owned: two non-blocking streams and three events without timing, on `device`.
class OwnedCopyLanes {
 public:
  explicit OwnedCopyLanes(int device);
  CopyLanes lanes() const noexcept {
    return {toHost_.get(), fromHost_.get(), forked_.get(), toHostDone_.get(), fromHostDone_.get()};
  }

 private:
  Stream toHost_;
  Stream fromHost_;
  Event forked_;
  Event toHostDone_;
  Event fromHostDone_;
};

/// Where one rank's plan buffers are, by BufferKind (Input, Output, Scratch, HostStage), and what runs its part.
/// A rank with no device is not run here: a send/recv group's bystander, or a rank of another process (whose host
/// stage alone this process reaches).
struct PlanRank {
  std::array<std::vector<BufferExtent>, 4> extents;
  int device = -1;
  cudaStream_t stream = nullptr;
  CopyLanes lanes;       ///< none (every transfer on `stream`) unless set
  int reduceBlocks = 1;  ///< the grid of the rank's reductions

  bool runsHere() const noexcept { return device >= 0; }

  /// Elements [offset, offset + count) of `buffer` as a pointer: Error(Internal) naming the range where no one
  /// extent holds all of it (a plan and its buffers that disagree).
  void* address(BufferKind buffer, std::size_t offset, std::size_t count, std::size_t elementSize) const;
};

/// One extent: the whole buffer at `base`.
std::vector<BufferExtent> wholeBuffer(const void* base, std::size_t elements);

/// Makes every stream of `ranks` that runs here wait for what the others have queued so far; `first`: the plan
/// run's first barrier, before any step.
using StepBarrier = std::function<void(const std::vector<PlanRank>& ranks, bool first)>;

/// Runs this process's part of `plan` (its reductions with `op`) over `ranks` (one per plan rank), the streams
/// meeting through `barrier`. Throws Error(Internal) for a plan that does not fit its buffers, and what the CUDA
/// calls throw.
void runPlanOnGpus(const Plan& plan, ReduceOp op, const std::vector<PlanRank>& ranks, const StepBarrier& barrier);

}  // namespace peerlink::coll
