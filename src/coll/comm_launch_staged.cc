// Staged calls (comm_launch_staged.hpp).
#include "coll/comm_launch_staged.hpp"

#include <cuda_runtime_api.h>

#include <exception>
#include <string>
#include <utility>

#include "coll/comm_launch.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/staging_plan.hpp"
#include "coll/staging_schedule.hpp"
#include "core/cuda_check.hpp"
#include "core/log.hpp"
#include "peerlink/error.hpp"

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

// The set of chunk `cut` between the windows: every rank's buffers its regions of that rank's window.
std::vector<CallArgs> windowedSet(const CommState& state, const std::vector<CallArgs>& set,
                                  const SymmetricTable& windows, const StagedChunk& cut) {
  std::vector<CallArgs> windowed = set;
  for (int p = 0; p < state.nranks; ++p) {
    CallArgs& call = windowed[static_cast<std::size_t>(p)];
    call.count = cut.count;
    call.send = offsetBy(windows.window[p], cut.sendOffset);
    call.recv = offsetBy(windows.window[p], cut.recvOffset);
  }
  return windowed;
}

// The kernel a chunk runs between the windows: the one launchCollectiveSet chooses for its windowed set.
const CollectiveChoice& chunkChoice(CommState& state, const std::vector<CallArgs>& windowed) {
  const CallArgs& first = windowed.front();
  return callChoice(state, first.collective, first.count * dataTypeSize(first.type),
                    setInPlace(windowed, SetReach::EveryBuffer), setAligned(windowed, SetReach::EveryBuffer));
}

// Chunk k's collective on every local rank's stream: between the windows, each local rank's own buffers the
// caller's where its chunk keeps its own parts there (plans[r][k]).
void launchChunk(CommState& state, const std::vector<CallArgs>& set, const SymmetricTable& windows,
                 const std::vector<std::vector<StagedChunk>>& plans, std::size_t k, bool capturing) {
  const std::vector<CallArgs> windowed =
      windowedSet(state, set, windows, plans[static_cast<std::size_t>(state.localRanks().front())][k]);
  std::vector<PeerPointerTable> tables(static_cast<std::size_t>(state.nranks));
  for (const int r : state.localRanks()) {
    const auto index = static_cast<std::size_t>(r);
    PeerPointerTable& table = tables[index];
    for (int p = 0; p < state.nranks; ++p) {
      table.send[p] = windowed[static_cast<std::size_t>(p)].send;
      table.recv[p] = windowed[static_cast<std::size_t>(p)].recv;
    }
    const StagedChunk& mine = plans[index][k];
    if (mine.own == OwnBuffers::Caller) {
      table.send[r] = offsetBy(set[index].send, mine.ownSendOffset);
      table.recv[r] = offsetBy(set[index].recv, mine.ownRecvOffset);
      table.sendPitch[r] = mine.ownSendPitch;
    }
  }
  launchCollectiveSet(state, windowed, SetPointers(std::move(tables)), capturing);
}

// One of a rank's operations other than the kernel, with its GPU current.
void runRankOp(const StagingOp& op, const StagingStreams& streams, const CallArgs& call, const StagedChunk& chunk,
               void* window) {
  const cudaStream_t lane = op.lane == StagingLane::Caller ? call.stream : streams.copies.get();
  const cudaEvent_t event = streams.events[static_cast<std::size_t>(op.event)].get();
  switch (op.kind) {
    case StagingOp::Kind::Record: PEERLINK_CUDA_CHECK(cudaEventRecord(event, lane)); break;
    case StagingOp::Kind::Wait: PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(lane, event, 0)); break;
    case StagingOp::Kind::CopyIn:
      for (const StridedCopy& copy : chunk.in) copyOnStream(copy, call.send, window, lane);
      break;
    case StagingOp::Kind::CopyOut:
      for (const StridedCopy& copy : chunk.out) copyOnStream(copy, window, call.recv, lane);
      break;
    case StagingOp::Kind::Kernel: break;  // every rank's at once: launchChunk
  }
}

