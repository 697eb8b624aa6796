// The host ring (host_ring.cu): all-reduce, reduce-scatter, all-gather, broadcast and reduce of a communicator with
// staged plans (GPUs without working P2P) as a ring pipelined through host memory, for the calls between the LL lines
// and the copy engines' plans. Each rank owns a ring area in pinned host memory that every rank's GPU reaches: per
// block, a few slots it stores into and the next rank loads from, a `ready` word (slots filled, stored by the owner)
// and a `free` word (slots emptied, stored by the next rank). So a slot's data flows as soon as it lands, block by
// block, and both directions of each GPU's link to the host carry data at once -- where the staged plans' steps wait
// for every rank between steps and each step uses one direction.
//
// The same kernel is the arena ring (arena_ring.hpp): calls on unregistered buffers of a world that spans processes,
// whose kernels may touch no peer's buffer, with the areas in the ranks' arenas in GPU memory instead. There the
// area a rank fills lies in the next rank's arena: its slot stores and ready words cross NVLink as stores, which
// need no round trip, the next rank loads its slots and polls its ready words in its own memory, and only the free
// words are polled across the link. Its blocks are larger (kArenaRingThreads) and its slots too (kArenaRingSlotBytes):
// a slot's fixed cost -- the fence that waits for the stores to land, the flag's trip -- is what bounds a block.
//
// Each block keeps, in its rank's GPU memory, what it needs between calls (HostRingBlockState): the calls it has
// run -- every rank runs the same calls, so a block's count is the same on every rank without any sequence number,
// and graph replays advance it as launches do -- and where its next fill and next receive lie among its slots. The
// words carry the call in their upper half: a block of call c stores ready = hostRingWord(c, k) once it has filled
// k slots of the call, and free = hostRingWord(c, k) once it has emptied k of the previous rank's; at the end of the
// call, run through or not, it stores free = hostRingWord(c + 1, 0): done with the call. Fills and receives go
// round the slots across calls, so a rank may run several small calls ahead of the next; a fill waits until the
// next rank has emptied what the slot last held (its occupant, the word of that fill: emptied, or its call done),
// except after a call the block stopped in or whose slots were another size, where every slot waits for the next
// rank done with that call. So a receiver never takes a slot of another call for one of its own: the sender reaches
// call c's words only once the receiver has emptied what it overwrites, and never passes a call it stopped in
// before the receiver is done with it. Both sides move their place by the call's whole count of slots
// (hostRingSlotsPerSlice), run through or stopped, so they agree on it for the calls after. A wait gives up at its
// deadline or the abort word and records the stall (step kStepHostRing); the block's call still ends as above, so a
// rank that stopped frees the call's slots for its previous rank's next call, and the ranks stay in step for the
// calls after it, as the other kernels' counters do; a slot the stopped rank never filled is never read.
//
// A call's grid and slot size are its own (hostRingShape): a block's region of a ring area is the same whatever
// the shape, so calls of different shapes never overlap, and blocks a smaller grid leaves out keep their count.
//
// The schedule. The data is cut into n chunks (chunk c: what the rank at ring position c ends up owning), each
// chunk into the grid's block parts, each block part into slices of a slot. For every slice a block runs the ring's
// actions a = first..last (hostRingActions): action 0 sends the rank's own input of chunk (p - 1); action a >= 1
// receives chunk (p - 1 - a) mod n from the previous rank, reduces it with the rank's input while a <= n - 1
// (finishing at a = n - 1, where the chunk is the rank's own: c = p), stores it into the output from a = n - 1, and
// sends it on unless a is the last. Every action moves chunk (p - 1 - a) mod n. An all-reduce runs a = 0 .. 2n-2, a
// reduce-scatter 0 .. n-1, an all-gather n-1 .. 2n-2 (its first action sends its own input, also into its output). What
// a rank sends at action a its next rank receives at a + 1, so both count the same slots. A broadcast or reduce is a
// chain along the ring from (to) the root, one action a slice (hostRingAction). An exchange (the all-to-all or
// send/recv of two ranks) is the all-gather's rounds without its own store: each rank sends its chunk (its input's
// block for the other, or its message) and stores only the one it receives.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "coll/partition.hpp"  // PEERLINK_HOST_DEVICE
#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {

