// runCall and runPeerOps (net_call.hpp): pieces, the staged pipeline, the direct path.
#include "net/net_call.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "coll/choice_rules.hpp"
#include "coll/hierarchical_plan.hpp"
#include "core/idle_wait.hpp"
#include "net/net_path.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

class HostDevice final : public DeviceAccess {
 public:
  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
  }
  std::uint64_t mark() override { return 0; }
  bool reached(std::uint64_t) override { return true; }
  void* allocateHost(std::size_t bytes) override { return ::operator new(std::max<std::size_t>(bytes, 1)); }
  void freeHost(void* memory) noexcept override { ::operator delete(memory); }
};

bool overlap(std::size_t a, std::size_t aCount, std::size_t b, std::size_t bCount) {
  return a < b + bCount && b < a + aCount;
}

// `blocks` blocks of `elements` elements, block b at element b * stride + offset of `base`.
BufferMap blocksOf(const void* base, std::size_t blocks, std::size_t elements, std::size_t stride, std::size_t offset,
                   std::size_t elementSize) {
  BufferMap map;
  auto* bytes = static_cast<std::byte*>(const_cast<void*>(base));
  for (std::size_t b = 0; b < blocks; ++b) {
    map.segments.push_back({b * elements, elements, bytes + (b * stride + offset) * elementSize});
  }
  return map;
}

std::string callName(const CallContext& context, const char* what) {
  return context.run.name.empty() ? std::string(what) : context.run.name;
}

// A call's pieces, up to kPiecesInFlight at a time, each a MemberPlan of its own (lane p % kPiecesInFlight: its
// tag and temporaries), advanced in turn by this thread: piece k+1's messages move while piece k computes. Piece
// p + kPiecesInFlight starts once piece p is done here, so messages of one tag are posted in the same order on every
// rank.
class Pipeline {
 public:
  Pipeline(const CallContext& context, DataType type, ReduceOp op, int divisor, std::string name)
      : context_(context), size_(dataTypeSize(type)), name_(std::move(name)) {
    run_ = context.run;
    run_.op = op;
    run_.avgDivisor = divisor;
    run_.name = name_;
  }

