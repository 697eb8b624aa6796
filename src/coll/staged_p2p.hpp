// Send/recv across processes on a communicator that runs staged plans (comm_launch_plan.hpp): a rank knows only its
// own calls of a group, so each pair moves its data alone, through the sender's host stage: the sender copies a
// chunk into one of two slots it keeps for the receiver and says so (the pair's ready count), the receiver copies
// it out and says so (the free count), and the sender refills a slot only once the chunk before the last is out.
// Both sides cut a pair's messages, in call order, into the same chunks. Every rank runs its ops in one order --
// chunk k of every send, then chunk k of every recv, for k = 0, 1, ... -- so a wait only ever needs a peer's
// earlier round, and no group can wait on itself. Pure: the launcher (comm_launch_p2p_staged.cc) turns the ops
// into plan_p2p.cu's waits and signals around copies.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/p2p_plan.hpp"

namespace peerlink::coll {

struct StagedP2pOp {
  enum class Kind {
    Send,  ///< await the slot's free count, copy the chunk into it, raise the ready count
    Recv,  ///< await the ready count, copy the chunk out of the sender's slot, raise the free count
    Copy,  ///< a message to itself: the send's chunk straight into the recv's buffer
  };
  Kind kind = Kind::Send;
  int peer = 0;
  std::size_t call = 0;    ///< the index of this rank's call the chunk belongs to (Copy: the recv)
  std::size_t from = 0;    ///< Copy: the index of the matching send
  std::size_t offset = 0;  ///< of the chunk, in bytes, in its call's buffer
  std::size_t bytes = 0;
  int slot = 0;              ///< 0 or 1: which of the pair's two slots
  bool firstOfPair = false;  ///< the pair's first chunk in this group: the sender waits until every earlier one is out
};

/// The ops of rank `rank`'s group (its calls in order) with slots of `slotBytes` (a multiple of 16, > 0). Sends to
/// and recvs from itself pair up in order (the k-th send with the k-th recv; Error(InvalidUsage) when their counts
/// or sizes differ). Messages of 0 bytes have no op.
std::vector<StagedP2pOp> stagedP2pOps(const std::vector<P2pCall>& calls, int rank, std::size_t slotBytes);

/// Where a sender's stage keeps the slot for `receiver`: (receiver * 2 + slot) * slotBytes.
std::size_t stagedP2pSlotOffset(int receiver, int slot, std::size_t slotBytes);

}  // namespace peerlink::coll
