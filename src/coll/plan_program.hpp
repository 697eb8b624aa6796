// A rank's part of a staged plan as the program of the plan-run kernel (kernels/plan_run.cuh): its transfers, step by
// step, with their buffers resolved to pointers. Pure: the CPU tests check a program against the plan it came from.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "coll/plan.hpp"
#include "coll/plan_executor.hpp"
#include "kernels/plan_run.cuh"

namespace peerlink::coll {

/// The largest call (bytes a rank sends) the staged plans run as one kernel a rank. On an H200's PCIe link a kernel's
/// threads move pinned host memory one way about as fast as the copy engines (50-52 GB/s against 55), but both ways
/// at once, as a staged step moves it, 33-40 GB/s each way against the engines' 50, for every grid (32-132 blocks),
/// split of the blocks between the two ways and kind of load tried (tools/tune/host_copy.cu). So past a few MiB the
/// copy engines' bandwidth gains more than the kernel's cheaper steps: the two were even at 4-8 MiB (all-reduce, 2
/// ranks).
constexpr std::size_t kPlanRunMaxBytes = std::size_t{4} << 20;

/// Whether a call of `callBytes` (its count in bytes; a send/recv group: the most one rank sends) runs its staged plans
/// as one kernel a rank (where each rank's part fits one): `enabled` (PEERLINK_COLL_STAGED_KERNEL) and not past
/// kPlanRunMaxBytes.
constexpr bool runsAsOneKernel(std::size_t callBytes, bool enabled) noexcept {
  return enabled && callBytes <= kPlanRunMaxBytes;
}

/// Rank `rank`'s transfers of `plan` (those it executes, in step order; none of 0 elements, no copy onto itself) as a
/// plan-run program over the buffers `ranks` give, with `plan.nranks` as avg's divisor; the barrier's fields are the
/// caller's. Empty where the program would not fit the kernel's parameters (kPlanRunMaxOps, kPlanRunMaxPointers,
/// kPlanRunMaxSteps) or a transfer moves 2^32 elements or more. Throws Error(Internal) where a buffer range lies in
/// no extent `ranks` give (PlanRank::address).
std::optional<kernels::PlanRunArgs> planRunProgram(const Plan& plan, int rank, const std::vector<PlanRank>& ranks);

/// The transfers a program runs, decoded: step by step, each {destination, sources..., count, reduce, finish}.
struct ProgramTransfer {
  void* dst = nullptr;
  std::vector<const void*> srcs;
  std::size_t count = 0;
  bool reduce = false;
  bool finish = false;
};
std::vector<std::vector<ProgramTransfer>> programSteps(const kernels::PlanRunArgs& program);

}  // namespace peerlink::coll