  // Pieces whose copies the caller queues itself (runCopiedPieces): piece p runs over `slots[p]` on `memoryOf(p)`,
  // on lane p % kPiecesInFlight's tag and temporaries, once `copiedIn(p)` says its copies are done and its lane is
  // free: up to kPiecesInFlight at a time, each told `done(p)` in order once its results lie in its slot. Waiting for a
  // piece's copies has the call's deadline, counted from the last progress.
  void runCopied(const std::vector<CallPiece>& pieces, const std::vector<StagingSlots::Slot>& slots,
                 const std::function<LocalMemory&(std::size_t)>& memoryOf,
                 const std::function<bool(std::size_t)>& copiedIn, const std::function<void(std::size_t)>& done) {
    if (slots.size() != pieces.size()) {
      throw Error(ErrorCode::Internal, "net " + name_ + ": " + std::to_string(pieces.size()) + " pieces in " +
                                           std::to_string(slots.size()) + " slots");
    }
    Plans plans;
    IdleWait idle;
    std::size_t started = 0;
    std::size_t finished = 0;
    std::chrono::steady_clock::time_point firstStarted;
    // The call's time goes in before its last piece is said done: a caller that saw the call end reads it.
    const auto pieceDone = [&](std::size_t p) {
      if (p + 1 == pieces.size() && context_.queuedTime != nullptr) {
        const auto ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - firstStarted);
        context_.queuedTime->nanoseconds.fetch_add(static_cast<std::uint64_t>(ns.count()), std::memory_order_relaxed);
        context_.queuedTime->calls.fetch_add(1, std::memory_order_release);
      }
      done(p);
    };
    auto since = std::chrono::steady_clock::now();
    while (finished < pieces.size()) {
      bool progressed = false;
      while (started < pieces.size() && started < finished + kPiecesInFlight && copiedIn(started)) {
        if (started == 0) firstStarted = std::chrono::steady_clock::now();
        const std::size_t lane = started % kPiecesInFlight;
        const CallPiece& piece = pieces[started];
        const StagingSlots::Slot& slot = slots[started];
        plans[lane] = std::make_unique<MemberPlan>(
            piece.plan, run_, tagOf(lane), BufferMap::contiguous(slot.input, piece.inputElements),
            BufferMap::contiguous(slot.output, piece.outputElements),
            BufferMap::contiguous(slot.scratch, piece.scratchElements), memoryOf(started), lane);
        ++started;
        progressed = true;
      }
      finished += advance(plans, finished, started, progressed, pieceDone);
      if (progressed) since = std::chrono::steady_clock::now();
      wait(idle, progressed, [&] {
        if (started == pieces.size() || started >= finished + kPiecesInFlight) return;  // the plans' own deadlines
        const std::string why = run_.lost ? run_.lost() : std::string();
        if (!why.empty()) throw Error(ErrorCode::RemoteError, "net " + name_ + ": " + why);
        if (std::chrono::steady_clock::now() - since >= context_.run.timeout) {
          throw Error(ErrorCode::Timeout, "net " + name_ +
                                              ": the caller's stream did not reach the call's copies into "
                                              "pinned host memory within " +
                                              std::to_string(context_.run.timeout.count()) +
                                              " ms (the work queued on it before the call did not end)");
        }
      });
    }
  }

  template <typename Make>
  void run(std::size_t pieces, Make make) {
    if (pieces == 0) return;
    if (context_.path == NetPath::Direct) {
      direct(pieces, make);
      return;
    }
    staged(pieces, make);
  }

 private:
  using Plans = std::array<std::unique_ptr<MemberPlan>, kPiecesInFlight>;

  // The caller's memory goes to MPI as it is. In place (send and recv overlap), each piece's send data is first
  // copied aside, so that every rank runs the same out-of-place plan whatever its buffers. Each lane has its own
  // scratch and room aside, the first piece's (the largest).
  template <typename Make>
  void direct(std::size_t pieces, Make make) {
    LocalMemory& memory = *context_.caller;
    std::array<CallPiece, kPiecesInFlight> lanes;
    lanes[0] = make(0);
    const std::size_t scratchBytes = lanes[0].scratchElements * size_;
    const std::size_t laneBytes = scratchBytes + lanes[0].inputElements * size_;
    auto* room = static_cast<std::byte*>(memory.persistent(laneBytes * kPiecesInFlight));
    Plans plans;
    IdleWait idle;
    std::size_t started = 0;
    std::size_t finished = 0;
    while (finished < pieces) {
      bool progressed = false;
      while (started < pieces && started < finished + kPiecesInFlight && !plans[started % kPiecesInFlight]) {
        const std::size_t lane = started % kPiecesInFlight;
        CallPiece& piece = lanes[lane];
        if (started > 0) piece = make(started);
        std::byte* aside = room + lane * laneBytes;
        if (overlaps(piece.input, piece.output)) {
          for (const BufferMap::Segment& segment : piece.input.segments) {
            memory.copy(aside + scratchBytes + segment.begin * size_, segment.data, segment.elements * size_);
          }
          piece.input = BufferMap::contiguous(aside + scratchBytes, piece.inputElements);
        }
        plans[lane] = std::make_unique<MemberPlan>(piece.plan, run_, tagOf(lane), piece.input, piece.output,
                                                   BufferMap::contiguous(aside, piece.scratchElements), memory, lane);
        ++started;
        progressed = true;
      }
      finished += advance(plans, finished, started, progressed, [](std::size_t) {});
      wait(idle, progressed, [] {});
    }
  }

  bool overlaps(const BufferMap& a, const BufferMap& b) const {
    for (const BufferMap::Segment& x : a.segments) {
      for (const BufferMap::Segment& y : b.segments) {
        const auto* x0 = static_cast<const std::byte*>(x.data);
        const auto* y0 = static_cast<const std::byte*>(y.data);
        if (x0 < y0 + y.elements * size_ && y0 < x0 + x.elements * size_) return true;
      }
    }
    return false;
  }

  // Piece p lives in slot p % kSlots: copied in as soon as the slot is free (its last piece copied out), run once
  // copied in and a lane is free, copied out once run. The copies queue behind each other on the device's one
  // queue, beside the messages of the pieces in flight.
  template <typename Make>
  void staged(std::size_t pieces, Make make) {
    constexpr std::size_t kSlots = StagingSlots::kSlots;
    StagingSlots& slots = *context_.slots;
    DeviceAccess& device = *context_.device;
    std::array<CallPiece, kSlots> inSlot;
    inSlot[0] = make(0);  // the largest
    LocalMemory& memory = memoryFor(inSlot[0].plan, pieces);
    slots.reserve(
        {inSlot[0].inputElements * size_, inSlot[0].outputElements * size_, inSlot[0].scratchElements * size_, 0},
        context_.run.timeout);
    std::array<Copies, kSlots> copies{};
    Plans plans;
    IdleWait idle;
    std::size_t copied = 0;  // pieces copied in (queued)
    std::size_t started = 0;
    std::size_t finished = 0;
    const auto copyOut = [&](std::size_t p) {
      const std::size_t s = p % kSlots;
      for (const SlotCopy& copy : copiesOutOfSlot(inSlot[s], slots.slot(s), size_)) {
        device.copyAsync(copy.dst, copy.src, copy.bytes);
      }
      copies[s].out = {device.mark(), std::chrono::steady_clock::now(), true};
    };
    while (finished < pieces) {
      bool progressed = false;
      while (copied < pieces && copied < finished + kSlots && settled(copies[copied % kSlots].out, device)) {
        const std::size_t s = copied % kSlots;
        if (copied > 0) inSlot[s] = make(copied);
        inSlot[s].atCopyOut = takeLocalCopies(inSlot[s].plan, run_.me);
        for (const SlotCopy& copy : copiesIntoSlot(inSlot[s], slots.slot(s), size_)) {
          device.copyAsync(copy.dst, copy.src, copy.bytes);
        }
        copies[s].in = {device.mark(), std::chrono::steady_clock::now(), true};
        ++copied;
        progressed = true;
      }
      while (started < copied && started < finished + kPiecesInFlight && !plans[started % kPiecesInFlight] &&
             settled(copies[started % kSlots].in, device)) {
        const std::size_t s = started % kSlots;
        const std::size_t lane = started % kPiecesInFlight;
        const CallPiece& piece = inSlot[s];
        const StagingSlots::Slot slot = slots.slot(s);
        plans[lane] = std::make_unique<MemberPlan>(
            piece.plan, run_, tagOf(lane), BufferMap::contiguous(slot.input, piece.inputElements),
            BufferMap::contiguous(slot.output, piece.outputElements),
            BufferMap::contiguous(slot.scratch, piece.scratchElements), memory, lane);
        ++started;
        progressed = true;
      }
      finished += advance(plans, finished, started, progressed, copyOut);
      wait(idle, progressed, [&] {
        for (const Copies& slot : copies) {
          overdue(slot.in, device, "copying the send data in");
          overdue(slot.out, device, "copying a result out");
        }
      });
    }
    // Left queued, the copies out still precede any later copy into a slot on the device's one queue, and a piece
    // runs only once its copy in is done: a later call never writes a slot a copy out still reads.
    if (!context_.awaitCopiesOut) return;
    for (;;) {
      bool waiting = false;
      for (Copies& slot : copies) {
        waiting = !settled(slot.out, device) || waiting;
        overdue(slot.out, device, "copying a result out");
      }
      if (!waiting) return;
      idle.idle();
    }
  }

  // The staged memory that computes a call's pieces: the host's for a call of one piece with small reductions where
  // the staged memory is a GPU's (reducesOnHost). Either may take any piece: a piece runs only once copied in (its
  // slot is the host's to read), is copied out only once its plan is done (every reduction computed, on the host, or
  // reached on the GPU's stream), and shares no buffer with the other pieces in flight (its own slot; each memory
  // its own temporaries).
  LocalMemory& memoryFor(const coll::Plan& first, std::size_t pieces) const {
    if (context_.stagedOnHost != nullptr && reducesOnHost(first, pieces, context_.gpuReduceMinBytes)) {
      return *context_.stagedOnHost;
    }
    return *context_.staged;
  }

  // A copy queued on the device, and when.
  struct Queued {
    std::uint64_t marker = 0;
    std::chrono::steady_clock::time_point at;
    bool pending = false;
  };
  struct Copies {
    Queued in;
    Queued out;
  };

  // Whether a copy is done (or none is queued); a done copy is forgotten.
  static bool settled(Queued& copy, DeviceAccess& device) {
    if (copy.pending && device.reached(copy.marker)) copy.pending = false;
    return !copy.pending;
  }

  void overdue(const Queued& copy, DeviceAccess& device, const char* what) const {
    if (!copy.pending || std::chrono::steady_clock::now() - copy.at < context_.run.timeout ||
        device.reached(copy.marker)) {
      return;
    }
    throw Error(ErrorCode::Timeout, "net " + name_ + ": " + what +
                                        " between the caller's memory and pinned host memory did not finish within " +
                                        std::to_string(context_.run.timeout.count()) + " ms");
  }

  // Advances the pieces in flight, oldest first; each piece done here leaves its lane, in order, `done(p)` told.
  // Returns how many finished.
  template <typename Done>
  std::size_t advance(Plans& plans, std::size_t finished, std::size_t started, bool& progressed, Done done) {
    for (std::size_t p = finished; p < started; ++p) {
      progressed = plans[p % kPiecesInFlight]->advance() || progressed;
    }
    std::size_t count = 0;
    for (std::size_t p = finished; p < started && plans[p % kPiecesInFlight]->done(); ++p) {
      plans[p % kPiecesInFlight].reset();
      done(p);
      ++count;
    }
    return count;
  }

  template <typename Check>
  static void wait(IdleWait& idle, bool progressed, Check check) {
    if (progressed) {
      idle.progressed();
      return;
    }
    check();
    idle.idle();
  }

  int tagOf(std::size_t lane) const { return run_.tag + static_cast<int>(lane); }

  const CallContext& context_;
  std::size_t size_;
  std::string name_;
  MemberRun run_;
};

}  // namespace

