// A send/recv group across processes, one rank's plan (p2p_plan.hpp).
#include "coll/p2p_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/coll_kernels.cuh"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kSlotLines = kernels::kCollP2pLlSlotBytes / kernels::kCollLlLineBytes;
constexpr std::size_t kSlotAlignment = 256;

std::size_t linesOf(std::size_t bytes) {
  return (bytes + kernels::kCollLlLinePayload - 1) / kernels::kCollLlLinePayload;
}

// The non-empty calls of one direction with `peer`, in call order.
std::vector<std::size_t> directionCalls(const std::vector<P2pCall>& calls, int peer, bool sends) {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].isSend == sends && calls[i].peer == peer && calls[i].bytes > 0) indices.push_back(i);
  }
  return indices;
}

// Whether a direction's messages go in LL lines: few enough for a kernel's jobs whatever the other pairs
// do, each within LL's largest message, all of their lines within the pair's slot.
bool directionInLl(const std::vector<P2pCall>& calls, const std::vector<std::size_t>& indices, bool llAllowed) {
  if (!llAllowed || indices.empty() || indices.size() > kP2pLlMessagesPerPair) return false;
  std::size_t lines = 0;
  for (const std::size_t i : indices) {
    if (calls[i].bytes > kernels::kCollP2pLlMaxBytes) return false;
    lines += linesOf(calls[i].bytes);
  }
  return lines <= kSlotLines;
}

// A direction's messages in LL lines, each after the lines of the ones before it.
void placeLl(const std::vector<P2pCall>& calls, const std::vector<std::size_t>& indices, int peer,
             std::vector<P2pLlMessage>& out) {
  std::size_t lines = 0;
  for (const std::size_t i : indices) {
    out.push_back({i, peer, calls[i].bytes, lines});
    lines += linesOf(calls[i].bytes);
  }
}

// A direction's messages in pieces of at most a slot.
std::vector<P2pPiece> piecesOf(const std::vector<P2pCall>& calls, const std::vector<std::size_t>& indices, int peer,
                               std::size_t slotBytes) {
  std::vector<P2pPiece> pieces;
  for (const std::size_t i : indices) {
    for (std::size_t offset = 0; offset < calls[i].bytes; offset += slotBytes) {
      pieces.push_back({i, peer, offset, std::min(slotBytes, calls[i].bytes - offset)});
    }
  }
  return pieces;
}

}  // namespace

std::size_t p2pSlotBytes(int nranks, std::size_t windowBytes) {
  const std::size_t slot = windowBytes / static_cast<std::size_t>(std::max(1, nranks));
  return slot / kSlotAlignment * kSlotAlignment;
}

std::size_t p2pSlotOffset(int receiver, std::size_t slotBytes) {
  return static_cast<std::size_t>(receiver) * slotBytes;
}

std::vector<std::pair<std::size_t, std::size_t>> selfMessages(const std::vector<P2pCall>& calls, int rank) {
  const std::vector<std::size_t> sends = directionCalls(calls, rank, true);
  const std::vector<std::size_t> recvs = directionCalls(calls, rank, false);
  if (sends.size() != recvs.size()) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("rank {}: {} sends to itself and {} recvs from itself in one "
                                                     "group; they pair up in call order",
                                                     rank, sends.size(), recvs.size()));
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t k = 0; k < sends.size(); ++k) {
    if (calls[sends[k]].bytes != calls[recvs[k]].bytes) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("rank {}: its send {} to itself has {} bytes, the matching recv {}", rank, k,
                              calls[sends[k]].bytes, calls[recvs[k]].bytes));
    }
    pairs.emplace_back(sends[k], recvs[k]);
  }
  return pairs;
}

P2pPlan planPointToPoint(int rank, int nranks, const std::vector<P2pCall>& calls, std::size_t slotBytes,
                         bool llAllowed) {
  if (slotBytes == 0) throw Error(ErrorCode::Internal, "planPointToPoint: no window slot");
  for (const P2pCall& call : calls) {
    if (call.peer < 0 || call.peer >= nranks) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("rank {}: a {} with peer {}, outside ranks 0..{}", rank,
                                                       call.isSend ? "send" : "recv", call.peer, nranks - 1));
    }
  }
  P2pPlan plan;
  plan.selfCopies = selfMessages(calls, rank);
  std::vector<std::vector<P2pPiece>> sendPieces(static_cast<std::size_t>(nranks));
  std::vector<std::vector<P2pPiece>> recvPieces(static_cast<std::size_t>(nranks));
  std::size_t rounds = 0;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    const auto index = static_cast<std::size_t>(peer);
    const std::vector<std::size_t> sends = directionCalls(calls, peer, true);
    const std::vector<std::size_t> recvs = directionCalls(calls, peer, false);
    if (directionInLl(calls, sends, llAllowed)) {
      placeLl(calls, sends, peer, plan.llSends);
      plan.llMask |= 1u << peer;
    } else {
      sendPieces[index] = piecesOf(calls, sends, peer, slotBytes);
    }
    if (directionInLl(calls, recvs, llAllowed)) {
      placeLl(calls, recvs, peer, plan.llRecvs);
      plan.llMask |= 1u << peer;
    } else {
      recvPieces[index] = piecesOf(calls, recvs, peer, slotBytes);
    }
    rounds = std::max({rounds, sendPieces[index].size(), recvPieces[index].size()});
  }
  plan.rounds.resize(rounds);
  for (std::size_t j = 0; j < rounds; ++j) {
    P2pRound& round = plan.rounds[j];
    for (int peer = 0; peer < nranks; ++peer) {
      const auto index = static_cast<std::size_t>(peer);
      if (j < sendPieces[index].size()) {
        round.sends.push_back(sendPieces[index][j]);
        round.mask |= 1u << peer;
      }
      if (j < recvPieces[index].size()) {
        round.recvs.push_back(recvPieces[index][j]);
        round.mask |= 1u << peer;
      }
    }
  }
  return plan;
}

}  // namespace peerlink::coll
