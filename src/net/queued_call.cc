// NetGroup's queued calls (net_world.hpp: queuedFits, prepareQueued, startQueued): a call's pieces, their pinned
// slots and tickets, the device side the caller queues, and the job on the progress thread that runs the pieces'
// messages on the host as the copy stream brings them in.
#include <algorithm>

#include "net/net_path.hpp"
#include "net/net_world.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {

// A queued call reduces on the host: where the staged path would reduce on the GPU (pieces of larger reductions),
// the call waits on the host instead -- its time is then its reductions', and a GPU makes them faster.
bool NetGroup::queuedFits(const NetCall& call) const {
  const NetOptions& options = world_.options_;
  if (!options.asyncCalls || options.path != NetPath::Staged || call.count == 0 ||
      call.collective == Collective::SendRecv) {
    return false;
  }
  if (!world_.stagedOnDevice_) return true;
  const std::size_t step = pieceElementsOf(options.chunkBytes, call.type);
  const coll::Plan first = callPlan(call, size(), std::min(call.count, step));
  if (largestReductionBytes(first) == 0) return true;
  return options.reduce == NetReduce::Auto &&
         reducesOnHost(first, (call.count + step - 1) / step, options.gpuReduceMinBytes);
}

QueuedCall NetGroup::prepareQueued(const NetCall& call) {
  NetWorld& world = world_;
  checkCall(call, size(), me_);
  if (const std::string broken = world.brokenBy(); !broken.empty()) throw world.brokenError(broken);
  const std::size_t elementSize = dataTypeSize(call.type);
  const std::size_t step = pieceElementsOf(world.options_.chunkBytes, call.type);
  QueuedCall queued;
  const std::size_t pieces = (call.count + step - 1) / step;
  for (std::size_t p = 0; p < pieces; ++p) {
    CallPiece& piece = queued.pieces.emplace_back(callPiece(call, size(), me_, p, step));
    piece.atCopyOut = takeLocalCopies(piece.plan, me_);
  }
  const CallPiece& largest = queued.pieces.front();
  // The slots' earlier calls are done with them once the copy stream reached what is queued now.
  try {
    world.queuedSlots_.reserve(largest.inputElements * elementSize, largest.outputElements * elementSize,
                               largest.scratchElements * elementSize, world.options_.timeout);
  } catch (const Error& error) {
    // This rank numbers no call now where its peers do: its later calls could not match theirs.
    world.breakWith(error.what());
    throw;
  }
  std::vector<std::vector<SlotCopy>> copiesIn, copiesOut;
  for (std::size_t p = 0; p < pieces; ++p) {
    const StagingSlots::Slot slot = world.queuedSlots_.slot(p % StagingSlots::kSlots);
    queued.slots.push_back(slot);
    copiesIn.push_back(copiesIntoSlot(queued.pieces[p], slot, elementSize));
    copiesOut.push_back(copiesOutOfSlot(queued.pieces[p], slot, elementSize));
    queued.tickets.push_back(world.pieceTickets_ + 1 + p);
  }
  queued.deviceOps = queuedDeviceOps(copiesIn, copiesOut, queued.tickets, StagingSlots::kSlots);
  queued.flags = world.asyncFlags_;
  queued.run = {call.type, call.op, call.avgDivisor, collectiveName(call.collective)};
  queued.context = context(queued.run.what);  // numbers the call: last, once nothing can fail
  world.pieceTickets_ = queued.tickets.back();
  return queued;
}

// Every piece is marked ready whatever happens, so that the copy stream's waits end: in order as each is done; all
// at once, with the last piece's ticket, once the job ended or was skipped (a world broken before it ran), after the
// world's state says why. The stream compares tickets cyclically (as signed differences): a ready word past every
// ticket would be behind them there. Piece p uses lane p % kPiecesInFlight's tag, as the staged path's pieces do, so
// that a rank whose call waits on the host (another PEERLINK_NET_ASYNC, a GPU without 64-bit stream memory
// operations) matches this one's messages.
void NetGroup::startQueued(QueuedCall queued) {
  NetWorld& world = world_;
  auto shared = std::make_shared<QueuedCall>(std::move(queued));
  world.submitAsync(
      [&world, shared] {
        const QueuedCall& q = *shared;
        for (std::size_t p = 0; p < q.pieces.size(); ++p) {
          runCopiedPiece(q.context, q.run, q.pieces[p], q.slots[p], *world.asyncMemory_, p % kPiecesInFlight, [&q, p] {
            if (q.abandoned->load(std::memory_order_acquire)) {
              throw Error(ErrorCode::CudaError, "net " + q.context.run.name +
                                                    ": the caller could not queue the call's copies "
                                                    "(its error went to the caller)");
            }
            return q.flags->pieceCopied.value.load(std::memory_order_acquire) >= q.tickets[p];
          });
          q.flags->pieceReady.value.store(q.tickets[p], std::memory_order_release);
        }
      },
      std::nullopt,
      [shared] { shared->flags->pieceReady.value.store(shared->tickets.back(), std::memory_order_release); });
}

}  // namespace peerlink::net