constexpr int kHostRingMaxBlocks = 64;  ///< the largest grid (the words and regions of a ring area)
constexpr int kHostRingThreads = 256;   ///< threads of a block through host memory
/// Threads of a block of the arena ring. 2x H200, a 32 MiB all-reduce on 32 blocks of 256 KiB slots: 124 us with
/// 512 threads, 131 with 256 (bench/results/2026-11-30-h200x2-arena-ring/).
constexpr int kArenaRingThreads = 512;
constexpr int kRingMaxThreads = 512;  ///< the kernel's launch bound
constexpr int kHostRingSlots = 4;     ///< slots of a block in a ring area
/// The largest slot (a slice of a block) through host memory, and in the arenas. Larger slots pay a slot's fixed
/// cost less often; in GPU memory that is what bounds a block (2x H200, 32 blocks, all-reduce of 32 MiB: 192 us with
/// 64 KiB slots, 146 with 128, 124 with 256, 128 with 512).
constexpr std::size_t kHostRingMaxSlotBytes = std::size_t{64} << 10;
constexpr std::size_t kArenaRingSlotBytes = std::size_t{256} << 10;
/// A ring area's words: [block] ready at kHostRingWordStride-word spacing, then [block] free alike (each word on
/// its own 128-byte line: each is stored by one GPU and polled by another).
constexpr std::size_t kHostRingWordStride = 16;
constexpr std::size_t kHostRingWordsBytes = 2 * kHostRingMaxBlocks * kHostRingWordStride * sizeof(unsigned long long);
/// A block's region of a ring area whose slots are at most `maxSlotBytes`: its slots, whatever their size.
constexpr std::size_t ringRegionBytes(std::size_t maxSlotBytes) {
  return kHostRingSlots * maxSlotBytes;
}
/// A rank's ring area: the words, then [block] regions.
constexpr std::size_t ringAreaBytes(std::size_t maxSlotBytes) {
  return kHostRingWordsBytes + std::size_t{kHostRingMaxBlocks} * ringRegionBytes(maxSlotBytes);
}
constexpr std::size_t kHostRingRegionBytes = ringRegionBytes(kHostRingMaxSlotBytes);
constexpr std::size_t kHostRingAreaBytes = ringAreaBytes(kHostRingMaxSlotBytes);  ///< in host memory
constexpr std::size_t kArenaRingAreaBytes = ringAreaBytes(kArenaRingSlotBytes);   ///< in an arena

/// What a block keeps between its calls, in its rank's GPU memory (zeroed at creation; see the header).
struct HostRingBlockState {
  unsigned long long calls = 0;      ///< the calls it has run
  unsigned long long slotBytes = 0;  ///< the slot size of its last call
  unsigned long long stopped = 0;    ///< 1 where its last call stopped at a deadline or abort
  unsigned long long sent = 0;       ///< slots its calls fill, each call's whole count: the next fill's place
  unsigned long long received = 0;   ///< slots its calls empty, alike
  /// Per slot, the word (hostRingWord) of the fill it last held; 0: none.
  unsigned long long occupant[kHostRingSlots] = {};
};
/// Words of a rank's GPU memory its blocks' states take.
constexpr std::size_t kHostRingStateWords =
    kHostRingMaxBlocks * sizeof(HostRingBlockState) / sizeof(unsigned long long);

/// A ready or free word's value: `slots` slots of the block's call `call` (see the header).
PEERLINK_HOST_DEVICE constexpr unsigned long long hostRingWord(unsigned long long call, unsigned long long slots) {
  return (call << 32) + slots;
}
/// What the previous rank's ready word must reach before a block of call `call` that has emptied `emptied` slots
/// of the call takes the next.
PEERLINK_HOST_DEVICE constexpr unsigned long long hostRingReadyNeed(unsigned long long call,
                                                                    unsigned long long emptied) {
  return hostRingWord(call, emptied + 1);
}
/// What the next rank's free word must reach before a block fills its slot `slot` in its next call, of slots of
/// `slotBytes` (see the header): the slot's occupant emptied, or, after a call the block stopped in or whose slots
/// were another size, the next rank done with that call.
PEERLINK_HOST_DEVICE constexpr unsigned long long hostRingFirstFreeNeed(const HostRingBlockState& state,
                                                                        unsigned long long slotBytes, int slot) {
  const bool fresh = state.calls > 0 && (state.stopped != 0 || state.slotBytes != slotBytes);
  return fresh ? hostRingWord(state.calls, 0) : state.occupant[slot];
}

enum HostRingCollective : int {
  kHostRingAllReduce = 0,
  kHostRingReduceScatter = 1,
  kHostRingAllGather = 2,
  kHostRingBroadcast = 3,
  kHostRingReduce = 4,
  kHostRingExchange = 5,
};

/// One action of a slice (see the header).
struct HostRingAction {
  int chunk = 0;          ///< the chunk it moves
  bool receives = false;  ///< loads the previous rank's slot
  bool reduces = false;   ///< with the rank's input of the chunk
  bool finishes = false;  ///< the last reduction (avg divides)
  bool stores = false;    ///< into the rank's output
  bool sends = false;     ///< into the rank's own slot, for the next rank
};

/// Whether the collective is a chain from or to a root (one action a slice) rather than the ring's rounds.
PEERLINK_HOST_DEVICE constexpr bool hostRingIsChain(int collective) {
  return collective == kHostRingBroadcast || collective == kHostRingReduce;
}

/// The first and last action of a slice for a collective of `nranks` (see the header).
PEERLINK_HOST_DEVICE constexpr int hostRingFirstAction(int collective, int nranks) {
  return collective == kHostRingAllGather || collective == kHostRingExchange ? nranks - 1 : 0;
}
PEERLINK_HOST_DEVICE constexpr int hostRingLastAction(int collective, int nranks) {
  return hostRingIsChain(collective) ? 0 : (collective == kHostRingReduceScatter ? nranks - 1 : 2 * nranks - 2);
}

