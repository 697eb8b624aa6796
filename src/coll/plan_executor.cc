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

enum class Lane { Own, ToHost, FromHost };

// Where a transfer of a rank with copy lanes runs: copies into or out of host memory on the lanes.
Lane laneOf(const Transfer& transfer) noexcept {
  if (transfer.kind != TransferKind::Copy) return Lane::Own;
  const bool toHost = transfer.dst.buffer == BufferKind::HostStage;
  const bool fromHost = transfer.srcs.front().buffer == BufferKind::HostStage;
  if (toHost == fromHost) return Lane::Own;
  return toHost ? Lane::ToHost : Lane::FromHost;
}

// Which lanes of each rank running here serve a step (lanesUsed).
struct LanesUsed {
  bool toHost = false;
  bool fromHost = false;
};

cudaStream_t streamOf(const PlanRank& rank, const LanesUsed& used, Lane lane) noexcept {
  if (lane == Lane::ToHost && used.toHost) return rank.lanes.toHost;
  if (lane == Lane::FromHost && used.fromHost) return rank.lanes.fromHost;
  return rank.stream;
}

void runTransfer(const Plan& plan, ReduceOp op, const std::vector<PlanRank>& ranks, const std::vector<LanesUsed>& used,
                 const Transfer& transfer) {
  if (transfer.count == 0) return;
  const std::size_t size = dataTypeSize(plan.type);
  const auto r = static_cast<std::size_t>(transfer.executor);
  const PlanRank& executor = ranks[r];
  if (!executor.runsHere()) return;  // another process's
  const cudaStream_t stream = streamOf(executor, used[r], laneOf(transfer));
  const auto addressOf = [&](const BufferRef& ref) {
    return ranks[static_cast<std::size_t>(ref.rank)].address(ref.buffer, ref.offset, transfer.count, size);
  };
  void* dst = addressOf(transfer.dst);
  DeviceGuard guard(executor.device);
  if (transfer.kind == TransferKind::Copy) {
    const void* src = addressOf(transfer.srcs.front());
    if (src == dst) return;  // a rank in place under an out-of-place plan: its data is already there
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, transfer.count * size, cudaMemcpyDefault, stream));
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
  kernels::launchPlanReduce(args, collType(plan.type), collOp(op), std::max(1, wanted), stream);
}

// A rank's lanes serve a step only where it has two kinds of work in it (copies to host, copies from host, anything
// else) that could overlap: forking and joining streams costs launch time a step of one kind would gain nothing for.
std::vector<LanesUsed> lanesUsed(const Step& step, const std::vector<PlanRank>& ranks) {
  std::vector<LanesUsed> used(ranks.size());
  std::vector<bool> own(ranks.size(), false);
  for (const Transfer& transfer : step.transfers) {
    const auto r = static_cast<std::size_t>(transfer.executor);
    if (transfer.count == 0 || !ranks[r].runsHere() || ranks[r].lanes.toHost == nullptr) continue;
    const Lane lane = laneOf(transfer);
    used[r].toHost = used[r].toHost || lane == Lane::ToHost;
    used[r].fromHost = used[r].fromHost || lane == Lane::FromHost;
    own[r] = own[r] || lane == Lane::Own;
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (int{used[r].toHost} + int{used[r].fromHost} + int{own[r]} < 2) used[r] = LanesUsed{};
  }
  return used;
}

// The lanes a step uses start after everything queued on their rank's stream so far.
void forkLanes(const std::vector<PlanRank>& ranks, const std::vector<LanesUsed>& used) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!used[r].toHost && !used[r].fromHost) continue;
    const CopyLanes& lanes = ranks[r].lanes;
    DeviceGuard guard(ranks[r].device);
    PEERLINK_CUDA_CHECK(cudaEventRecord(lanes.forked, ranks[r].stream));
    if (used[r].toHost) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(lanes.toHost, lanes.forked, 0));
    if (used[r].fromHost) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(lanes.fromHost, lanes.forked, 0));
  }
}

// The rank's stream goes on only after the step's copies on its lanes.
void joinLanes(const std::vector<PlanRank>& ranks, const std::vector<LanesUsed>& used) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!used[r].toHost && !used[r].fromHost) continue;
    const CopyLanes& lanes = ranks[r].lanes;
    const auto join = [&](cudaStream_t lane, cudaEvent_t done) {
      PEERLINK_CUDA_CHECK(cudaEventRecord(done, lane));
      PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(ranks[r].stream, done, 0));
    };
    DeviceGuard guard(ranks[r].device);
    if (used[r].toHost) join(lanes.toHost, lanes.toHostDone);
    if (used[r].fromHost) join(lanes.fromHost, lanes.fromHostDone);
  }
}

}  // namespace

OwnedCopyLanes::OwnedCopyLanes(int device)
    : toHost_(device),
      fromHost_(device),
      forked_(device, cudaEventDisableTiming),
      toHostDone_(device, cudaEventDisableTiming),
      fromHostDone_(device, cudaEventDisableTiming) {}

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
    const std::vector<LanesUsed> used = lanesUsed(step, ranks);
    forkLanes(ranks, used);
    for (const Transfer& transfer : step.transfers) runTransfer(plan, op, ranks, used, transfer);
    joinLanes(ranks, used);
    barrier(ranks, false);
  }
}

}  // namespace peerlink::coll