// After an operation failed part way through the call: each local rank's `abandon[r]` (stagingAbandon), each error
// ignored (the failure that stopped the call is the one reported; a rank whose join fails here had its stream
// broken by it), so the caller's stream passes the copies already issued.
void joinAfterFailure(const CommState& state, const std::vector<CallArgs>& set,
                      const std::vector<std::vector<StagingOp>>& abandon) noexcept {
  for (const int r : state.localRanks()) {
    const auto index = static_cast<std::size_t>(r);
    const StagingStreams& streams = *state.ranks[index].staging;
    for (const StagingOp& op : abandon[index]) {
      const cudaStream_t lane = op.lane == StagingLane::Caller ? set[index].stream : streams.copies.get();
      const cudaEvent_t event = streams.events[static_cast<std::size_t>(op.event)].get();
      try {
        DeviceGuard guard(state.ranks[index].device);
        const cudaError_t status =
            op.kind == StagingOp::Kind::Record ? cudaEventRecord(event, lane) : cudaStreamWaitEvent(lane, event, 0);
        if (status != cudaSuccess) {
          (void)cudaGetLastError();  // not left for a later launch's check to find
          break;
        }
      } catch (...) {  // the device cannot be made current
        break;
      }
    }
  }
}

}  // namespace

StagingStreams::StagingStreams(int device) : copies(device), capture(device) {
  for (Event& event : events) event = Event(device, cudaEventDisableTiming);
}

bool needsStaging(CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& shape = shapeOf(state, set);
  const std::size_t bytes = shape.count * dataTypeSize(shape.type);
  if (bytes == 0) return false;
  const CollectiveChoice& choice = callChoice(state, shape.collective, bytes, setInPlace(set, SetReach::LocalBuffers),
                                              setAligned(set, SetReach::LocalBuffers));
  return kernelInfo(choice.kernel).flow != DataFlow::ThroughStages;
}

namespace {

// The set's operations, one by one on its streams.
void issueStagedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  const std::vector<int>& local = state.localRanks();
  const CallArgs& shape = shapeOf(state, set);
  const std::size_t size = dataTypeSize(shape.type);
  const SymmetricTable& windows = state.tableOf(local.front());  // every local rank's table is the same
  std::vector<std::vector<StagedChunk>> plans(static_cast<std::size_t>(state.nranks));
  for (const int r : local) {
    plans[static_cast<std::size_t>(r)] =
        stagedChunks(shape.collective, state.nranks, r, shape.root, shape.count, size, state.layout.windowBytes);
  }
  const std::vector<StagedChunk>& cuts = plans[static_cast<std::size_t>(local.front())];
  if (state.stageOwnParts) {
    for (std::size_t k = 0; k < cuts.size(); ++k) {
      const CollectiveChoice& choice = chunkChoice(state, windowedSet(state, set, windows, cuts[k]));
      for (const int r : local) {
        keepOwnPartsLocal(plans[static_cast<std::size_t>(r)][k], shape.collective, choice.kernel, choice.algorithm,
                          state.nranks, r, shape.root, shape.count, size);
      }
    }
  }
  for (const int r : local) {
    if (state.ranks[static_cast<std::size_t>(r)].staging == nullptr) {
      throw Error(ErrorCode::Internal, "launchStagedSet: a rank without staging streams (no window)");
    }
  }
  // Each rank's operations: through its copy stream beside the kernels where it copies anything, else its kernels
  // alone (copiesAnything). The kernels of a chunk start on every local rank at once, each rank's operations
  // before its kernel issued first.
  std::vector<std::vector<StagingOp>> schedules(static_cast<std::size_t>(state.nranks));
  std::vector<std::size_t> issued(static_cast<std::size_t>(state.nranks), 0);
  for (const int r : local) {
    const auto index = static_cast<std::size_t>(r);
    schedules[index] = stagingSchedule(cuts.size(), !state.stageSerially && copiesAnything(plans[index]));
  }
  try {
    for (std::size_t k = 0; k <= cuts.size(); ++k) {
      for (const int r : local) {
        const auto index = static_cast<std::size_t>(r);
        const std::vector<StagingOp>& ops = schedules[index];
        std::size_t& at = issued[index];
        const RankResources& rank = state.ranks[index];
        DeviceGuard guard(rank.device);
        for (; at < ops.size() && !(ops[at].kind == StagingOp::Kind::Kernel && ops[at].chunk == k); ++at) {
          if (ops[at].kind == StagingOp::Kind::Kernel) {
            throw Error(ErrorCode::Internal, "launchStagedSet: a rank's kernels out of chunk order");
          }
          runRankOp(ops[at], *rank.staging, set[index], plans[index][ops[at].chunk], windows.window[r]);
        }
      }
      if (k == cuts.size()) break;
      launchChunk(state, set, windows, plans, k, capturing);
      for (const int r : local) ++issued[static_cast<std::size_t>(r)];  // past its kernel of chunk k
    }
  } catch (...) {
    std::vector<std::vector<StagingOp>> abandon(static_cast<std::size_t>(state.nranks));
    for (const int r : local) {
      const auto index = static_cast<std::size_t>(r);
      abandon[index] = stagingAbandon(schedules[index], issued[index]);
    }
    joinAfterFailure(state, set, abandon);
    throw;
  }
}

