// NetGroup's queued calls (net_world.hpp: queuedFits, prepareQueued, startQueued): a call's pieces, their pinned
// slots and tickets, the device side the caller queues, and the job on the progress thread that runs the pieces'
// messages on the host as the copy stream brings them in.
#include <algorithm>

#include "net/net_path.hpp"
#include "net/net_world.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {

bool NetGroup::computesOnDevice(const NetCall& call, const coll::Plan& first) const {
  const NetOptions& options = world_.options_;
  if (!world_.stagedOnDevice_ || largestReductionBytes(first) == 0) return false;
  const std::size_t step = pieceElementsOf(options.chunkBytes, call.type);
  return !(options.reduce == NetReduce::Auto &&
           reducesOnHost(first, (call.count + step - 1) / step, options.gpuReduceMinBytes));
}

bool NetGroup::queuedFits(const NetCall& call) const {
  const NetOptions& options = world_.options_;
  if (!options.asyncCalls || options.path != NetPath::Staged || call.count == 0 ||
      call.collective == Collective::SendRecv) {
    return false;
  }
  const std::size_t step = pieceElementsOf(options.chunkBytes, call.type);
  const coll::Plan first = callPlan(call, size(), std::min(call.count, step));
  if (deferredInCopiesOut(first)) return true;  // (nothing asked of the device)
  if (!computesOnDevice(call, first)) return true;
  const PlanDemand demand = planDemand(first, me_);
  return demand.mostSources <= static_cast<std::size_t>(kernels::kCollMaxRanks) &&
         demand.computations + demand.mostComputationsInAStep <= kAskedRing;
}

bool NetGroup::queuedFits(const std::vector<PeerOp>& ops, DataType type) const {
  const NetOptions& options = world_.options_;
  std::size_t longest = 0;
  for (const PeerOp& op : ops) longest = std::max(longest, op.count);
  if (!options.asyncCalls || options.path != NetPath::Staged || longest == 0) return false;
  for (const PeerOp& op : ops) {
    if (op.peer < 0 || op.peer >= size() || (op.count > 0 && op.data == nullptr)) return false;  // runPeerOps says
  }
  const std::size_t step = pieceElementsOf(options.chunkBytes, type);
  try {
    for (std::size_t p = 0; p < (longest + step - 1) / step; ++p) peerPiece(ops, size(), me_, type, p, step);
    return true;
  } catch (const Error&) {
    return false;  // a group runPeerOps refuses: it says why
  }
}

QueuedCall NetGroup::prepareQueued(const NetCall& call) {
  checkCall(call, size(), me_);
  if (const std::string broken = world_.brokenBy(); !broken.empty()) throw world_.brokenError(broken);
  if (call.count == 0) throw Error(ErrorCode::Internal, "net " + name_ + ": a queued call of no elements");
  const std::size_t step = pieceElementsOf(world_.options_.chunkBytes, call.type);
  std::vector<CallPiece> pieces;
  for (std::size_t p = 0; p < (call.count + step - 1) / step; ++p) pieces.push_back(copiedCallPiece(call, p, step));
  // Pieces whose copies out reduce leave the plans nothing to compute.
  const bool onDevice = computesOnDevice(call, pieces.front().plan);
  return prepareQueued(std::move(pieces), {call.type, call.op, call.avgDivisor, collectiveName(call.collective)},
                       onDevice);
}

QueuedCall NetGroup::prepareQueued(const std::vector<PeerOp>& ops, DataType type) {
  checkPeerOps(ops, size());
  if (const std::string broken = world_.brokenBy(); !broken.empty()) throw world_.brokenError(broken);
  std::size_t longest = 0;
  for (const PeerOp& op : ops) longest = std::max(longest, op.count);
  const std::size_t step = pieceElementsOf(world_.options_.chunkBytes, type);
  std::vector<CallPiece> pieces;
  for (std::size_t p = 0; p < (longest + step - 1) / step; ++p)
    pieces.push_back(peerPiece(ops, size(), me_, type, p, step));
  if (pieces.empty()) throw Error(ErrorCode::Internal, "net " + name_ + ": a queued send/recv group moves nothing");
  return prepareQueued(std::move(pieces), {type, ReduceOp::Sum, 0, "send/recv"}, false);
}