/// Action `a` of the rank at ring position `position` (see the header); `rootPosition`, the root's, for the chains:
/// a broadcast passes the data from the root along the ring (each rank stores it, all but the last pass it on), a
/// reduce gathers it towards the root (the rank after the root sends its input, each next adds its own, the root
/// adds its own last and finishes). Chains move one chunk, the whole buffer.
PEERLINK_HOST_DEVICE constexpr HostRingAction hostRingAction(int collective, int nranks, int position, int rootPosition,
                                                             int a) {
  HostRingAction action;
  if (hostRingIsChain(collective)) {
    // The rank's place along the chain: 0 first, nranks - 1 last.
    const int from = collective == kHostRingBroadcast ? rootPosition : rootPosition + 1;
    const int place = ((position - from) % nranks + nranks) % nranks;
    action.chunk = 0;
    action.receives = place > 0;
    action.reduces = action.receives && collective == kHostRingReduce;
    action.finishes = action.reduces && place == nranks - 1;
    action.stores = collective == kHostRingBroadcast || place == nranks - 1;
    action.sends = place < nranks - 1;
    return action;
  }
  action.chunk = ((position - 1 - a) % nranks + nranks) % nranks;
  const bool gathers = collective == kHostRingAllGather || collective == kHostRingExchange;
  action.receives = a > hostRingFirstAction(collective, nranks);
  action.reduces = action.receives && !gathers && a <= nranks - 1;
  action.finishes = action.reduces && a == nranks - 1;
  action.stores = a >= nranks - 1 && (collective != kHostRingExchange || action.receives);
  action.sends = a < hostRingLastAction(collective, nranks);
  return action;
}

/// The slots a rank fills and empties per slice: its actions' sends and receives, slice after slice alike, so a
/// block's places advance by these times its slices over a call.
struct HostRingSlots {
  int sends = 0;
  int receives = 0;
};
PEERLINK_HOST_DEVICE constexpr HostRingSlots hostRingSlotsPerSlice(int collective, int nranks, int position,
                                                                   int rootPosition) {
  HostRingSlots slots;
  for (int a = hostRingFirstAction(collective, nranks); a <= hostRingLastAction(collective, nranks); ++a) {
    const HostRingAction action = hostRingAction(collective, nranks, position, rootPosition, a);
    slots.sends += action.sends ? 1 : 0;
    slots.receives += action.receives ? 1 : 0;
  }
  return slots;
}

struct HostRingArgs {
  const void* input = nullptr;  ///< the rank's send buffer
  void* output = nullptr;       ///< its recv buffer
  /// Chunk c's elements: where they start in the input (read where the rank sends or reduces chunk c) and in the
  /// output (where it stores chunk c), and how many.
  unsigned long long inBegin[kCollMaxRanks] = {};
  unsigned long long outBegin[kCollMaxRanks] = {};
  unsigned long long chunkCount[kCollMaxRanks] = {};
  unsigned char* ownArea = nullptr;     ///< this rank's ring area (host memory): it fills the slots
  unsigned char* prevArea = nullptr;    ///< the previous rank's: this rank empties its slots
  HostRingBlockState* state = nullptr;  ///< this rank's, [kHostRingMaxBlocks] in its GPU's memory
  CollFailure* failure = nullptr;       ///< this rank's record (mapped host memory)
  const unsigned int* abort = nullptr;  ///< the communicator's abort word (mapped host memory), or null
  unsigned long long timeoutNs = 0;
  unsigned long long alignElements = 1;  ///< block parts start at multiples of this (16 bytes)
  unsigned long long slotBytes = 0;      ///< the call's slot (hostRingShape), a multiple of 16
  /// A block's region of the areas (ringRegionBytes of their largest slot): where block b's slots start.
  unsigned long long regionBytes = kHostRingRegionBytes;
  int collective = 0;          ///< a HostRingCollective
  int recordedCollective = 0;  ///< peerlink::Collective, for the failure record
  int nranks = 0;
  int position = 0;      ///< this rank's place in the ring
  int rootPosition = 0;  ///< the root's place (broadcast, reduce)
  int prev = 0;          ///< the previous and next rank (for the failure record)
  int next = 0;
  int blocks = 0;                  ///< the call's grid (hostRingShape)
  int threads = kHostRingThreads;  ///< a block's threads (at most kRingMaxThreads)
  int stallStep = kStepHostRing;   ///< the CollStep a stalled wait records: kStepHostRing or kStepArenaRing
};

/// Launches the ring for one rank on `stream` (its GPU current), args.blocks blocks of args.threads.
void launchHostRing(const HostRingArgs& args, CollType type, CollOp op, cudaStream_t stream,
                    const KernelLaunch& launch);

namespace detail {
void preloadHostRingKernels();  // host_ring.cu
}  // namespace detail

}  // namespace peerlink::kernels
