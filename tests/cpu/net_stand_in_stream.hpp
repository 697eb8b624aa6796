// What the CPU tests of async and queued calls across nodes share (test_net_async.cc, test_net_queued_calls.cc,
// test_net_queued_computations.cc): a stand-in for a GPU stream, a world over host memory, a device whose staged
// memory is its own, and async and queued calls queued as the node world queues them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "coll/host_reduce.hpp"
#include "net/net_world.hpp"
#include "net/replayed_steps.hpp"

namespace peerlink::net::stand_ins {

// A GPU stream's order on a thread: each operation runs once those before it ended; an operation returns false
// while it cannot end yet (a wait), and is asked again. An operation still not ended after 10 s is given up and
// counted in stuck() (a test would hang otherwise).
class StandInStream {
 public:
  StandInStream() : thread_([this] { run(); }) {}
  ~StandInStream() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  StandInStream(const StandInStream&) = delete;
  StandInStream& operator=(const StandInStream&) = delete;

  // Queues `op`; returns its number (1, 2, ...): reached(n) once it ended.
  std::uint64_t queue(std::function<bool()> op) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ops_.push_back(std::move(op));
    changed_.notify_all();
    return ++queued_;
  }
  void copies(const std::vector<SlotCopy>& copies) {
    queue([copies] {
      for (const SlotCopy& copy : copies) std::memmove(copy.dst, copy.src, copy.bytes);
      return true;
    });
  }
  // What the async call's kernel does (kernels/async_call.cu): copies in, the ticket to the copied-in flag, a wait
  // for the release (where the call awaits it), copies out unless the call failed, the ticket to the copied-out flag.
  // `holdCopiesOut`, where given, holds the copies out until it returns true (a kernel slow to get there).
  void kernel(const AsyncCall& async, std::function<bool()> holdCopiesOut = {}) {
    AsyncFlags* flags = async.flags;
    const std::uint64_t ticket = async.ticket;
    const std::size_t set = async.set;
    copies(async.copiesIn);
    queue([flags, ticket, set] {
      flags->copiedIn[set].value.store(ticket, std::memory_order_release);
      return true;
    });
    const bool awaits = async.awaitsRelease;
    if (awaits) queue([flags, ticket] { return flags->release.value.load(std::memory_order_acquire) >= ticket; });
    if (holdCopiesOut) queue(std::move(holdCopiesOut));
    queue([flags, ticket, set, awaits, out = async.copiesOut, reductions = async.reductionsOut, run = async.run] {
      const std::uint64_t failed = flags->failedFrom.value.load(std::memory_order_acquire);
      if (!awaits || failed == 0 || failed > ticket) {
        for (const SlotCopy& copy : out) std::memmove(copy.dst, copy.src, copy.bytes);
        reduceOut(reductions, run);
      }
      flags->copiedOut[set].value.store(ticket, std::memory_order_release);
      return true;
    });
  }
  // What a graph of captured calls does each time it runs (coll/captured_calls.cc): its start, which starts every
  // call in order and leaves their tickets (here first on the stream: on a GPU it runs beside the kernels, which wait
  // for their tickets), then each call's pieces' replayed kernels in replayedSteps's order: the one that copies in
  // waits for its ticket's slot set to be free (its last call's kernel and messages ended), then copies in as an async
  // call's kernel does, unless the call had failed by then; the one that copies out does the rest (nothing where the
  // copies in were left out). `calls`: each call's pieces.
  void replayGraph(NetGroup& group, const std::vector<const std::vector<ReplayedCall>*>& calls) {
    std::size_t all = 0;
    for (const std::vector<ReplayedCall>* pieces : calls) all += pieces->size();
    auto tickets = std::make_shared<std::vector<std::uint64_t>>(all, 0);
    auto left = std::make_shared<std::vector<char>>(all, 0);
    queue([&group, calls, tickets] {
      const std::unique_lock<std::mutex> numbering = group.world().lockNumbering();
      std::size_t k = 0;
      for (const std::vector<ReplayedCall>* pieces : calls) {
        const std::uint64_t first = group.startReplay(*pieces, numbering);
        for (std::size_t p = 0; p < pieces->size(); ++p) (*tickets)[k++] = first + p;
      }
      return true;
    });
    std::size_t first = 0;  // the call's first piece's index in `tickets`
    for (const std::vector<ReplayedCall>* pieces : calls) {
      for (const ReplayedStep& step : replayedSteps(pieces->size(), kAsyncSets)) {
        const ReplayedCall& piece = (*pieces)[step.piece];
        if (step.part != ReplayedPart::CopyOut) replayedCopyIn(piece, tickets, left, first + step.piece);
        if (step.part != ReplayedPart::CopyIn) replayedCopyOut(piece, tickets, left, first + step.piece);
      }
      first += pieces->size();
    }
  }
  bool reached(std::uint64_t op) const { return ended_.load() >= op; }
  // Waits until every operation queued so far ended.
  void drain() {
    const std::uint64_t last = [&] {
      const std::lock_guard<std::mutex> lock(mutex_);
      return queued_;
    }();
    while (!reached(last)) std::this_thread::yield();
  }
  int stuck() const { return stuck_.load(); }

