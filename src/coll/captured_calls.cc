// CapturedCalls (captured_calls.hpp): the host functions, kernels and user objects of calls across nodes in graphs.
#include "coll/captured_calls.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/async_call.cuh"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// Where a captured call's host function leaves the run's ticket for the kernel: a cache line of pinned host memory.
struct alignas(64) TicketRecord {
  std::atomic<std::uint64_t> ticket{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the kernel reads the ticket as a plain 64-bit word");

constexpr std::size_t kRecordsPerBlock = 256;

}  // namespace

RelaxedCaptureMode::RelaxedCaptureMode() {
  PEERLINK_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_));
}
RelaxedCaptureMode::~RelaxedCaptureMode() {
  cudaThreadExchangeStreamCaptureMode(&mode_);
}

struct CapturedCalls::Shared {
  std::mutex mutex;
  std::vector<void*> blocks;  ///< pinned, mapped
  std::vector<TicketRecord*> free;
  std::atomic<int> alive{0};  ///< calls whose graph has not been destroyed
  /// The graph start of each capture with calls, by the capture's id (unique in the process), until its graph is
  /// destroyed.
  std::map<unsigned long long, GraphStart*> starts;

  TicketRecord* take() {
    const std::lock_guard<std::mutex> lock(mutex);
    if (free.empty()) {
      void* block = nullptr;
      PEERLINK_CUDA_CHECK(
          cudaHostAlloc(&block, kRecordsPerBlock * sizeof(TicketRecord), cudaHostAllocPortable | cudaHostAllocMapped));
      blocks.push_back(block);
      auto* records = static_cast<TicketRecord*>(block);
      for (std::size_t i = 0; i < kRecordsPerBlock; ++i) free.push_back(new (&records[i]) TicketRecord());
    }
    TicketRecord* record = free.back();
    free.pop_back();
    return record;
  }
};

// One captured call: the group it runs on, what it does, and where its ticket is left for its kernel.
struct CapturedCalls::Replay {
  net::NetGroup* group;
  net::ReplayedCall call;
  TicketRecord* record;
};

// A graph's captured calls, in the order they were captured, started together each time the graph runs by one host
// function, a root of the graph: it runs at the launch, beside the graph's first work, and the calls' kernels wait for
// their tickets on the GPU. (A host function in the stream's order before each kernel would hold the stream for
// CUDA's callback, tens of microseconds each.) The graph owns it (a user object).
struct CapturedCalls::GraphStart {
  std::shared_ptr<Shared> shared;
  unsigned long long capture = 0;
  std::vector<std::unique_ptr<Replay>> calls;
};

namespace {

void CUDART_CB startGraphCalls(void* data) {
  auto* start = static_cast<CapturedCalls::GraphStart*>(data);
  for (const auto& replay : start->calls) {
    replay->record->ticket.store(replay->group->startReplay(replay->call), std::memory_order_release);
  }
}

// Runs on a thread of CUDA's once the graph and its executable graphs are destroyed and their runs ended: no CUDA call.
void CUDART_CB destroyGraphStart(void* data) {
  auto* start = static_cast<CapturedCalls::GraphStart*>(data);
  CapturedCalls::Shared& shared = *start->shared;
  {
    const std::lock_guard<std::mutex> lock(shared.mutex);
    shared.starts.erase(start->capture);
    for (const auto& replay : start->calls) shared.free.push_back(replay->record);  // (within its capacity)
  }
  shared.alive.fetch_sub(static_cast<int>(start->calls.size()), std::memory_order_release);
  delete start;
}

}  // namespace

CapturedCalls::CapturedCalls() : shared_(std::make_shared<Shared>()) {}

CapturedCalls::~CapturedCalls() {
  if (anyAlive()) return;  // a graph may still be destroyed later: it gives its records back
  for (void* block : shared_->blocks) cudaFreeHost(block);
  shared_->blocks.clear();
}

bool CapturedCalls::anyAlive() const {
  return shared_->alive.load(std::memory_order_acquire) > 0;
}

