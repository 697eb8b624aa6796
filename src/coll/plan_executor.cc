// The plan executor on the GPUs (plan_executor.hpp).
#include "coll/plan_executor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "coll/comm_launch_support.hpp"
#include "core/cuda_check.hpp"
#include "kernels/plan_reduce.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

namespace {

void runTransfer(const Plan& plan, ReduceOp op, const std::vector<PlanRank>& ranks, const Transfer& transfer) {
  if (transfer.count == 0) return;
  const std::size_t size = dataTypeSize(plan.type);
  const PlanRank& executor = ranks[static_cast<std::size_t>(transfer.executor)];
  if (!executor.runsHere()) return;  // another process's
  const auto addressOf = [&](const BufferRef& ref) {
    return ranks[static_cast<std::size_t>(ref.rank)].address(ref.buffer, ref.offset, transfer.count, size);
  };
  void* dst = addressOf(transfer.dst);
  DeviceGuard guard(executor.device);
  if (transfer.kind == TransferKind::Copy) {
    const void* src = addressOf(transfer.srcs.front());
    if (src == dst) return;  // a rank in place under an out-of-place plan: its data is already there
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, transfer.count * size, cudaMemcpyDefault, executor.stream));
    return;
  }
  if (transfer.srcs.empty() || transfer.srcs.size() > static_cast<std::size_t>(kernels::kCollMaxRanks)) {
    throw Error(ErrorCode::Internal,
                fmt::format("plan {}: a reduction of {} sources (1 to {} run on the GPU): {}", planName(plan),
                            transfer.srcs.size(), kernels::kCollMaxRanks, describeTransfer(transfer)));
  }
  kernels::PlanReduceArgs args;
  args.dst = dst;
  for (std::size_t j = 0; j < transfer.srcs.size(); ++j) args.srcs[j] = addressOf(transfer.srcs[j]);
  args.nsrcs = static_cast<int>(transfer.srcs.size());
  args.count = transfer.count;
  args.nranks = plan.nranks;
  args.finish = transfer.finish;
  constexpr std::size_t kElementsPerBlock = 8192;
  const auto wanted = static_cast<int>(std::min<std::size_t>(
      (transfer.count + kElementsPerBlock - 1) / kElementsPerBlock, static_cast<std::size_t>(executor.reduceBlocks)));
  kernels::launchPlanReduce(args, collType(plan.type), collOp(op), std::max(1, wanted), executor.stream);
}

}  // namespace

void* PlanRank::address(BufferKind buffer, std::size_t offset, std::size_t count, std::size_t elementSize) const {
  for (const BufferExtent& extent : extents[static_cast<std::size_t>(buffer)]) {
    if (offset >= extent.begin && offset + count <= extent.begin + extent.elements) {
      return const_cast<void*>(offsetBy(extent.base, (offset - extent.begin) * elementSize));
    }
  }
  throw Error(ErrorCode::Internal, fmt::format("plan executor: {}[{}, {}) lies in no one buffer given for it",
                                               bufferKindName(buffer), offset, offset + count));
}

std::vector<BufferExtent> wholeBuffer(const void* base, std::size_t elements) {
  return {BufferExtent{0, elements, base}};
}

void runPlanOnGpus(const Plan& plan, ReduceOp op, const std::vector<PlanRank>& ranks, const StepBarrier& barrier) {
  if (ranks.size() != static_cast<std::size_t>(plan.nranks)) {
    throw Error(ErrorCode::Internal, fmt::format("plan executor: {} ranks given for {}", ranks.size(), planName(plan)));
  }
  barrier(ranks, true);
  for (const Step& step : plan.steps) {
    for (const Transfer& transfer : step.transfers) runTransfer(plan, op, ranks, transfer);
    barrier(ranks, false);
  }
}

}  // namespace peerlink::coll