 private:
  // A call's reductions as its kernel's copy out makes them, after its copies (finishing: Avg divides there).
  static void reduceOut(const std::vector<SlotReduction>& reductions, const CopiedPieceRun& run) {
    for (const SlotReduction& reduction : reductions) {
      coll::hostReduce(run.type, run.op, reduction.dst, reduction.srcs, reduction.count, run.divisor, true);
    }
  }
  // `left[k]`: piece k's call had failed before its copies in, which it left out (so its copies out too).
  using Tickets = std::shared_ptr<std::vector<std::uint64_t>>;
  using Left = std::shared_ptr<std::vector<char>>;
  void replayedCopyIn(const ReplayedCall& call, Tickets tickets, Left left, std::size_t k) {
    AsyncFlags* flags = call.flags;
    queue([flags, tickets, k] {
      const std::uint64_t t = (*tickets)[k];
      if (t <= kAsyncSets) return true;
      const std::size_t set = t % kAsyncSets;
      return flags->copiedOut[set].value.load(std::memory_order_acquire) >= t - kAsyncSets &&
             flags->release.value.load(std::memory_order_acquire) >= t - kAsyncSets;
    });
    queue([flags, tickets, left, k, &call] {
      const std::uint64_t t = (*tickets)[k];
      const std::size_t set = t % kAsyncSets;
      const std::uint64_t failed = flags->failedFrom.value.load(std::memory_order_acquire);
      (*left)[k] = failed != 0 && failed <= t;
      if (!(*left)[k]) {
        for (const SlotCopy& copy : call.copiesIn[set]) std::memmove(copy.dst, copy.src, copy.bytes);
      }
      flags->copiedIn[set].value.store(t, std::memory_order_release);
      return true;
    });
  }
  void replayedCopyOut(const ReplayedCall& call, Tickets tickets, Left left, std::size_t k) {
    AsyncFlags* flags = call.flags;
    const bool awaits = call.awaitsRelease;
    if (awaits) {
      queue([flags, tickets, left, k] {
        return (*left)[k] || flags->release.value.load(std::memory_order_acquire) >= (*tickets)[k];
      });
    }
    queue([flags, tickets, left, k, awaits, &call] {
      const std::uint64_t t = (*tickets)[k];
      const std::size_t set = t % kAsyncSets;
      const std::uint64_t failed = flags->failedFrom.value.load(std::memory_order_acquire);
      if (!(*left)[k] && (!awaits || failed == 0 || failed > t)) {
        for (const SlotCopy& copy : call.copiesOut[set]) std::memmove(copy.dst, copy.src, copy.bytes);
        reduceOut(call.reductionsOut[set], call.run);
      }
      flags->copiedOut[set].value.store(t, std::memory_order_release);
      return true;
    });
  }
  void run() {
    for (;;) {
      std::function<bool()> op;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || !ops_.empty(); });
        if (ops_.empty()) return;
        op = std::move(ops_.front());
        ops_.pop_front();
      }
      const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!op()) {
        if (std::chrono::steady_clock::now() > giveUp) {
          ++stuck_;
          break;
        }
        std::this_thread::yield();
      }
      ++ended_;
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<bool()>> ops_;
  std::uint64_t queued_ = 0;
  std::atomic<std::uint64_t> ended_{0};
  std::atomic<int> stuck_{0};
  bool stopping_ = false;
  std::thread thread_;
};

inline NetOptions optionsWith(std::chrono::milliseconds timeout) {
  NetOptions options;
  options.timeout = timeout;
  options.path = NetPath::Staged;
  options.identity.hostId = "one";
  return options;
}

inline std::unique_ptr<NetWorld> hostWorld(std::unique_ptr<PointToPoint> p2p, NetOptions options) {
  return std::make_unique<NetWorld>(std::move(p2p), std::move(options), hostDeviceAccess(),
                                    std::make_unique<HostMemory>());
}

// One async call as the node world makes it, its kernel on `stream`.
inline void queueAsync(NetGroup& group, StandInStream& stream, const NetCall& call) {
  AsyncCall async = group.prepareAsync(call);
  stream.kernel(async);
  group.startAsync(std::move(async));
}

