// One kernel that runs a rank's whole staged plan (src/coll/plan_program.hpp): its copies and reductions step by
// step, every block on each, and between steps the plan's step barrier -- the blocks meet on two words in the rank's
// device memory, then one warp meets the peers on the flags in host memory exactly as plan_barrier's kernel does
// (the same numbers from the same counter), so a rank may run a plan this way while its peers run it step by step.
// Step by step, each step costs its copies' and kernels' launches besides the meeting of the streams; here a step
// costs its data and the meeting only. The program travels in the kernel's parameters (under 4 KiB), so nothing is
// written to device memory per call and a graph replays it as it was captured.
//
// The grid waits for all its blocks at every step: it must be resident at once (launchPlanRun's caller keeps it
// to a few blocks, as the communicator's grids are when ranks share a GPU).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/coll_kernels.cuh"
#include "kernels/plan_barrier.cuh"

namespace peerlink::kernels {

constexpr int kPlanRunMaxOps = 96;
constexpr int kPlanRunMaxPointers = 224;
constexpr int kPlanRunMaxSteps = 64;

/// One copy or reduction: pointers[pointer] = srcs pointers[pointer + 1 ...], `sources` of them (a copy has one).
struct PlanRunOp {
  unsigned int count = 0;  ///< elements
  unsigned short pointer = 0;
  unsigned char sources = 0;
  unsigned char flags = 0;  ///< kPlanRunReduce, kPlanRunFinish
};

constexpr unsigned char kPlanRunReduce = 1;  ///< dst = op(srcs...), else dst = srcs[0]
constexpr unsigned char kPlanRunFinish = 2;  ///< the last reduction: avg divides here

struct PlanRunArgs {
  PlanBarrierArgs barrier;             ///< the step barrier's (its signature for the first meeting)
  unsigned long long* grid = nullptr;  ///< two words of the rank's device memory, zeroed: arrivals, releases
  void* pointers[kPlanRunMaxPointers] = {};
  PlanRunOp ops[kPlanRunMaxOps] = {};
  unsigned short stepEnds[kPlanRunMaxSteps] = {};  ///< step s runs ops [stepEnds[s - 1], stepEnds[s])
  int steps = 0;
  int nranks = 1;  ///< avg's divisor
};

// Kernel parameters of up to 4 KiB need nothing of the driver beyond what every CUDA version gives.
static_assert(sizeof(PlanRunArgs) <= 4096, "the program fits the classic kernel parameter space");

/// Launches the run for one rank on `stream` (its GPU current), `blocks` blocks (at least 1), all resident.
void launchPlanRun(const PlanRunArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream);

namespace detail {
void preloadPlanRunKernels();  // plan_run.cu
}  // namespace detail

}  // namespace peerlink::kernels
