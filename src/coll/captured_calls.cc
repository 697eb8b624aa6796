// CapturedCalls (captured_calls.hpp): the host functions, kernels and user objects of calls across nodes in graphs.
#include "coll/captured_calls.hpp"

#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/async_call.cuh"
#include "net/replayed_steps.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// Where a captured call's host function leaves the run's ticket for the kernel, and where the call's kernel that
// copies in hands it on to the one that copies out: a cache line of pinned host memory.
struct alignas(64) TicketRecord {
  std::atomic<std::uint64_t> ticket{0};
  std::atomic<std::uint64_t> handedOn{0};
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
  bool closed = false;  ///< the communicator is gone: a graph launched now starts nothing

  TicketRecord* take() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!free.empty()) {
        TicketRecord* record = free.back();
        free.pop_back();
        record->ticket.store(0, std::memory_order_relaxed);
        return record;
      }
    }
    // (Allocated outside the lock, which a graph's destruction on CUDA's thread takes.)
    void* block = nullptr;
    PEERLINK_CUDA_CHECK(
        cudaHostAlloc(&block, kRecordsPerBlock * sizeof(TicketRecord), cudaHostAllocPortable | cudaHostAllocMapped));
    auto* records = static_cast<TicketRecord*>(block);
    const std::lock_guard<std::mutex> lock(mutex);
    blocks.push_back(block);
    free.reserve(free.size() + kRecordsPerBlock);
    for (std::size_t i = 1; i < kRecordsPerBlock; ++i) free.push_back(new (&records[i]) TicketRecord());
    return new (&records[0]) TicketRecord();
  }
  void giveBack(TicketRecord* record) noexcept {  // under the mutex
    record->ticket.store(0, std::memory_order_relaxed);
    free.push_back(record);  // (within its capacity: it held every record before)
  }
};

// One captured call: the group it runs on, its pieces (none where its kernels were not all captured: it never
// starts), and where each piece's ticket is left for its kernels.
struct CapturedCalls::Replay {
  net::NetGroup* group = nullptr;
  std::vector<net::ReplayedCall> pieces;
  std::vector<TicketRecord*> records;  ///< per piece
};

// A graph's captured calls, in the order they were captured, started together each time the graph runs by one host
// function, a root of the graph: it runs at the launch, beside the graph's first work, and the calls' kernels wait for
// their tickets on the GPU. (A host function in the stream's order before each kernel would hold the stream for
// CUDA's callback, tens of microseconds each.) The graph owns it (a user object).
struct CapturedCalls::GraphStart {
  std::shared_ptr<Shared> shared;
  unsigned long long capture = 0;
  net::NetWorld* world = nullptr;
  std::vector<std::unique_ptr<Replay>> calls;
};

namespace {

// The graph's start, on CUDA's callback thread: every call started under one hold of the numbering lock, so that no
// other call is numbered among them. A graph launched after its communicator was destroyed starts nothing: its
// kernels find kNoTicket and leave.
void CUDART_CB startGraphCalls(void* data) {
  auto* start = static_cast<CapturedCalls::GraphStart*>(data);
  const std::lock_guard<std::mutex> lock(start->shared->mutex);  // the communicator stays while the calls start
  std::unique_lock<std::mutex> numbering;
  if (!start->shared->closed) {
    try {
      numbering = start->world->lockNumbering();
    } catch (...) {  // (std::system_error: the kernels find kNoTicket)
    }
  }
  for (const auto& replay : start->calls) {
    const std::uint64_t first = numbering.owns_lock() && !replay->pieces.empty()
                                    ? replay->group->startReplay(replay->pieces, numbering)
                                    : net::kNoTicket;
    for (std::size_t p = 0; p < replay->records.size(); ++p) {
      replay->records[p]->ticket.store(first == net::kNoTicket ? first : first + p, std::memory_order_release);
    }
  }
}

// Runs on a thread of CUDA's once the graph and its executable graphs are destroyed and their runs ended: no CUDA call.
void CUDART_CB destroyGraphStart(void* data) {
  auto* start = static_cast<CapturedCalls::GraphStart*>(data);
  CapturedCalls::Shared& shared = *start->shared;
  {
    const std::lock_guard<std::mutex> lock(shared.mutex);
    if (const auto found = shared.starts.find(start->capture); found != shared.starts.end() && found->second == start) {
      shared.starts.erase(found);
    }
    for (const auto& replay : start->calls) {
      for (TicketRecord* record : replay->records) shared.giveBack(record);
    }
  }
  shared.alive.fetch_sub(static_cast<int>(start->calls.size()), std::memory_order_release);
  delete start;
}

}  // namespace

