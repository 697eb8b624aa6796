// Staged calls (comm_launch_staged.hpp).
#include "coll/comm_launch_staged.hpp"

#include <cuda_runtime_api.h>

#include "coll/comm_launch.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/staging_plan.hpp"
#include "core/cuda_check.hpp"

namespace peerlink::coll {
namespace {

const CallArgs& shapeOf(const CommState& state, const std::vector<CallArgs>& set) {
  return set[static_cast<std::size_t>(state.localRanks().front())];
}

void copyOnStream(const StridedCopy& copy, const void* src, void* dst, cudaStream_t stream) {
  const auto* from = static_cast<const unsigned char*>(src) + copy.srcOffset;
  auto* to = static_cast<unsigned char*>(dst) + copy.dstOffset;
  if (copy.rows == 1) {
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(to, from, copy.rowBytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    PEERLINK_CUDA_CHECK(cudaMemcpy2DAsync(to, copy.dstPitch, from, copy.srcPitch, copy.rowBytes, copy.rows,
                                          cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace

bool needsStaging(CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& shape = shapeOf(state, set);
  const std::size_t bytes = shape.count * dataTypeSize(shape.type);
  if (bytes == 0) return false;
  const CollectiveChoice& choice = callChoice(state, shape.collective, bytes, setInPlace(set, SetReach::LocalBuffers),
                                              setAligned(set, SetReach::LocalBuffers));
  return kernelInfo(choice.kernel).flow != DataFlow::ThroughStages;
}

void launchStagedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const std::vector<int>& local = state.localRanks();
  const CallArgs& shape = shapeOf(state, set);
  const std::size_t size = dataTypeSize(shape.type);
  const SymmetricTable& windows = state.tableOf(local.front());  // every local rank's table is the same
  std::vector<std::vector<StagedChunk>> plans(static_cast<std::size_t>(state.nranks));
  for (const int r : local) {
    plans[static_cast<std::size_t>(r)] =
        stagedChunks(shape.collective, state.nranks, r, shape.root, shape.count, size, state.layout.windowBytes);
  }
  const std::size_t chunks = plans[static_cast<std::size_t>(local.front())].size();
  for (std::size_t k = 0; k < chunks; ++k) {
    const StagedChunk& cut = plans[static_cast<std::size_t>(local.front())][k];
    for (const int r : local) {
      const StagedChunk& chunk = plans[static_cast<std::size_t>(r)][k];
      const CallArgs& call = set[static_cast<std::size_t>(r)];
      if (!chunk.in) continue;
      DeviceGuard guard(state.devices[static_cast<std::size_t>(r)]);
      copyOnStream(*chunk.in, call.send, windows.window[r], call.stream);
    }
    std::vector<CallArgs> windowed = set;
    for (int p = 0; p < state.nranks; ++p) {
      CallArgs& call = windowed[static_cast<std::size_t>(p)];
      call.count = cut.count;
      call.send = windows.window[p];
      call.recv = offsetBy(windows.window[p], cut.recvOffset);
    }
    launchCollectiveSet(state, windowed, capturing);
    for (const int r : local) {
      const StagedChunk& chunk = plans[static_cast<std::size_t>(r)][k];
      const CallArgs& call = set[static_cast<std::size_t>(r)];
      if (!chunk.out) continue;
      DeviceGuard guard(state.devices[static_cast<std::size_t>(r)]);
      copyOnStream(*chunk.out, windows.window[r], call.recv, call.stream);
    }
  }
}

}  // namespace peerlink::coll