StagedCallKey keyOf(const CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& shape = shapeOf(state, set);
  StagedCallKey key{shape.collective, shape.count, shape.type, shape.op, shape.root, {}, {}};
  for (const int r : state.localRanks()) {
    key.sends.push_back(set[static_cast<std::size_t>(r)].send);
    key.recvs.push_back(set[static_cast<std::size_t>(r)].recv);
  }
  return key;
}

// Captures the set's operations into a graph per local rank, each rank's on its capture stream in its caller's
// stead (thread-local capture: other threads' CUDA calls go on). Empty, with nothing left capturing and no error
// pending, where CUDA refuses any part of it.
std::vector<GraphExec> captureStagedSet(CommState& state, const std::vector<CallArgs>& set) {
  std::vector<CallArgs> captured = set;
  std::vector<int> begun;
  std::string why;  // empty while every step succeeds
  for (const int r : state.localRanks()) {
    const auto index = static_cast<std::size_t>(r);
    const RankResources& rank = state.ranks[index];
    DeviceGuard guard(rank.device);
    captured[index].stream = rank.staging->capture.get();
    const cudaError_t begin = cudaStreamBeginCapture(captured[index].stream, cudaStreamCaptureModeThreadLocal);
    if (begin != cudaSuccess) {
      why = std::string("a capture could not begin: ") + cudaGetErrorString(begin);
      break;
    }
    begun.push_back(r);
  }
  if (why.empty()) {
    try {
      issueStagedSet(state, captured, true);
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  // Every capture ended before any graph is instantiated: instantiating is not allowed while this thread captures.
  std::vector<cudaGraph_t> captures;
  for (const int r : begun) {
    const auto index = static_cast<std::size_t>(r);
    DeviceGuard guard(state.ranks[index].device);
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(captured[index].stream, &graph);
    if (ended != cudaSuccess && why.empty()) why = cudaGetErrorString(ended);
    captures.push_back(graph);
  }
  std::vector<GraphExec> graphs;
  for (std::size_t i = 0; i < captures.size(); ++i) {
    DeviceGuard guard(state.ranks[static_cast<std::size_t>(begun[i])].device);
    cudaGraphExec_t exec = nullptr;
    if (why.empty()) {
      const cudaError_t made = cudaGraphInstantiate(&exec, captures[i], 0);
      if (made != cudaSuccess) why = cudaGetErrorString(made);
    }
    if (captures[i] != nullptr) (void)cudaGraphDestroy(captures[i]);
    graphs.emplace_back(exec);
  }
  if (!why.empty()) {
    (void)cudaGetLastError();  // not left for a later launch's check to find
    logInfo(LogSubsys::Coll, "a staged call could not be captured into a graph ({}): staged calls run eagerly", why);
    graphs.clear();
  }
  return graphs;
}

// Replays `graphs` (by local rank's index) on the callers' streams.
void replayStagedSet(const CommState& state, const std::vector<CallArgs>& set, const std::vector<GraphExec>& graphs) {
  const std::vector<int>& local = state.localRanks();
  for (std::size_t i = 0; i < local.size(); ++i) {
    const auto index = static_cast<std::size_t>(local[i]);
    DeviceGuard guard(state.ranks[index].device);
    PEERLINK_CUDA_CHECK(cudaGraphLaunch(graphs[i].get(), set[index].stream));
  }
}

}  // namespace

void launchStagedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing) {
  StagedGraphs* cache = state.stagedGraphs.get();
  if (capturing || cache == nullptr || cache->off) {
    issueStagedSet(state, set, capturing);
    return;
  }
  const StagedGraphPolicy::Decision decision = cache->policy.decide(keyOf(state, set));
  std::vector<GraphExec>& graphs = cache->graphs[decision.slot];
  switch (decision.action) {
    case StagedGraphPolicy::Action::Eager: issueStagedSet(state, set, false); return;
    case StagedGraphPolicy::Action::Capture:
      graphs = captureStagedSet(state, set);
      if (graphs.empty()) {
        cache->off = true;
        cache->policy.forget(decision.slot);
        issueStagedSet(state, set, false);
        return;
      }
      ++cache->captures;
      break;
    case StagedGraphPolicy::Action::Replay: ++cache->replays; break;
  }
  replayStagedSet(state, set, graphs);
}

}  // namespace peerlink::coll