CapturedCalls::CapturedCalls() : shared_(std::make_shared<Shared>()) {}

CapturedCalls::~CapturedCalls() {
  close();
  if (anyAlive()) return;  // a graph may still be destroyed later: it gives its records back
  for (void* block : shared_->blocks) cudaFreeHost(block);
  shared_->blocks.clear();
}

void CapturedCalls::close() noexcept {
  const std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->closed = true;
}

bool CapturedCalls::anyAlive() const {
  return shared_->alive.load(std::memory_order_acquire) > 0;
}

CapturedCalls::GraphStart& CapturedCalls::startOf(cudaStream_t stream, net::NetWorld& world) {
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
  auto* start = new GraphStart{shared_, capture, &world, {}};
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
  cudaHostNodeParams params{};
  params.fn = startGraphCalls;
  params.userData = start;
  cudaGraphNode_t node = nullptr;
  PEERLINK_CUDA_CHECK(cudaGraphAddHostNode(&node, graph, nullptr, 0, &params));  // a root: no dependencies
  // Only a start whose host node exists takes the capture's calls (one whose node failed dies with the graph).
  const std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->starts[capture] = start;
  return *start;
}

namespace {

// The replayed kernel's arguments for `call`, whose ticket is left at `record`.
kernels::ReplayedAsyncCallArgs replayedArgsOf(const net::ReplayedCall& call, TicketRecord& record,
                                              std::uint64_t timeoutNs) {
  static_assert(net::kAsyncSets <= static_cast<std::size_t>(kernels::kAsyncCallSetsMax),
                "every slot set's copies fit the replayed kernel's arguments");
  static_assert(net::kAsyncCopiesMax <= static_cast<std::size_t>(kernels::kAsyncCallCopiesMax),
                "an async call's copies fit its kernel's arguments");
  static_assert(net::kAsyncReductionsMax <= static_cast<std::size_t>(kernels::kAsyncCallReductionsMax) &&
                    net::kAsyncReductionSourcesMax <= static_cast<std::size_t>(kernels::kAsyncCallReductionSourcesMax),
                "a captured call's reductions fit its kernel's arguments");
  for (std::size_t set = 1; set < net::kAsyncSets; ++set) {
    if (call.copiesIn[set].size() != call.copiesIn[0].size() ||
        call.copiesOut[set].size() != call.copiesOut[0].size() ||
        call.reductionsOut[set].size() != call.reductionsOut[0].size()) {
      throw Error(ErrorCode::Internal, "a captured call whose slot sets take different copies");
    }
  }
  kernels::ReplayedAsyncCallArgs args;
  args.sets = static_cast<int>(net::kAsyncSets);
  args.ins = static_cast<int>(call.copiesIn[0].size());
  args.outs = static_cast<int>(call.copiesOut[0].size());
  args.reductions = static_cast<int>(call.reductionsOut[0].size());
  args.type =
      static_cast<int>(call.run.type);  // (the kernels' CollType and CollOp follow DataType's, ReduceOp's order)
  args.op = static_cast<int>(call.run.op);
  args.divisor = call.run.divisor;
  net::AsyncFlags& flags = *call.flags;
  for (std::size_t set = 0; set < net::kAsyncSets; ++set) {
    for (std::size_t i = 0; i < call.copiesIn[set].size(); ++i) {
      const net::SlotCopy& copy = call.copiesIn[set][i];
      args.in[set][i] = {copy.src, copy.dst, copy.bytes};
    }
    for (std::size_t i = 0; i < call.copiesOut[set].size(); ++i) {
      const net::SlotCopy& copy = call.copiesOut[set][i];
      args.out[set][i] = {copy.src, copy.dst, copy.bytes};
    }
    if (call.reductionsOut[set].size() > net::kAsyncReductionsMax) {
      throw Error(ErrorCode::Internal, "a captured call of too many reductions for its kernel");
    }
    for (std::size_t i = 0; i < call.reductionsOut[set].size(); ++i) {
      const net::SlotReduction& reduction = call.reductionsOut[set][i];
      if (reduction.srcs.size() > net::kAsyncReductionSourcesMax) {
        throw Error(ErrorCode::Internal, "a captured call's reduction of too many sources");
      }
      kernels::AsyncReduceRange& range = args.reduce[set][i];
      range.dst = reduction.dst;
      for (std::size_t j = 0; j < reduction.srcs.size(); ++j) range.srcs[j] = reduction.srcs[j];
      range.nsrcs = static_cast<int>(reduction.srcs.size());
      range.count = reduction.count;
    }
    args.copiedIn[set] = reinterpret_cast<std::uint64_t*>(&flags.copiedIn[set].value);
    args.copiedOut[set] = reinterpret_cast<std::uint64_t*>(&flags.copiedOut[set].value);
  }
  args.awaitRelease = call.awaitsRelease;
  args.release = reinterpret_cast<const volatile std::uint64_t*>(&flags.release.value);
  args.failedFrom = reinterpret_cast<const volatile std::uint64_t*>(&flags.failedFrom.value);
  args.gaveUp = reinterpret_cast<std::uint64_t*>(&flags.gaveUp.value);
  args.noTicket = net::kNoTicket;
  args.timeoutNs = timeoutNs;
  args.ticketOf = reinterpret_cast<std::uint64_t*>(&record.ticket);
  args.handedOn = reinterpret_cast<std::uint64_t*>(&record.handedOn);
  return args;
}

int kernelPartOf(net::ReplayedPart part) {
  switch (part) {
    case net::ReplayedPart::Whole: return kernels::ReplayedAsyncCallArgs::kWhole;
    case net::ReplayedPart::CopyIn: return kernels::ReplayedAsyncCallArgs::kCopyIn;
    case net::ReplayedPart::CopyOut: return kernels::ReplayedAsyncCallArgs::kCopyOut;
  }
  throw Error(ErrorCode::Internal, "a replayed call's unknown part");
}

}  // namespace