// A device whose staged memory makes the staged path's reductions itself, as a GPU's does: a queued call's
// computations are then the device's (NetGroup::computesOnDevice); here the stand-in copy stream makes them.
class DeviceWithStagedMemory final : public DeviceAccess {
 public:
  void copyAsync(void* dst, const void* src, std::size_t bytes) override { host_->copyAsync(dst, src, bytes); }
  std::uint64_t mark() override { return host_->mark(); }
  bool reached(std::uint64_t marker) override { return host_->reached(marker); }
  void* allocateHost(std::size_t bytes) override { return host_->allocateHost(bytes); }
  void freeHost(void* memory) noexcept override { host_->freeHost(memory); }
  std::unique_ptr<LocalMemory> stagedMemory() override { return std::make_unique<HostMemory>(); }

 private:
  std::unique_ptr<DeviceAccess> host_ = hostDeviceAccess();
};

// A queued call's device side on a stand-in copy stream, as CudaDeviceAccess::queue queues it on a GPU's: the
// computations on `computeStream` where given (the copy stream's next work then waits for the last), else on the
// copy stream itself. Its waits compare as CUDA's stream memory operations do: cyclically (CU_STREAM_WAIT_VALUE_GEQ:
// the signed difference at least 0). A computation reads its arguments from the ring once asked, as the kernel does,
// and reduces on the host.
inline void queueDeviceSide(StandInStream& copyStream, const std::vector<QueuedDeviceOp>& ops, AsyncFlags* flags,
                            const AskedKernel& kernel = {}, StandInStream* computeStream = nullptr) {
  StandInStream& computes = computeStream != nullptr ? *computeStream : copyStream;
  bool computed = false;
  for (const QueuedDeviceOp& op : ops) {
    switch (op.kind) {
      case QueuedDeviceOp::Kind::Copy: copyStream.copies({op.copy}); break;
      case QueuedDeviceOp::Kind::AwaitReady:
        copyStream.queue(
            [flags, op] { return cyclicAtLeast(flags->pieceReady.value.load(std::memory_order_acquire), op.ticket); });
        break;
      case QueuedDeviceOp::Kind::Copied:
        copyStream.queue([flags, op] {
          flags->pieceCopied.value.store(op.ticket, std::memory_order_release);
          return true;
        });
        break;
      case QueuedDeviceOp::Kind::Compute:
        computed = true;
        computes.queue([flags, op] {
          return cyclicAtLeast(flags->computations.asked.value.load(std::memory_order_acquire), op.ticket);
        });
        computes.queue([flags, op, kernel] {
          const kernels::PlanReduceArgs args = flags->computations.ring[op.ticket % kAskedRing];
          if (args.count > 0) {
            const std::vector<const void*> srcs(args.srcs, args.srcs + args.nsrcs);
            coll::hostReduce(kernel.type, kernel.op, args.dst, srcs, args.count, args.nranks, args.finish);
          }
          flags->computations.computed.value.store(op.ticket, std::memory_order_release);
          return true;
        });
        break;
      case QueuedDeviceOp::Kind::Reduce:
        copyStream.queue([op, kernel] {
          coll::hostReduce(kernel.type, kernel.op, op.reduction.dst, op.reduction.srcs, op.reduction.count, op.divisor,
                           true);
          return true;
        });
        break;
    }
  }
  if (computed && computeStream != nullptr) {
    const std::uint64_t last = computeStream->queue([] { return true; });
    copyStream.queue([computeStream, last] { return computeStream->reached(last); });
  }
}

// One queued call (NetGroup::prepareQueued) as the node world makes it: on the copy stream, after the caller's
// stream's work so far, the call's device side; the caller's stream's next work after them. Returns how many
// computations it asked of the device.
inline std::size_t queueQueued(NetGroup& group, StandInStream& stream, StandInStream& copyStream, QueuedCall queued,
                               StandInStream* computeStream = nullptr) {
  const std::vector<QueuedDeviceOp> ops = queued.deviceOps;
  AsyncFlags* flags = queued.flags;
  const AskedKernel kernel = queued.kernel;
  std::size_t computations = 0;
  for (const TicketRange& range : queued.computations) computations += range.count;
  group.startQueued(std::move(queued));
  const std::uint64_t before = stream.queue([] { return true; });
  copyStream.queue([&stream, before] { return stream.reached(before); });
  queueDeviceSide(copyStream, ops, flags, kernel, computeStream);
  const std::uint64_t after = copyStream.queue([] { return true; });
  stream.queue([&copyStream, after] { return copyStream.reached(after); });
  return computations;
}
inline std::size_t queueQueued(NetGroup& group, StandInStream& stream, StandInStream& copyStream, const NetCall& call,
                               StandInStream* computeStream = nullptr) {
  return queueQueued(group, stream, copyStream, group.prepareQueued(call), computeStream);
}

}  // namespace peerlink::net::stand_ins
