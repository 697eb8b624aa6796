// NetGroup's async calls (net_world.hpp): which calls fit one, their tickets and slot sets, their jobs handed to the
// progress thread in ticket order, and the calls captured into CUDA graphs, started anew at each run of the graph.
#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "coll/plan.hpp"
#include "core/idle_wait.hpp"
#include "kernels/coll_kernels.cuh"
#include "net/net_world.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

// What the transport's thread runs a collective's piece with.
CopiedPieceRun runOf(const NetCall& call) {
  return {call.type, call.op, call.avgDivisor, collectiveName(call.collective)};
}

}  // namespace

bool NetGroup::asyncFits(CallPiece& piece, std::size_t elementSize) {
  if (std::max({piece.inputElements, piece.outputElements, piece.scratchElements}) * elementSize > kAsyncSlotBytes) {
    return false;
  }
  piece.atCopyOut = takeLocalCopies(piece.plan, me_);
  world_.makeAsyncSlots();  // (the copies are counted at a real slot's addresses)
  const StagingSlots::Slot& any = world_.asyncSlots_[0];
  const auto fewSources = [](const DeferredReduction& reduction) {
    return reduction.sources.size() <= kAsyncReductionSourcesMax;
  };
  return copiesIntoSlot(piece, any, elementSize).size() <= kAsyncCopiesMax &&
         copiesOutOfSlot(piece, any, elementSize).size() <= kAsyncCopiesMax &&
         piece.reducedAtCopyOut.size() <= kAsyncReductionsMax &&
         std::all_of(piece.reducedAtCopyOut.begin(), piece.reducedAtCopyOut.end(), fewSources);
}

std::optional<CallPiece> NetGroup::asyncPiece(const NetCall& call) {
  const NetOptions& options = world_.options_;
  if (!options.asyncCalls || options.path != NetPath::Staged || call.count == 0 ||
      call.collective == Collective::SendRecv || call.count > pieceElementsOf(options.chunkBytes, call.type)) {
    return std::nullopt;  // (more than one piece)
  }
  CallPiece piece = copiedCallPiece(call, 0, call.count);
  if (!asyncFits(piece, dataTypeSize(call.type))) return std::nullopt;
  return piece;
}

std::optional<CallPiece> NetGroup::asyncPiece(const std::vector<PeerOp>& ops, DataType type) {
  if (!asyncFits(ops, type)) return std::nullopt;
  std::size_t longest = 0;
  for (const PeerOp& op : ops) longest = std::max(longest, op.count);
  CallPiece piece = peerPiece(ops, size(), me_, type, 0, longest);
  asyncFits(piece, dataTypeSize(type));  // takes its local copies out (it fits: asked above)
  return piece;
}

bool NetGroup::asyncFits(const NetCall& call) {
  return asyncPiece(call).has_value();
}

bool NetGroup::asyncFits(const std::vector<PeerOp>& ops, DataType type) {
  const NetOptions& options = world_.options_;
  std::size_t longest = 0;
  for (const PeerOp& op : ops) longest = std::max(longest, op.count);
  if (!options.asyncCalls || options.path != NetPath::Staged || longest == 0 ||
      longest > pieceElementsOf(options.chunkBytes, type)) {
    return false;
  }
  for (const PeerOp& op : ops) {
    if (op.peer < 0 || op.peer >= size() || (op.count > 0 && op.data == nullptr)) return false;  // runPeerOps says
  }
  try {
    CallPiece piece = peerPiece(ops, size(), me_, type, 0, longest);
    return asyncFits(piece, dataTypeSize(type));
  } catch (const Error&) {
    return false;  // a group runPeerOps refuses: it says why
  }
}

std::optional<AsyncCall> NetGroup::tryPrepareAsync(const NetCall& call) {
  std::optional<CallPiece> piece = asyncPiece(call);
  if (!piece) return std::nullopt;
  checkCall(call, size(), me_);
  return prepareAsync(std::move(*piece), runOf(call), dataTypeSize(call.type));
}

AsyncCall NetGroup::prepareAsync(const NetCall& call) {
  std::optional<AsyncCall> async = tryPrepareAsync(call);
  if (!async) throw Error(ErrorCode::Internal, "net " + name_ + ": a call that cannot run async");
  return std::move(*async);
}