void CapturedCalls::capture(net::NetGroup& group, std::vector<net::ReplayedCall> pieces, cudaStream_t stream,
                            std::uint64_t timeoutNs) {
  const RelaxedCaptureMode relaxed;
  if (pieces.empty()) throw Error(ErrorCode::Internal, "a captured call of no pieces");
  GraphStart& start = startOf(stream, group.world());
  start.calls.reserve(start.calls.size() + 1);  // (taken below once kernels are captured: it must not throw then)
  auto replay = std::make_unique<Replay>();
  replay->group = &group;
  replay->pieces = std::move(pieces);
  replay->records.reserve(replay->pieces.size());
  std::vector<kernels::ReplayedAsyncCallArgs> args;
  args.reserve(replay->pieces.size());
  try {
    for (const net::ReplayedCall& piece : replay->pieces) {
      replay->records.push_back(shared_->take());
      args.push_back(replayedArgsOf(piece, *replay->records.back(), timeoutNs));
    }
  } catch (...) {
    const std::lock_guard<std::mutex> lock(shared_->mutex);
    for (TicketRecord* record : replay->records) shared_->giveBack(record);
    throw;
  }
  // From the first kernel captured on, the graph may read the records: they stay its own, given back as it is
  // destroyed. A call not captured whole is never started (its kernels find kNoTicket and leave).
  std::exception_ptr failed;
  try {
    for (const net::ReplayedStep& step : net::replayedSteps(replay->pieces.size(), net::kAsyncSets)) {
      kernels::ReplayedAsyncCallArgs& stepArgs = args[step.piece];
      stepArgs.part = kernelPartOf(step.part);
      kernels::launchReplayedAsyncCall(stepArgs, stream);
    }
  } catch (...) {
    failed = std::current_exception();
    replay->pieces.clear();
  }
  // Started from the graph's next launch on, in the order they were captured.
  start.calls.push_back(std::move(replay));
  shared_->alive.fetch_add(1, std::memory_order_relaxed);
  if (failed) std::rethrow_exception(failed);
}

}  // namespace peerlink::coll