std::unique_ptr<DeviceAccess> hostDeviceAccess() {
  return std::make_unique<HostDevice>();
}

const char* netPathName(NetPath path) noexcept {
  return path == NetPath::Staged ? "staged" : "direct";
}

coll::Plan callPlan(const NetCall& call, int nranks, std::size_t count) {
  const Algorithm algorithm =
      call.algorithm == Algorithm::Auto ? coll::acrossNodesAlgorithm(call.collective, nranks) : call.algorithm;
  return coll::buildPlan(call.collective, algorithm, nranks, count, call.root, false, 0, call.type);
}

std::vector<LocalCopy> takeLocalCopies(coll::Plan& plan, int rank) {
  std::vector<LocalCopy> taken;
  const auto isLocalCopy = [&](const coll::Transfer& t) {
    return t.kind == coll::TransferKind::Copy && t.executor == rank && t.dst.rank == rank &&
           t.dst.buffer == coll::BufferKind::Output && t.srcs.size() == 1 && t.srcs[0].rank == rank &&
           t.srcs[0].buffer == coll::BufferKind::Input;
  };
  // Whether a transfer of step `from` on touches `ref`'s `count` elements of this rank: reads or writes them where
  // `ref` is Output (the copy's destination), writes them where it is Input (its source).
  const auto touchedLater = [&](std::size_t from, const coll::BufferRef& ref, std::size_t count) {
    for (std::size_t s = from; s < plan.steps.size(); ++s) {
      for (const coll::Transfer& t : plan.steps[s].transfers) {
        const auto hits = [&](const coll::BufferRef& other) {
          return other.rank == rank && other.buffer == ref.buffer && overlap(other.offset, t.count, ref.offset, count);
        };
        if (hits(t.dst)) return true;
        if (ref.buffer == coll::BufferKind::Output && std::any_of(t.srcs.begin(), t.srcs.end(), hits)) return true;
      }
    }
    return false;
  };
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    std::vector<coll::Transfer>& transfers = plan.steps[s].transfers;
    for (std::size_t t = 0; t < transfers.size();) {
      const coll::Transfer& copy = transfers[t];
      if (!isLocalCopy(copy) || touchedLater(s + 1, copy.dst, copy.count) ||
          touchedLater(s, copy.srcs[0], copy.count)) {
        ++t;
        continue;
      }
      taken.push_back({copy.srcs[0].offset, copy.dst.offset, copy.count});
      transfers.erase(transfers.begin() + static_cast<std::ptrdiff_t>(t));
    }
  }
  std::sort(taken.begin(), taken.end(), [](const LocalCopy& a, const LocalCopy& b) { return a.output < b.output; });
  return taken;
}