AsyncCall NetGroup::prepareAsync(const std::vector<PeerOp>& ops, DataType type) {
  std::optional<CallPiece> piece = asyncPiece(ops, type);
  if (!piece) throw Error(ErrorCode::Internal, "net " + name_ + ": a send/recv that cannot run async");
  return prepareAsync(std::move(*piece), {type, ReduceOp::Sum, 0, "send/recv"}, dataTypeSize(type));
}

// Everything that can fail comes before the ticket is taken: a ticket given out is always released by its job.
// `piece` has its local copies taken out (asyncFits).
AsyncCall NetGroup::prepareAsync(CallPiece piece, CopiedPieceRun run, std::size_t elementSize) {
  NetWorld& world = world_;
  AsyncFlags& flags = *world.asyncFlags_;
  AsyncCall async;
  std::unique_lock<std::mutex> numbering(world.numbering_);
  // The set's last call (kAsyncSets tickets before) must have ended on the progress thread: it no longer reads or
  // writes the slots. Every job has its deadlines, and a broken world's jobs end at once, so this wait ends. (Waited
  // for without the lock, which a graph's start takes; taken again as long as nobody took the ticket meanwhile.)
  for (;;) {
    async.ticket = world.tickets_ + 1;
    if (flags.release.value.load(std::memory_order_acquire) + kAsyncSets >= async.ticket) break;
    numbering.unlock();
    IdleWait idle;
    while (flags.release.value.load(std::memory_order_acquire) + kAsyncSets < async.ticket) {
      // (A graph's call that could not be started took its tickets without a job to release them: the world broke.)
      if (const std::string broken = world.brokenBy(); !broken.empty()) throw world.brokenError(broken);
      idle.idle();
    }
    numbering.lock();
  }
  async.set = async.ticket % kAsyncSets;
  if (const std::string broken = world.brokenBy(); !broken.empty()) throw world.brokenError(broken);
  async.run = run;
  async.piece = std::move(piece);
  async.slot = world.asyncSlots_[async.set];
  async.copiesIn = copiesIntoSlot(async.piece, async.slot, elementSize);
  async.copiesOut = copiesOutOfSlot(async.piece, async.slot, elementSize);
  async.reductionsOut = reductionsOutOfSlot(async.piece, async.slot, elementSize);
  if (async.run.divisor == 0) async.run.divisor = size();  // (what the transport's thread divides by too)
  async.awaitsRelease = !outputIsLocalCopies(async.piece);
  async.flags = &flags;
  async.context = context(run.what);  // numbers the call: last, once nothing can fail
  world.tickets_ = async.ticket;
  return async;
}

static_assert(static_cast<std::size_t>(coll::kOneShotReduceScatterRanksMax) <= kAsyncReductionSourcesMax,
              "a one-shot reduce-scatter's reductions fit a copy out's");

static_assert(kAsyncReductionSourcesMax <= static_cast<std::size_t>(kernels::kCollMaxRanks),
              "a copy out's reduction fits the queued calls' reduce kernel too");

// `plan` with its final reductions for this rank taken out (deferReductions), where a copy out can make them: the
// GPU reduces, and each reads few enough sources for the kernels (an explicit one-shot all-reduce of many ranks would
// not); nullopt otherwise. Each rank decides alone: a plan whose reductions are deferred sends and receives what it
// did (deferred_reductions.hpp).
std::optional<std::pair<coll::Plan, std::vector<DeferredReduction>>> NetGroup::deferredInCopiesOut(
    const coll::Plan& plan) const {
  if (!world_.stagedOnDevice_) return std::nullopt;
  coll::Plan deferred = plan;
  std::vector<DeferredReduction> mine = deferReductions(deferred, me_);
  const bool fits = !mine.empty() && std::all_of(mine.begin(), mine.end(), [](const DeferredReduction& reduction) {
    return reduction.sources.size() <= kAsyncReductionSourcesMax;
  });
  if (!fits) return std::nullopt;
  return std::make_pair(std::move(deferred), std::move(mine));
}

