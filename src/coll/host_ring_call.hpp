// Which calls of a communicator with staged plans run as the host ring (kernels/host_ring.cuh), and each rank's
// part of such a call: its place in the ring and the chunks it moves. Pure: the CPU tests run the ring's schedule
// over these on the host.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kernels/host_ring.cuh"
#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// The bytes of a call's whole buffer, as PEERLINK_COLL_HOST_RING measures it: the all-gather's output, the
/// reduce-scatter's and all-to-all's input (`count` is a rank's part there), both messages of a send/recv exchange,
/// the others' buffer.
std::size_t hostRingCallBytes(Collective collective, std::size_t count, DataType type, int nranks);

/// How much larger a broadcast or reduce the host ring takes than the others: its chain loads each GPU's link to the
/// host one way only, where the ring's rounds load both, so its threads keep pace with the copy engines' plans longer
/// (2x H200, 2 ranks: ahead of the plans at every size measured, to 64 MiB: 1.52 ms against 1.58 there, where the
/// all-reduce's ring fell behind them from 16 MiB).
constexpr std::size_t kHostRingChainFactor = 8;

/// The largest call (hostRingCallBytes) of `collective` on `nranks` ranks the host ring takes where
/// PEERLINK_COLL_HOST_RING says `maxBytes`: that; kHostRingChainFactor times it for a broadcast or reduce; for an
/// all-to-all or send/recv that of two ranks only (the exchange: with more, each rank's blocks go to different ranks,
/// which a ring's rounds would carry over several hops).
std::size_t hostRingLimitBytes(Collective collective, std::size_t maxBytes, int nranks);

/// Whether a call of `count` elements of `type` runs as the host ring on `nranks` ranks: too large for LL lines
/// (plannedLineBytes) and within hostRingLimitBytes.
bool runsAsHostRing(Collective collective, std::size_t count, DataType type, int nranks, std::size_t maxBytes);

/// A host ring call's grid and slot size (the kernel's blocks: kHostRingSlots slots of `slotBytes` each).
struct HostRingShape {
  int blocks = 0;
  std::size_t slotBytes = 0;
};

/// The shape `name` names ("64x64K": blocks x slot, at most kHostRingMaxBlocks blocks and slots of 1 KiB to
/// `maxSlotBytes`), or nullopt for AUTO; throws Error(InvalidInput) naming `what` ("host ring") and giving `example`
/// for anything else.
std::optional<HostRingShape> ringShapeNamed(const std::string& name, std::size_t maxSlotBytes, const std::string& what,
                                            const std::string& example);
/// The shape PEERLINK_COLL_HOST_RING_SHAPE names (slots of at most kHostRingMaxSlotBytes).
std::optional<HostRingShape> hostRingShapeNamed(const std::string& name);

/// The shape of a host ring call of `collective`: `chosen` where given, else the one measured fastest for it (2x H200,
/// bench/results/2026-11-30-h200x2-host-ring-shapes/): 64 blocks of 64 KiB slots for a chain (broadcast, reduce),
/// a one-way stream that more blocks and larger slots carry closer to the link's speed (50 GB/s from 32 MiB where
/// 32 x 32 KiB reached 44); 32 of 64 KiB for a ring's rounds, which load both ways of the link at once (64 blocks
/// no faster; 64 KiB slots 8 % faster than 32 from 4 MiB, even below). Either way at most `maxBlocks` blocks (the
/// communicator's grid cap: a GPU's SMs shared among the ranks on it, whose ring kernels spin on each other and must
/// all be resident at once -- 8 ranks on one H200 at 64 blocks each never were, and timed out).
HostRingShape hostRingShape(Collective collective, const std::optional<HostRingShape>& chosen, int maxBlocks);

/// One of a rank's calls in a send/recv group: a send to `peer` or a receive from it.
struct ExchangeSide {
  bool isSend = false;
  int peer = 0;
  std::size_t count = 0;
  DataType type = DataType::F32;
};

/// Whether rank `rank`'s calls of a send/recv group are a two-rank exchange: two ranks, one send to the other and one
/// receive from it, of one count and type, beside any sends to and receives from itself (which the rank copies
/// itself). The other rank's calls of a matched group (its receive is this rank's send) give the same answer whatever
/// it sends itself, so each rank may decide from its own calls alone, as across processes it must.
bool isTwoRankExchange(const std::vector<ExchangeSide>& calls, int rank, int nranks);

/// `calls` without those of rank `rank` with itself: what a two-rank exchange is judged on and carries.
std::vector<ExchangeSide> withOtherRanks(const std::vector<ExchangeSide>& calls, int rank);

/// Whether rank `rank`'s calls of a send/recv group run as the host ring's exchange: a two-rank exchange
/// (isTwoRankExchange) within PEERLINK_COLL_HOST_RING (`maxBytes`, both messages counted).
bool runsAsHostRingExchange(const std::vector<ExchangeSide>& calls, int rank, int nranks, std::size_t maxBytes);

/// What a rank of such a call copies from its input to its output itself, outside the ring: the all-to-all's own
/// block (elements from `inBegin` to `outBegin`, `count` of them), which the exchange does not carry. Other
/// collectives: nothing (count 0).
struct HostRingOwnCopy {
  std::size_t inBegin = 0;
  std::size_t outBegin = 0;
  std::size_t count = 0;
};
HostRingOwnCopy hostRingOwnCopy(Collective collective, std::size_t count, int rank);

/// Rank `rank`'s ring arguments for such a call, around the ring `order` (chooseRing: order[p] is the rank at
/// position p): its position and neighbours, the position of `root` (broadcast, reduce), and chunk c's offsets and
/// count -- chunk c is what the rank at position c owns at the end: a shard of the all-reduce (partitionRange,
/// 16-byte aligned), rank order[c]'s block of the reduce-scatter's input or the all-gather's output; a broadcast's
/// or reduce's one chunk is the whole buffer; an all-to-all's (two ranks) chunk c is what rank order[c] sends, its
/// input's block for the other rank, which the other stores as its output's block order[c]; a send/recv exchange's
/// chunk c is rank order[c]'s message (`count`: a message's; input the send buffer, output the receive buffer).
/// Pointers, the failure record and the deadline are the caller's. The shape's grid and slot are `shape`'s.
kernels::HostRingArgs hostRingCallArgs(Collective collective, std::size_t count, DataType type,
                                       const std::vector<int>& order, int rank, int root, const HostRingShape& shape);

}  // namespace peerlink::coll