std::size_t pieceElementsOf(std::size_t chunkBytes, DataType type) {
  const std::size_t align = coll::alignElementsOf(type);
  return std::max(align, chunkBytes / dataTypeSize(type) / align * align);
}

CallPiece callPiece(const NetCall& call, int nranks, int me, std::size_t p, std::size_t step) {
  const std::size_t size = dataTypeSize(call.type);
  const std::size_t begin = p * step;
  const std::size_t count = std::min(step, call.count - begin);
  CallPiece piece;
  piece.plan = callPlan(call, nranks, count);
  const coll::RankLayout& layout = piece.plan.ranks[static_cast<std::size_t>(me)];
  piece.input =
      blocksOf(call.send, sendElementsOf(call.collective, nranks, 1, me, call.root), count, call.count, begin, size);
  piece.output =
      blocksOf(call.recv, recvElementsOf(call.collective, nranks, 1, me, call.root), count, call.count, begin, size);
  piece.inputElements = layout.inputElements;
  piece.outputElements = layout.outputElements;
  piece.scratchElements = layout.scratchElements;
  return piece;
}

void runCall(const CallContext& context, const NetCall& call) {
  const int n = static_cast<int>(context.run.members.size());
  checkCall(call, n, context.run.me);
  const std::size_t step = pieceElementsOf(context.chunkBytes, call.type);
  const auto make = [&](std::size_t p) { return callPiece(call, n, context.run.me, p, step); };
  const int divisor = call.avgDivisor > 0 ? call.avgDivisor : n;
  Pipeline(context, call.type, call.op, divisor, callName(context, collectiveName(call.collective)))
      .run((call.count + step - 1) / step, make);
}