QueuedCall NetGroup::prepareQueued(std::vector<CallPiece> pieces, CopiedPieceRun run, bool onDevice) {
  NetWorld& world = world_;
  const std::size_t elementSize = dataTypeSize(run.type);
  QueuedCall queued;
  queued.pieces = std::move(pieces);
  for (CallPiece& piece : queued.pieces) piece.atCopyOut = takeLocalCopies(piece.plan, me_);
  const CallPiece& largest = queued.pieces.front();
  std::uint64_t computeTickets = world.computeTickets_;
  if (onDevice) {
    std::size_t mostElements = 0;
    for (const CallPiece& piece : queued.pieces) {
      const PlanDemand demand = planDemand(piece.plan, me_);
      queued.computations.push_back({computeTickets + 1, demand.computations});
      computeTickets += demand.computations;
      queued.landingBytes = std::max(queued.landingBytes, demand.mostTemporaryBytes);
      mostElements = std::max(mostElements, demand.mostElements);
    }
    queued.kernel = askedKernel(run.type, run.op, mostElements);
  }
  queued.kernel.type = run.type;  // (also the copies out's reductions')
  queued.kernel.op = run.op;
  // The slots' earlier calls are done with them once the copy stream reached what is queued now.
  try {
    world.queuedSlots_.reserve({largest.inputElements * elementSize, largest.outputElements * elementSize,
                                largest.scratchElements * elementSize, queued.landingBytes},
                               world.options_.timeout);
  } catch (const Error& error) {
    // This rank numbers no call now where its peers do: its later calls could not match theirs.
    world.breakWith(error.what());
    throw;
  }
  std::vector<std::vector<SlotCopy>> copiesIn, copiesOut;
  std::vector<std::vector<SlotReduction>> reductionsOut;
  for (std::size_t p = 0; p < queued.pieces.size(); ++p) {
    const StagingSlots::Slot slot = world.queuedSlots_.slot(p % StagingSlots::kSlots);
    queued.slots.push_back(slot);
    copiesIn.push_back(copiesIntoSlot(queued.pieces[p], slot, elementSize));
    copiesOut.push_back(copiesOutOfSlot(queued.pieces[p], slot, elementSize));
    reductionsOut.push_back(reductionsOutOfSlot(queued.pieces[p], slot, elementSize));
    queued.tickets.push_back(world.pieceTickets_ + 1 + p);
  }
  queued.deviceOps = queuedDeviceOps(copiesIn, copiesOut, queued.tickets, StagingSlots::kSlots, queued.computations,
                                     reductionsOut, run.divisor > 0 ? run.divisor : size());
  queued.flags = world.asyncFlags_;
  queued.run = run;
  {
    const std::lock_guard<std::mutex> numbering(world.numbering_);
    queued.context = context(queued.run.what);  // numbers the call: last, once nothing can fail
  }
  world.pieceTickets_ = queued.tickets.back();
  world.computeTickets_ = computeTickets;
  return queued;
}

// Every piece is marked ready whatever happens, so that the copy stream's waits end: in order as each is done; all
// at once, with the last piece's ticket, once the job ended or was skipped (a world broken before it ran), after the
// world's state says why; the device's computations likewise asked, those not asked as computations of nothing.
// The stream compares tickets cyclically (as signed differences): a ready word past every ticket would be behind
// them there. Pieces run kPiecesInFlight at a time, piece p on lane p % kPiecesInFlight's tag, as the staged path's
// do, so that a rank whose call waits on the host (another PEERLINK_NET_ASYNC, a GPU without 64-bit stream memory
// operations) matches this one's messages.
void NetGroup::startQueued(QueuedCall queued) {
  NetWorld& world = world_;
  auto shared = std::make_shared<QueuedCall>(std::move(queued));
  world.submitAsync(
      [&world, shared] {
        const QueuedCall& q = *shared;
        const auto copiedIn = [&q](std::size_t p) {
          if (q.abandoned->load(std::memory_order_acquire)) {
            throw Error(ErrorCode::CudaError, "net " + q.context.run.name +
                                                  ": the caller could not queue the call's copies "
                                                  "(its error went to the caller)");
          }
          return q.flags->pieceCopied.value.load(std::memory_order_acquire) >= q.tickets[p];
        };
        // Each piece's own memory where the device computes: its tickets and its slot's landing room.
        std::vector<std::unique_ptr<AskedMemory>> asked(q.computations.size());
        const auto memoryOf = [&](std::size_t p) -> LocalMemory& {
          if (q.computations.empty()) return *world.asyncMemory_;
          const TicketRange& mine = q.computations[p];
          asked[p] = std::make_unique<AskedMemory>(*world.askedTickets_, q.kernel, mine.first, mine.count,
                                                   q.slots[p].landing, q.landingBytes, q.abandoned.get());
          return *asked[p];
        };
        const auto done = [&](std::size_t p) {
          if (!asked.empty()) {
            if (const std::size_t unasked = asked[p]->unasked(); unasked != 0) {
              throw Error(ErrorCode::Internal, "net " + q.context.run.name + ": piece " + std::to_string(p) +
                                                   " asked " + std::to_string(q.computations[p].count - unasked) +
                                                   " of the " + std::to_string(q.computations[p].count) +
                                                   " computations queued for it");
            }
            asked[p].reset();
          }
          q.flags->pieceReady.value.store(q.tickets[p], std::memory_order_release);
        };
        runCopiedPieces(q.context, q.run, q.pieces, q.slots, memoryOf, copiedIn, done);
      },
      std::nullopt,
      [&world, shared] {
        const QueuedCall& q = *shared;
        if (!q.computations.empty()) {
          const TicketRange& last = q.computations.back();
          world.askedTickets_->skipTo(last.first + last.count - 1);
        }
        q.flags->pieceReady.value.store(q.tickets.back(), std::memory_order_release);
      });
}

}  // namespace peerlink::net
