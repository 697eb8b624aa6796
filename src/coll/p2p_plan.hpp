// A send/recv group of a world that spans processes, as one rank runs it knowing only its own calls. Each
// direction of a pair -- the sends from r to p, which the recvs on p from r match one for one in call order --
// goes one of two ways, decided from that direction's messages alone, which both ends know:
// - in LL lines (coll_p2p_ll.cu): at most kP2pLlMessagesPerPair messages whose lines fit the pair's slot, so a
//   rank's LL jobs never pass a kernel's job limit whatever its other pairs do;
// - through the sender's staging window: each message in pieces of a window slot, piece j of every direction
//   in round j, a copy kernel per round with the peers that have a piece then (the receiver pulls the piece
//   from the sender's window slot for it; the kernel's barriers keep the sender from refilling the slot too
//   early). A direction's pieces are cut from its messages alone, so both ends count the same rounds.
// Every rank runs its LL kernel first, then its rounds in order: the same order everywhere, so no two ranks
// wait for each other's later kernels.
#pragma once

#include <cstddef>
#include <vector>

namespace peerlink::coll {

/// A direction of a pair in LL lines carries at most this many messages (kCollMaxJobs / (kCollMaxRanks - 1)).
constexpr std::size_t kP2pLlMessagesPerPair = 2;

/// One call of the group, as the rank made it, in call order.
struct P2pCall {
  bool isSend = false;
  int peer = 0;
  std::size_t bytes = 0;
};

/// Part of a message: `bytes` at `offset` of call `call`'s buffer.
struct P2pPiece {
  std::size_t call = 0;
  int peer = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

/// A message in LL lines: call `call`, its lines at `lineOffset` of the pair's slot.
struct P2pLlMessage {
  std::size_t call = 0;
  int peer = 0;
  std::size_t bytes = 0;
  std::size_t lineOffset = 0;
};

struct P2pRound {
  unsigned mask = 0;            ///< the peers this round's kernel meets
  std::vector<P2pPiece> sends;  ///< copied into the window slot for their peer before the kernel
  std::vector<P2pPiece> recvs;  ///< pulled from the peer's window slot for this rank by the kernel
};

struct P2pPlan {
  unsigned llMask = 0;  ///< the peers of the LL kernel (either direction in LL lines)
  std::vector<P2pLlMessage> llSends;
  std::vector<P2pLlMessage> llRecvs;
  std::vector<P2pRound> rounds;
  /// A message to itself: (send call, recv call), the k-th send to itself with the k-th recv from itself.
  std::vector<std::pair<std::size_t, std::size_t>> selfCopies;
};

/// The messages of `calls` that rank `rank` sends itself, as (send call, recv call): the k-th non-empty send to
/// itself with the k-th non-empty recv from itself (empty ones are no messages, as in NCCL). Error(InvalidUsage)
/// where the counts or a pair's sizes differ.
std::vector<std::pair<std::size_t, std::size_t>> selfMessages(const std::vector<P2pCall>& calls, int rank);

/// Rank `rank`'s plan of a group of `calls` in a world of `nranks`, windows cut into slots of `slotBytes` per
/// destination; `llAllowed`: the protocol may use LL lines (not PEERLINK_PROTO=SIMPLE). Error(InvalidUsage) for
/// a peer out of range, or sends and recvs to itself that do not pair up.
P2pPlan planPointToPoint(int rank, int nranks, const std::vector<P2pCall>& calls, std::size_t slotBytes,
                         bool llAllowed);

/// The slot of a sender's window that holds what it sends `receiver`: its offset and size, for `nranks`
/// ranks sharing a window of `windowBytes`.
std::size_t p2pSlotBytes(int nranks, std::size_t windowBytes);
std::size_t p2pSlotOffset(int receiver, std::size_t slotBytes);

}  // namespace peerlink::coll