void checkCall(const NetCall& call, int n, int me) {
  const std::string what = std::string("net ") + collectiveName(call.collective);
  if (call.collective == Collective::SendRecv) {
    throw Error(ErrorCode::InvalidUsage, what + ": send/recv goes through runPeerOps");
  }
  if (hasRoot(call.collective) && (call.root < 0 || call.root >= n)) {
    throw Error(ErrorCode::InvalidUsage,
                what + ": root " + std::to_string(call.root) + " is not a rank of a group of " + std::to_string(n));
  }
  if (call.count == 0) return;
  if (sendElementsOf(call.collective, n, 1, me, call.root) > 0 && call.send == nullptr) {
    throw Error(ErrorCode::InvalidUsage, what + ": no send buffer");
  }
  if (recvElementsOf(call.collective, n, 1, me, call.root) > 0 && call.recv == nullptr) {
    throw Error(ErrorCode::InvalidUsage, what + ": no recv buffer");
  }
}

void runCopiedPieces(const CallContext& context, const CopiedPieceRun& run, const std::vector<CallPiece>& pieces,
                     const std::vector<StagingSlots::Slot>& slots,
                     const std::function<LocalMemory&(std::size_t)>& memoryOf,
                     const std::function<bool(std::size_t)>& copiedIn, const std::function<void(std::size_t)>& done) {
  const int divisor = run.divisor > 0 ? run.divisor : static_cast<int>(context.run.members.size());
  Pipeline(context, run.type, run.op, divisor, callName(context, run.what))
      .runCopied(pieces, slots, memoryOf, copiedIn, done);
}

