// CapturedCalls (captured_calls.hpp): the host functions, kernels and user objects of calls across nodes in graphs.
#include "coll/captured_calls.hpp"

#include <atomic>
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
  void giveBack(TicketRecord* record) noexcept {
    const std::lock_guard<std::mutex> lock(mutex);
    free.push_back(record);  // (reserved: the vector held it before)
  }
};

namespace {

// What one captured call's host function and kernel use, owned by the graph (its user object).
struct Replay {
  std::shared_ptr<CapturedCalls::Shared> shared;
  net::NetGroup* group;
  net::ReplayedCall call;
  TicketRecord* record;
};

void CUDART_CB startReplay(void* data) {
  auto* replay = static_cast<Replay*>(data);
  replay->record->ticket.store(replay->group->startReplay(replay->call), std::memory_order_release);
}

// Runs on a thread of CUDA's once the graph and its executable graphs are destroyed and their runs ended: no CUDA call.
void CUDART_CB destroyReplay(void* data) {
  auto* replay = static_cast<Replay*>(data);
  replay->shared->giveBack(replay->record);
  replay->shared->alive.fetch_sub(1, std::memory_order_release);
  delete replay;
}

}  // namespace

CapturedCalls::CapturedCalls() : shared_(std::make_shared<Shared>()) {}

CapturedCalls::~CapturedCalls() {
  if (anyAlive()) return;  // a graph may still be destroyed later: its user object gives its record back
  for (void* block : shared_->blocks) cudaFreeHost(block);
  shared_->blocks.clear();
}

bool CapturedCalls::anyAlive() const {
  return shared_->alive.load(std::memory_order_acquire) > 0;
}

void CapturedCalls::capture(net::NetGroup& group, net::ReplayedCall call, cudaStream_t stream,
                            std::uint64_t timeoutNs) {
  const RelaxedCaptureMode relaxed;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph));
  if (status != cudaStreamCaptureStatusActive || graph == nullptr) {
    throw Error(ErrorCode::Internal, "a call across nodes captured on a stream that is not capturing");
  }
  for (std::size_t set = 1; set < net::kAsyncSets; ++set) {
    if (call.copiesIn[set].size() != call.copiesIn[0].size() ||
        call.copiesOut[set].size() != call.copiesOut[0].size()) {
      throw Error(ErrorCode::Internal, "a captured call whose slot sets take different copies");
    }
  }
  TicketRecord* record = shared_->take();
  auto* replay = new Replay{shared_, &group, std::move(call), record};
  shared_->alive.fetch_add(1, std::memory_order_relaxed);
  cudaUserObject_t object = nullptr;
  const cudaError_t created = cudaUserObjectCreate(&object, replay, destroyReplay, 1, cudaUserObjectNoDestructorSync);
  if (created != cudaSuccess) {
    destroyReplay(replay);
    PEERLINK_CUDA_CHECK(created);
  }
  // The graph takes the only reference: the call lives as long as the graph (and its executable graphs) do.
  if (const cudaError_t retained = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove);
      retained != cudaSuccess) {
    cudaUserObjectRelease(object, 1);
    PEERLINK_CUDA_CHECK(retained);
  }
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
  args.ticketOf = reinterpret_cast<const volatile std::uint64_t*>(&record->ticket);
  args.timeoutNs = timeoutNs;
  PEERLINK_CUDA_CHECK(cudaLaunchHostFunc(stream, startReplay, replay));
  kernels::launchReplayedAsyncCall(args, stream);
}

}  // namespace peerlink::coll