CallPiece NetGroup::copiedCallPiece(const NetCall& call, std::size_t p, std::size_t step) const {
  CallPiece piece = callPiece(call, size(), me_, p, step);
  if (auto deferred = deferredInCopiesOut(piece.plan)) {
    piece.plan = std::move(deferred->first);
    piece.reducedAtCopyOut = std::move(deferred->second);
    piece.scratchElements = piece.plan.ranks[static_cast<std::size_t>(me_)].scratchElements;
  }
  return piece;
}

std::vector<ReplayedCall> NetGroup::prepareReplayed(const NetCall& call) {
  if (call.count == 0 || call.collective == Collective::SendRecv) return {};
  checkCall(call, size(), me_);
  return replayedPieces(call.count, call.type, runOf(call),
                        [&](std::size_t p, std::size_t step) { return copiedCallPiece(call, p, step); });
}

std::vector<ReplayedCall> NetGroup::prepareReplayed(const std::vector<PeerOp>& ops, DataType type) {
  std::size_t longest = 0;
  for (const PeerOp& op : ops) longest = std::max(longest, op.count);
  // A pair's two ranks choose the same pieces: each one's slots hold what it sends and what it receives, the other's
  // the same two amounts the other way round.
  return replayedPieces(longest, type, {type, ReduceOp::Sum, 0, "send/recv"},
                        [&](std::size_t p, std::size_t step) { return peerPiece(ops, size(), me_, type, p, step); });
}

std::vector<ReplayedCall> NetGroup::replayedPieces(
    std::size_t count, DataType type, const CopiedPieceRun& run,
    const std::function<CallPiece(std::size_t p, std::size_t step)>& pieceOf) {
  const NetOptions& options = world_.options_;
  if (!options.asyncCalls || options.path != NetPath::Staged || count == 0) return {};
  const std::size_t elementSize = dataTypeSize(type);
  const std::size_t align = coll::alignElementsOf(type);
  // The largest piece (a multiple of the alignment, or the whole call) whose first, largest, piece fits.
  std::size_t step = std::min(count, pieceElementsOf(options.chunkBytes, type));
  for (;;) {
    CallPiece first = pieceOf(0, step);
    if (asyncFits(first, elementSize)) break;
    if (step <= align) return {};
    step = std::max(align, step / 2 / align * align);
  }
  std::vector<ReplayedCall> pieces;
  for (std::size_t p = 0; p * step < count; ++p) {
    CallPiece piece = pieceOf(p, step);
    if (!asyncFits(piece, elementSize)) return {};  // (a later piece is no larger than the first)
    pieces.push_back(prepareReplayed(std::move(piece), run, elementSize));
  }
  return pieces;
}

ReplayedCall NetGroup::prepareReplayed(CallPiece piece, CopiedPieceRun run, std::size_t elementSize) {
  ReplayedCall replayed;
  for (std::size_t set = 0; set < kAsyncSets; ++set) {
    replayed.copiesIn[set] = copiesIntoSlot(piece, world_.asyncSlots_[set], elementSize);
    replayed.copiesOut[set] = copiesOutOfSlot(piece, world_.asyncSlots_[set], elementSize);
    replayed.reductionsOut[set] = reductionsOutOfSlot(piece, world_.asyncSlots_[set], elementSize);
  }
  replayed.awaitsRelease = !outputIsLocalCopies(piece);
  replayed.flags = world_.asyncFlags_;
  replayed.run = run;
  if (replayed.run.divisor == 0) replayed.run.divisor = size();  // (what the transport's thread divides by too)
  replayed.piece = std::move(piece);
  return replayed;
}