CallPiece peerPiece(const std::vector<PeerOp>& ops, int nranks, int me, DataType type, std::size_t p,
                    std::size_t step) {
  const std::size_t size = dataTypeSize(type);
  CallPiece piece;
  coll::Plan& plan = piece.plan;
  plan.collective = Collective::SendRecv;
  plan.type = type;
  plan.nranks = nranks;
  plan.ranks.resize(static_cast<std::size_t>(nranks));
  coll::Step step0;
  std::vector<std::pair<std::size_t, std::size_t>> toSelf;  // (input offset, count)
  for (const PeerOp& op : ops) {
    if (!op.send || op.count <= p * step) continue;
    const std::size_t count = std::min(step, op.count - p * step);
    const std::size_t at = piece.inputElements;
    piece.input.segments.push_back({at, count, static_cast<std::byte*>(op.data) + p * step * size});
    piece.inputElements += count;
    if (op.peer == me) {
      toSelf.emplace_back(at, count);
      continue;
    }
    step0.transfers.push_back({op.peer,
                               coll::TransferKind::Copy,
                               {op.peer, coll::BufferKind::Output, 0},
                               {{me, coll::BufferKind::Input, at}},
                               count,
                               false});
  }
  std::size_t self = 0;
  for (const PeerOp& op : ops) {
    if (op.send || op.count <= p * step) continue;
    const std::size_t count = std::min(step, op.count - p * step);
    const std::size_t at = piece.outputElements;
    piece.output.segments.push_back({at, count, static_cast<std::byte*>(op.data) + p * step * size});
    piece.outputElements += count;
    coll::BufferRef src{op.peer, coll::BufferKind::Input, 0};
    if (op.peer == me) {
      if (self >= toSelf.size() || toSelf[self].second != count) {
        throw Error(ErrorCode::InvalidUsage, "net send/recv on rank " + std::to_string(me) +
                                                 ": a receive from itself without a send to itself of that size");
      }
      src.offset = toSelf[self++].first;
    }
    step0.transfers.push_back({me, coll::TransferKind::Copy, {me, coll::BufferKind::Output, at}, {src}, count, false});
  }
  plan.steps.push_back(std::move(step0));
  return piece;
}

void checkPeerOps(const std::vector<PeerOp>& ops, int n) {
  for (const PeerOp& op : ops) {
    if (op.peer < 0 || op.peer >= n) {
      throw Error(ErrorCode::InvalidUsage, std::string("net ") + (op.send ? "send to" : "recv from") + " rank " +
                                               std::to_string(op.peer) + ": not a rank of a group of " +
                                               std::to_string(n));
    }
    if (op.count > 0 && op.data == nullptr) throw Error(ErrorCode::InvalidUsage, "net send/recv: a null buffer");
  }
}

void runPeerOps(const CallContext& context, const std::vector<PeerOp>& ops, DataType type) {
  checkPeerOps(ops, static_cast<int>(context.run.members.size()));
  std::size_t longest = 0;
  for (const PeerOp& op : ops) longest = std::max(longest, op.count);
  const std::size_t step = pieceElementsOf(context.chunkBytes, type);
  const int n = static_cast<int>(context.run.members.size());
  // Piece p of every operation long enough: one step; sends to this rank itself are matched to its receives
  // from itself in order.
  const auto make = [&](std::size_t p) { return peerPiece(ops, n, context.run.me, type, p, step); };
  Pipeline(context, type, ReduceOp::Sum, n, callName(context, "send/recv")).run((longest + step - 1) / step, make);
}

}  // namespace peerlink::net