CapturedCalls::GraphStart& CapturedCalls::startOf(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long capture = 0;
  cudaGraph_t graph = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, &capture, &graph));
  if (status != cudaStreamCaptureStatusActive || graph == nullptr) {
    throw Error(ErrorCode::Internal, "a call across nodes captured on a stream that is not capturing");
  }
  {
    const std::lock_guard<std::mutex> lock(shared_->mutex);
    if (const auto found = shared_->starts.find(capture); found != shared_->starts.end()) return *found->second;
  }
  auto* start = new GraphStart{shared_, capture, {}};
  cudaUserObject_t object = nullptr;
  if (const cudaError_t created =
          cudaUserObjectCreate(&object, start, destroyGraphStart, 1, cudaUserObjectNoDestructorSync);
      created != cudaSuccess) {
    delete start;
    PEERLINK_CUDA_CHECK(created);
  }
  // The graph takes the only reference: the calls live as long as the graph (and its executable graphs) do.
  if (const cudaError_t retained = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove);
      retained != cudaSuccess) {
    cudaUserObjectRelease(object, 1);
    PEERLINK_CUDA_CHECK(retained);
  }
  {
    const std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->starts[capture] = start;
  }
  cudaHostNodeParams params{};
  params.fn = startGraphCalls;
  params.userData = start;
  cudaGraphNode_t node = nullptr;
  PEERLINK_CUDA_CHECK(cudaGraphAddHostNode(&node, graph, nullptr, 0, &params));  // a root: no dependencies
  return *start;
}

void CapturedCalls::capture(net::NetGroup& group, net::ReplayedCall call, cudaStream_t stream,
                            std::uint64_t timeoutNs) {
  const RelaxedCaptureMode relaxed;
  for (std::size_t set = 1; set < net::kAsyncSets; ++set) {
    if (call.copiesIn[set].size() != call.copiesIn[0].size() ||
        call.copiesOut[set].size() != call.copiesOut[0].size()) {
      throw Error(ErrorCode::Internal, "a captured call whose slot sets take different copies");
    }
  }
  GraphStart& start = startOf(stream);
  TicketRecord* record = shared_->take();
  start.calls.push_back(std::make_unique<Replay>(Replay{&group, std::move(call), record}));
  shared_->alive.fetch_add(1, std::memory_order_relaxed);
  const Replay* replay = start.calls.back().get();
  const net::ReplayedCall& held = replay->call;
  kernels::ReplayedAsyncCallArgs args;
  static_assert(net::kAsyncSets <= static_cast<std::size_t>(kernels::kAsyncCallSetsMax),
                "every slot set's copies fit the replayed kernel's arguments");
  static_assert(net::kAsyncCopiesMax <= static_cast<std::size_t>(kernels::kAsyncCallCopiesMax),
                "an async call's copies fit its kernel's arguments");
  args.sets = static_cast<int>(net::kAsyncSets);
  args.ins = static_cast<int>(held.copiesIn[0].size());
  args.outs = static_cast<int>(held.copiesOut[0].size());
  net::AsyncFlags& flags = *held.flags;
  for (std::size_t set = 0; set < net::kAsyncSets; ++set) {
    for (std::size_t i = 0; i < held.copiesIn[set].size(); ++i) {
      const net::SlotCopy& copy = held.copiesIn[set][i];
      args.in[set][i] = {copy.src, copy.dst, copy.bytes};
    }
    for (std::size_t i = 0; i < held.copiesOut[set].size(); ++i) {
      const net::SlotCopy& copy = held.copiesOut[set][i];
      args.out[set][i] = {copy.src, copy.dst, copy.bytes};
    }
    args.copiedIn[set] = reinterpret_cast<std::uint64_t*>(&flags.copiedIn[set].value);
    args.copiedOut[set] = reinterpret_cast<std::uint64_t*>(&flags.copiedOut[set].value);
  }
  args.awaitRelease = held.awaitsRelease;
  args.release = reinterpret_cast<const volatile std::uint64_t*>(&flags.release.value);
  args.failedFrom = reinterpret_cast<const volatile std::uint64_t*>(&flags.failedFrom.value);
  args.gaveUp = reinterpret_cast<std::uint64_t*>(&flags.gaveUp.value);
  args.ticketOf = reinterpret_cast<std::uint64_t*>(&record->ticket);
  args.timeoutNs = timeoutNs;
  kernels::launchReplayedAsyncCall(args, stream);
}

}  // namespace peerlink::coll