std::uint64_t NetGroup::startReplay(const std::vector<ReplayedCall>& pieces,
                                    const std::unique_lock<std::mutex>& numbering) noexcept {
  NetWorld& world = world_;
  const std::uint64_t first = world.tickets_ + 1;
  world.tickets_ += pieces.size();
  try {
    if (!numbering.owns_lock() || numbering.mutex() != &world.numbering_) {
      throw Error(ErrorCode::Internal, "a graph's call started without the world's numbering lock");
    }
    if (pieces.empty()) throw Error(ErrorCode::Internal, "a graph's call of no pieces");
    std::vector<AsyncCall> calls(pieces.size());
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      const ReplayedCall& piece = pieces[p];
      AsyncCall& async = calls[p];
      async.ticket = first + p;
      async.set = async.ticket % kAsyncSets;
      async.copiesIn = piece.copiesIn[async.set];
      async.copiesOut = piece.copiesOut[async.set];
      async.reductionsOut = piece.reductionsOut[async.set];
      async.awaitsRelease = piece.awaitsRelease;
      async.flags = piece.flags;
      async.run = piece.run;
      async.piece = piece.piece;
      async.slot = world.asyncSlots_[async.set];
    }
    calls.front().context = context(pieces.front().run.what);  // one call: its pieces run as one job
    submitInOrder(std::move(calls));
  } catch (...) {
    // (Out of memory.) The call, and every one after it, fails: its kernels copy nothing out, and once they give up
    // waiting for their release (which no job writes) the world reports it.
    world.failFrom(first);
    try {
      world.breakWith("net " + name_ + ": a CUDA graph's call could not be started");
    } catch (...) {
    }
  }
  return first;
}

void NetGroup::startAsync(AsyncCall async) {
  const std::lock_guard<std::mutex> numbering(world_.numbering_);
  std::vector<AsyncCall> calls;
  calls.push_back(std::move(async));
  submitInOrder(std::move(calls));
}

void NetGroup::submitInOrder(std::vector<AsyncCall> calls) {
  NetWorld& world = world_;
  const AsyncTickets tickets{calls.front().ticket, calls.back().ticket};
  if (tickets.first != world.submittedTickets_ + 1) {
    // Another thread took a ticket between this one's and its submission: calls of a CUDA graph launched while the
    // caller's thread made another, on a stream not ordered with the graph's. The jobs would run out of ticket
    // order: every call from the first not yet submitted fails instead of taking another's results.
    world.failFrom(std::min(tickets.first, world.submittedTickets_ + 1));
    world.breakWith("net " + name_ +
                    ": calls across nodes were started out of order (a CUDA graph's calls and the caller's thread's "
                    "at once): make them on one stream, or on streams the application orders");
  }
  world.submittedTickets_ = std::max(world.submittedTickets_, tickets.last);
  // The job's pieces and slots as runCopiedPieces takes them, moved out of the calls (made once, not at each run).
  struct Job {
    std::vector<AsyncCall> calls;
    std::vector<CallPiece> pieces;
    std::vector<StagingSlots::Slot> slots;
  };
  auto job = std::make_shared<Job>();
  for (AsyncCall& a : calls) {
    job->pieces.push_back(std::move(a.piece));
    job->slots.push_back(a.slot);
  }
  job->calls = std::move(calls);
  world.submitAsync(
      [&world, job] {
        const std::vector<AsyncCall>& run = job->calls;
        const AsyncCall& first = run.front();
        runCopiedPieces(
            first.context, first.run, job->pieces, job->slots,
            [&world](std::size_t) -> LocalMemory& { return *world.asyncMemory_; },
            [&run](std::size_t p) {
              const AsyncCall& a = run[p];
              if (a.abandoned->load(std::memory_order_acquire)) {
                throw Error(ErrorCode::CudaError, "net " + run.front().context.run.name +
                                                      ": the caller could not queue the call's kernel (its error went "
                                                      "to the caller)");
              }
              // Nothing to copy in: the messages may land once the set's last kernel no longer reads its slots.
              if (a.copiesIn.empty()) {
                return a.flags->copiedOut[a.set].value.load(std::memory_order_acquire) + kAsyncSets >= a.ticket;
              }
              return a.flags->copiedIn[a.set].value.load(std::memory_order_acquire) >= a.ticket;
            },
            [&world, &run](std::size_t p) { world.releaseThrough(run[p].ticket); });
      },
      tickets);
}

void NetGroup::abandonAsync(const std::shared_ptr<std::atomic<bool>>& abandoned, const std::string& why) {
  abandoned->store(true, std::memory_order_release);
  world_.breakWith("net " + name_ + ": the caller could not queue the call's kernel (" + why + ")");
}

}  // namespace peerlink::net
