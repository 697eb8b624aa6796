// Send/recv chunks through the host stages (staged_p2p.hpp).
#include "coll/staged_p2p.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// A pair's chunks, in order: (call index, offset, bytes).
struct Chunk {
  std::size_t call = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

}  // namespace

std::vector<StagedP2pOp> stagedP2pOps(const std::vector<P2pCall>& calls, int rank, std::size_t slotBytes) {
  if (slotBytes == 0 || slotBytes % 16 != 0) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("staged send/recv: slots of {} bytes", slotBytes));
  }
  std::vector<StagedP2pOp> ops;
  // Messages to itself: the send's data into its recv's buffer.
  for (const auto& [send, recv] : selfMessages(calls, rank)) {
    StagedP2pOp op;
    op.kind = StagedP2pOp::Kind::Copy;
    op.peer = rank;
    op.call = recv;
    op.from = send;
    op.bytes = calls[send].bytes;
    ops.push_back(op);
  }
  // Each other pair's messages, in call order, cut into chunks of at most a slot.
  std::map<int, std::vector<Chunk>> sends;
  std::map<int, std::vector<Chunk>> recvs;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const P2pCall& call = calls[i];
    if (call.peer == rank) continue;
    std::vector<Chunk>& chunks = (call.isSend ? sends : recvs)[call.peer];
    for (std::size_t offset = 0; offset < call.bytes; offset += slotBytes) {
      chunks.push_back({i, offset, std::min(slotBytes, call.bytes - offset)});
    }
  }
  std::size_t rounds = 0;
  for (const auto* side : {&sends, &recvs}) {
    for (const auto& [peer, chunks] : *side) rounds = std::max(rounds, chunks.size());
  }
  for (std::size_t k = 0; k < rounds; ++k) {
    for (const auto& [side, kind] :
         {std::make_pair(&sends, StagedP2pOp::Kind::Send), std::make_pair(&recvs, StagedP2pOp::Kind::Recv)}) {
      for (const auto& [peer, chunks] : *side) {
        if (k >= chunks.size()) continue;
        StagedP2pOp op;
        op.kind = kind;
        op.peer = peer;
        op.call = chunks[k].call;
        op.offset = chunks[k].offset;
        op.bytes = chunks[k].bytes;
        op.slot = static_cast<int>(k % 2);
        op.firstOfPair = k == 0;
        ops.push_back(op);
      }
    }
  }
  return ops;
}

std::size_t stagedP2pSlotOffset(int receiver, int slot, std::size_t slotBytes) {
  return (static_cast<std::size_t>(receiver) * 2 + static_cast<std::size_t>(slot)) * slotBytes;
}

}  // namespace peerlink::coll
