// The collectives' kernels as host code sees them: argument structs (plain data, passed by value as kernel
// arguments, so a call needs no host-to-device copy and is capturable in a CUDA graph) and launch
// functions. Kernel bodies live in coll_ll.cu (LL one-shot, every collective's small messages), coll_reduce.cu
// (direct-read reductions: two-shot, one-shot, reduce-scatter), coll_copy.cu (broadcast, all-gather, all-to-all,
// send/recv), coll_push_phased.cu (the push reduction), coll_ring_broadcast.cu and coll_ring_reduce.cu (the rings).
// src/coll/ builds the arguments from a matched set of calls (comm_launch.cc, comm_launch_large.cc).
//
// Peer pointers. Every pointer in these structs is an address the launching GPU can dereference: its own
// memory, or a peer's reached through peer access (one process) -- later an IPC/cuMem mapping of another
// process's registered buffer. The kernels never care which.
//
// Sequence numbers. Each rank keeps counters in its own device memory (CollRankSync): collectives done,
// send/recv sets done with each peer, kernels launched. Every kernel reads them when it starts and its
// last block advances them when it ends, so a CUDA graph replaying the same arguments still uses fresh
// values, and flags never need resetting: a flag only grows, and a wait is "flag >= this call's number".
// All ranks run the same collectives in the same order (the communicator matches calls), so their
// collective counters agree; the pair counters agree because both sides of a pair join the same sets.
// Calls of one rank must therefore be stream-ordered among themselves (one stream, or streams the caller
// orders), as NCCL requires of a communicator.
//
// Flags. Each rank owns a flag area: [phase][block][from rank] 8-byte words. Block b of rank r signals
// block b of rank p by a release store into p's area at [phase][b][r] and waits on its own [phase][b][p];
// so no grid-wide barrier is needed, and every rank launches the same grid for a call.
//
// Deadlines. Every spin loop gives up after timeoutNs (global timer), or once the communicator's abort word is
// set (a lost peer, or the application's abort), and writes a CollFailure record into mapped host memory (the
// host reads it without synchronizing), then finishes: a stalled peer is an error naming the rank and the
// step, never a hang. Counters advance on failure too, so ranks stay in
// step and the communicator stays usable once the late kernels have finished.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace peerlink::kernels {

struct KernelLaunch;

constexpr int kCollMaxRanks = 8;                               ///< ranks of one communicator
constexpr int kCollMaxBlocks = 256;                            ///< blocks of one collective kernel
constexpr int kCollPhases = 10;                                ///< flag phases (CollPhase)
constexpr int kCollMaxJobs = 16;                               ///< copy jobs of one kernel
constexpr std::size_t kCollLlMaxBytes = std::size_t{1} << 20;  ///< largest LL one-shot message per rank
constexpr std::size_t kCollLlSlotBytes = 2 * kCollLlMaxBytes;  ///< LL lines: 16 bytes per 8 of payload
constexpr unsigned char kCollLlSlotShift = 21;                 ///< log2(kCollLlSlotBytes)
static_assert(std::size_t{1} << kCollLlSlotShift == kCollLlSlotBytes, "the LL slot's shift");
constexpr std::size_t kCollLl128LineBytes = 128;    ///< an LL128 line (coll_ll128.cu)
constexpr std::size_t kCollLl128LinePayload = 120;  ///< its payload; the rest is the flag
constexpr int kCollLl128LanesPerLine = 8;           ///< a warp's lanes that store one LL128 line
constexpr std::size_t kCollLl128SlotBytes =         ///< LL128 lines of a largest LL message
    (kCollLlMaxBytes + kCollLl128LinePayload - 1) / kCollLl128LinePayload * kCollLl128LineBytes;
/// An LL line (ll_line.cuh): 16 bytes carrying 8 of payload with their flag. Host code that places messages in
/// lines counts with these (coll_p2p_ll.cu asserts that ll_line.cuh agrees).
constexpr std::size_t kCollLlLineBytes = 16;
constexpr std::size_t kCollLlLinePayload = 8;
/// The most a rank sends in one send/recv group carried in LL lines (coll_p2p_ll.cu), and one sender's slot
/// of those lines at a receiver.
constexpr std::size_t kCollP2pLlMaxBytes = std::size_t{256} << 10;
constexpr std::size_t kCollP2pLlSlotBytes = 2 * kCollP2pLlMaxBytes;
constexpr std::size_t kCollPushSlotBytes = std::size_t{16} << 20;   ///< one sender's stage slot at a rank
constexpr std::size_t kCollRingStageBytes = std::size_t{32} << 20;  ///< a rank's ring reduce stage (from prev)
/// The largest chunk of the chains of stores (collRingChunkBytes) and small reduce grids per round.
constexpr std::size_t kCollRingMaxChunkBytes = std::size_t{64} << 10;
/// The pipelined kernels (rings; the push reduction's halves) flag round k of call c as (c << kCollRoundBits) + k + 1.
constexpr int kCollRoundBits = 20;
/// The ring reduce's stage slots per block: round k uses slot k mod kCollRingSlots.
constexpr int kCollRingSlots = 4;

/// The ring reduce's credit across calls (colldev::stageCredit): a block's previous call had rounds 0..e (e,
/// the last, carries only the end marker), and `credit` = (call << kCollRoundBits) + e + 1. Returns the free
/// flag value at which the next rank, which frees its rounds in order, left slot `slot` (< kCollRingSlots)
/// free: that of the call's last round on the slot, e - (e - slot) mod kCollRingSlots; a slot the call did
/// not use was last used before it, so all of the call (the credit).
// clang-format off
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr unsigned long long collRingSlotReleased(unsigned long long credit, unsigned long long slot) {
  const unsigned long long rounds = credit & ((1ull << kCollRoundBits) - 1);
  return slot >= rounds ? credit : credit - (rounds - 1 - slot) % kCollRingSlots;
}

/// The free flag value that says "every round of call `call` read" (colldev::releaseStage): the largest a round
/// of it can give (a block has fewer than 2^kCollRoundBits - 1 rounds, collRingReduceRoundsFit), below the next
/// call's first.
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr unsigned long long collRingStageReleased(unsigned long long call) {
  return (call << kCollRoundBits) | ((1ull << kCollRoundBits) - 1);
}

/// The ring reduce's claim counter (colldev::claimChunk, at a chain's first rank): the call's tag (its sequence
/// number's low 40 bits) above the next chunk to claim in the low kCollRingClaimIndexBits.
constexpr int kCollRingClaimIndexBits = 24;
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr unsigned long long collRingClaimTag(unsigned long long seq) {
  return seq & ((1ull << (64 - kCollRingClaimIndexBits)) - 1);
}

/// How many of its `chunks` a chain has claimed in the call tagged `tag`, from its counter word `seen`: none
/// under an earlier call's tag (its first claim of this call replaces it), all under a later call's (it has
/// moved on); at most `chunks` (blocks that find the chain done still count up).
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr unsigned long long collRingClaimed(unsigned long long seen, unsigned long long tag, unsigned long long chunks) {
  const unsigned long long seenTag = seen >> kCollRingClaimIndexBits;
  const unsigned long long index = seen & ((1ull << kCollRingClaimIndexBits) - 1);
  return seenTag == tag ? (index < chunks ? index : chunks) : (seenTag < tag ? 0 : chunks);
}

/// The bound on the chunks a chain may claim while keeping pace (colldev::keepPace): `slack` beyond the least
/// of the other chains' `claimed` (of their `chunks`), leaving out those that have claimed everything; none
/// (kCollRingEnd) if all have. `*laggard` gets the least advanced chain's index (-1: none).
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr unsigned long long collRingPaceLimit(const unsigned long long* claimed, const unsigned long long* chunks,
                                               int count, unsigned long long slack, int* laggard) {
  unsigned long long least = ~0ull;
  *laggard = -1;
  for (int c = 0; c < count; ++c) {
    if (claimed[c] < chunks[c] && claimed[c] < least) {
      least = claimed[c];
      *laggard = c;
    }
  }
  return *laggard < 0 ? ~0ull : least + slack;
}
// clang-format on
constexpr std::size_t kCollFlagBytes =  ///< one rank's flag area
    sizeof(unsigned long long) * kCollPhases * kCollMaxBlocks * kCollMaxRanks;

enum CollPhase : int {
  kPhaseStart = 0,
  kPhaseEnd = 1,
  kPhaseP2pStart = 2,
  kPhaseP2pEnd = 3,
  kPhasePushReady = 4,  ///< push reduction: a half's data is in the receiver's stage
  kPhaseUnused = 5,     ///< free (the other phases keep their numbers)
  kPhaseRingReady = 6,  ///< ring broadcast / reduce: a round's chunk is in the receiver's output / stage
  /// Ring reduce: the receiver has read a round of its stage (value (call << kCollRoundBits) + round + 1), or
  /// every round of a call (the call's largest value, colldev::releaseStage, at each block's end).
  kPhaseRingFree = 7,
  /// Not flags. Ring reduce, [block][slot]: the chunk the previous rank stored into this rank's stage slot
  /// (or kCollRingEnd), written before that round's ready flag.
  kPhaseRingChunk = 8,
  /// Not flags. Ring reduce, at a chain's first rank, [chain][0]: the call's tag and the next chunk to claim.
  kPhaseRingClaim = 9,
};
/// Bits of CollRankSync::ringStage that hold the grid (at most kCollMaxBlocks).
constexpr int kCollRingStageGridBits = 9;
static_assert(kCollMaxBlocks < (1 << kCollRingStageGridBits), "a grid fits its bits");
/// The chunk number a ring reduce block passes on when its chain has no more chunks for it.
constexpr unsigned long long kCollRingEnd = ~0ull;

/// Where a kernel stopped, in a CollFailure.
enum CollStep : int {
  kStepStartBarrier = 1,
  kStepEndBarrier = 2,
  kStepLlData = 3,
  kStepPushData = 4,
  kStepRingData = 6,
  kStepRingFree = 7,
  kStepRingStart = 8,     ///< a ring block's start: waiting for the next rank to start (colldev::neighborStart)
  kStepRingEnd = 9,       ///< a ring kernel's end: waiting for every rank to have started (colldev::awaitEveryStart)
  kStepRingStage = 10,    ///< a ring reduce's start: waiting for the next rank to release its stage, or a slot of it
  kStepRingPace = 11,     ///< a ring reduce chain's first rank: waiting for the other chains to catch up
  kStepPlanBarrier = 12,  ///< a staged plan: waiting for a peer to end a step (plan_barrier.cuh)
  kStepPlanCallMismatch = 13,  ///< a staged plan: a peer's call differs from this rank's (plan_barrier.cuh)
  kStepPlanSendRecv = 14,      ///< send/recv through the host stages: waiting for a peer's chunk or slot (plan_p2p.cuh)
  kStepHostRing = 15,   ///< the host ring: waiting for the previous rank's slot or the next rank's (host_ring.cuh)
  kStepArenaRing = 16,  ///< the arena ring: the same waits, its areas in the ranks' arenas (arena_ring.hpp)
};
/// "start barrier", "end barrier", "LL data", "push data", "ring data", "ring stage free",
/// "ring start", "ring end", "ring stage", "ring pace", "plan step barrier", "plan call check", "staged send/recv",
/// "host ring", "arena ring"
const char* collStepName(int step) noexcept;

/// Reduction element types and operations as the kernels number them (the same order as peerlink::DataType
/// and peerlink::ReduceOp).
enum CollType : int { kF64, kF32, kF16, kBf16, kI32, kU32, kI64, kU64, kI8, kU8 };
enum CollOp : int { kSum, kProd, kMin, kMax, kAvg };

/// Per-rank counters in the rank's own device memory, zeroed at creation, in kCollMaxBlocks copies. Between
/// kernels every copy holds the same values; block b of a kernel reads copy b at its start, and at its end
/// writes copy b (which it has read) and, block 0, the copies past the grid (which no block of it reads) --
/// so no block can see a count its own kernel already advanced (a block may start after another has
/// finished), and no block needs to know which finishes last. Copy-major arrays, so a warp writes
/// neighbouring copies in one transaction.
struct CollRankSync {
  unsigned long long collSeq[kCollMaxBlocks];                 ///< collectives finished by this rank
  unsigned long long launches[kCollMaxBlocks];                ///< kernels finished (a unique id per kernel run)
  unsigned long long pairSeq[kCollMaxRanks][kCollMaxBlocks];  ///< send/recv sets finished with each peer
  /// The last ring reduce kernel of this rank that stored into the next rank's stage: its call number <<
  /// kCollRingStageGridBits | its grid (colldev::awaitStageReleased); 0 none yet.
  unsigned long long ringStage[kCollMaxBlocks];
  /// That kernel's chunk in bytes (its stage slots' size), in every copy like ringStage.
  unsigned long long ringStageChunk[kCollMaxBlocks];
  /// Not copies: block b of that kernel, where it stored into the next rank's stage and finished every round,
  /// the free flag (kPhaseRingFree) the next rank's block b gives once it has read b's last round, (call <<
  /// kCollRoundBits) + end round + 1; else 0 (colldev::stageCredit).
  unsigned long long ringCredit[kCollMaxBlocks];
  unsigned long long failedLaunch;  ///< the latest launch whose failure is recorded
};

/// A kernel's report of a stalled peer, in mapped pinned host memory (one per rank). The device writes
/// every field, then `launch` last; the host reports a record whose launch it has not reported yet.
struct CollFailure {
  unsigned long long launch;    ///< 0: none yet; else the failed kernel's launch id (written last)
  unsigned long long seq;       ///< the call's sequence number (collective or pair counter + 1)
  unsigned long long observed;  ///< the flag value seen last
  unsigned long long expected;  ///< the value awaited
  unsigned long long timeNs;    ///< global timer at the failure (orders records of several ranks)
  int status;                   ///< a peerlink_status_t (TIMEOUT)
  int step;                     ///< a CollStep
  int peer;                     ///< the rank waited for
  int block;                    ///< the block that gave up
  int collective;               ///< peerlink::Collective, as an int
  int unused;
};

/// What every collective kernel needs to synchronize: the flag areas of all ranks (peer pointers), this
/// rank's counters and failure record.
struct CollSyncArgs {
  unsigned long long* flags[kCollMaxRanks] = {};  ///< rank p's flag area, as this GPU addresses it
  CollRankSync* sync = nullptr;                   ///< this rank's counters (its own memory)
  CollFailure* failure = nullptr;                 ///< this rank's record (mapped host memory)
  unsigned long long timeoutNs = 0;               ///< per wait
  int rank = 0;
  int nranks = 0;
  int collective = 0;         ///< peerlink::Collective, for the failure record
  unsigned int peerMask = 0;  ///< send/recv kernels: the peers of this set; collectives: every rank
  bool p2p = false;           ///< send/recv: pair counters and the p2p flag phases
  /// Whether some rank of the call stores into another rank's memory (pushed copies, two-shot outputs): the
  /// end barrier then releases the block's stores and acquires the peers'. When every access to a peer is
  /// a load, the end barrier only says "done reading" and is relaxed (the stores are local, and the kernel
  /// boundary orders them for the next kernel).
  bool peersStore = true;
  unsigned char unused[6] = {};  // the argument structs have no padding (launch_kernel.cuh says why)
  /// The communicator's abort word (mapped host memory): non-zero once a peer is lost or the application
  /// aborts; every wait gives up then, as at its deadline, and reports PEERLINK_STATUS_REMOTE_ERROR.
  const unsigned int* abort = nullptr;
};

/// LL one-shot (every collective's small messages): each rank stores its message for rank p, packed with
/// the call's flag into 16-byte lines (ll_line.cuh), into its slot of p's scratch (slot [seq parity][sender]),
/// then waits for every peer's lines in its own scratch and either reduces them with its own message in rank
/// order (reduce: all-reduce, reduce, reduce-scatter) or stores each to its place (copy: all-gather,
/// all-to-all, broadcast). No barrier: the data carries its own flag. Every rank sends to and hears from
/// every rank in every call -- a rank with nothing to say to p sends one token line -- so a rank cannot be
/// two calls ahead of any peer, and the parity double-buffers the slots. A thread owns the same lines of
/// every message and writes only its own lines of the outputs, after reading their inputs, so in-place
/// calls are safe (coll_ll.cu).
struct CollLlArgs {
  CollSyncArgs sync;
  void* scratch[kCollMaxRanks] = {};       ///< rank p's LL area (2 * nranks slots of 2^slotShift bytes), or
                                           ///< for LL128 its LL128 area (2 * nranks of kCollLl128SlotBytes)
  const void* toRank[kCollMaxRanks] = {};  ///< the message for rank p, or null (a token); toRank[rank]: own
                                           ///< contribution (reduce) or the local copy's source (copy)
  void* fromRank[kCollMaxRanks] = {};      ///< copy: where rank p's message goes, or null; [rank]: the local copy
  void* out = nullptr;                     ///< reduce: the result, or null (this rank only contributes)
  std::size_t bytes = 0;                   ///< every message's size, 1..kCollLlMaxBytes
  unsigned int tokenMask = 0;              ///< peers that send this rank a token, not a message
  bool reduce = false;
  /// LL: log2 of a slot's bytes, kCollLlSlotShift in the arenas; smaller in host memory (the staged plans' small
  /// calls), where no message is larger than half a slot either. LL128: unused.
  unsigned char slotShift = kCollLlSlotShift;
  unsigned char unused[2] = {};
};

/// Direct-read reduction: dst[k][i] = op over ranks j (in rank order) of src[j][i], for i in [begin, end),
/// for every k < ndst. Between a start barrier (every rank's input is ready) and an end barrier (every
/// rank is done reading this rank's input and writing its output). Two-shot all-reduce: [begin, end) is
/// this rank's shard and dst every rank's output; reduce: dst the root's output; one-shot direct: the
/// whole range into this rank's output; reduce-scatter: src offset to this rank's segment.
struct CollReduceArgs {
  CollSyncArgs sync;
  const void* src[kCollMaxRanks] = {};
  void* dst[kCollMaxRanks] = {};
  int ndst = 0;
  int unused = 0;
  std::size_t begin = 0;  ///< elements
  std::size_t end = 0;
};

/// Push reduction (two-shot all-reduce, and reduce-scatter under PEERLINK_COLL_PUSH=1; coll_push_phased.cu): no
/// rank loads from a peer. Every rank stores its input's piece of each peer's shard into that peer's stage
/// (slot [sender]), meets the peers, and reduces its own shard from its input and the stages, in rank order,
/// into dst (all-reduce: every rank's output, own last; reduce-scatter: its own output). Every shard within one
/// kCollPushSlotBytes slot: comm_launch.cc cuts larger ones into parts of a slot, a launch each. Between a
/// start barrier and, for all-reduce (peers store into this rank's output), an end barrier. Every pointer
/// 16-byte aligned and every shard but the last a multiple of 16 bytes (comm_launch.cc falls back to the
/// direct-read kernel otherwise).
struct CollPushReduceArgs {
  CollSyncArgs sync;
  void* stage[kCollMaxRanks] = {};             ///< rank p's stage area: nranks slots of kCollPushSlotBytes
  const void* shardInput[kCollMaxRanks] = {};  ///< this rank's input for rank p's shard ([rank]: its own)
  std::size_t shardCount[kCollMaxRanks] = {};  ///< elements of rank p's shard (the same table on every rank)
  void* dst[kCollMaxRanks] = {};               ///< where this rank's reduced shard goes
  int ndst = 0;
  bool endBarrier = false;  ///< all-reduce: wait until every peer's stores into this rank's output landed
  unsigned char unused[3] = {};
};

/// A copy of `bytes` from `src` to each of `dst[0..ndst)`.
struct CollCopyJob {
  const void* src = nullptr;
  void* dst[kCollMaxRanks] = {};
  std::size_t bytes = 0;
  int ndst = 0;
  int unused = 0;
};

/// Copies between barriers: broadcast, all-gather, all-to-all (every rank), send/recv (sync.p2p: the
/// barriers are with sync.peerMask only, on the pair counters).
struct CollCopyArgs {
  CollSyncArgs sync;
  CollCopyJob jobs[kCollMaxJobs];
  int njobs = 0;
  int unused = 0;
  std::size_t chunkBytes = std::size_t{64} << 10;  ///< a multiple of 16 (collCopyChunkBytes)
};

/// One message of a send/recv group in LL lines, as one rank sees it.
struct CollP2pLlJob {
  const void* src = nullptr;  ///< a send: the data; a receive: the data when this rank sends it to itself, else null
  void* dst = nullptr;        ///< a receive: where the message goes; a send: null
  std::size_t bytes = 0;      ///< 1..kCollP2pLlMaxBytes
  /// Where its lines start in the pair's slot: after the lines of the pair's earlier messages in the group
  /// (the k-th send from r to p meets the k-th receive on p from r, so both sides count the same).
  std::size_t lineOffset = 0;
  int peer = 0;  ///< a send: the receiver; a receive: the sender
  int unused = 0;
};

/// Send/recv in LL lines (coll_p2p_ll.cu): a sender stores each message, packed with the pair's flag into
/// 16-byte lines (ll_line.cuh), into its slot of the receiver's area (slot [pair number parity][sender]);
/// the receiver polls its lines and stores the payload to its output. No barrier: before writing a slot a
/// sender waits only until the receiver has started the pair's previous set (any form's kernel says so at
/// its start, block 0 at least), so the set before it on the same parity, which that kernel followed, has
/// been read.
struct CollP2pLlArgs {
  CollSyncArgs sync;                  ///< p2p, with the group's peers of this rank in peerMask
  void* scratch[kCollMaxRanks] = {};  ///< rank p's send/recv LL area (2 * nranks slots of kCollP2pLlSlotBytes)
  CollP2pLlJob sends[kCollMaxJobs];
  CollP2pLlJob recvs[kCollMaxJobs];
  int nsends = 0;
  int nrecvs = 0;
};

/// One chain of a ring kernel. A kernel runs `chains` chains side by side, each on gridDim.x / chains blocks
/// (block b on chain b / (gridDim.x / chains)): chain c moves bytes [offset, offset + bytes) of every buffer
/// it names, receiving from `prev` and passing to `next`. A rank's neighbours are the same in every chain
/// (rank - 1 and rank + 1); where the chain starts and ends differs.
struct CollRingChain {
  std::size_t offset = 0;  ///< where the chain's bytes start in the inputs, stages and outputs
  std::size_t bytes = 0;
  std::size_t outOffset = 0;  ///< ring reduce: where the chain's end writes them in its output (reduce-scatter: 0)
  int prev = -1;              ///< the rank whose ready flags this one waits for; -1 where the chain starts
  int next = -1;              ///< the rank this one passes chunks to and signals; -1 where it ends
  int head = 0;               ///< the rank where the chain starts (the ring reduce's claim counter is there)
  int unused = 0;             ///< no padding: KernelGraph compares argument bytes
};

/// Ring broadcast (coll_ring_broadcast.cu): position i = (rank - root) mod n stores each chunk into position
/// i + 1's output once it has it (the root from its input) and releases a ready flag per chunk; no rank
/// loads from a peer. With n chains, chain j broadcasting segment j from rank j, it is the ring
/// all-reduce's all-gather.
struct CollRingArgs {
  CollSyncArgs sync;
  const void* src = nullptr;  ///< the root: its input; the others: their own output
  void* nextDst = nullptr;    ///< the next rank's output (used by the chains that have a next)
  void* localDst = nullptr;   ///< the root out of place: its own output; else null
  CollRingChain chain[kCollMaxRanks];
  int chains = 1;
  unsigned char unused[4] = {};
  std::size_t chunkBytes = std::size_t{32}
                           << 10;  ///< a multiple of 16 (collRingBroadcastChunkBytes, collRingChunkBytes)
};

/// Ring reduce (coll_ring_reduce.cu): position i = (rank - root - 1) mod n combines each chunk of the partial
/// result that position i - 1 stored into its stage with its input and stores that into position i + 1's
/// stage (position 0 stores its input; the root, last, combines into its output and finishes avg). A ring
/// of four stage slots per block; a ready flag per round to the next rank (kPhaseRingReady) and a free flag
/// per round back to the previous one (kPhaseRingFree); no rank loads from a peer. Every pointer 16-byte
/// aligned (comm_launch.cc falls back to two-shot otherwise).
/// With n chains, chain j reducing segment j towards rank j (its root: the chain's end, next = -1), it is the
/// ring all-reduce's reduce-scatter.
struct CollRingReduceArgs {
  CollSyncArgs sync;
  const void* input = nullptr;  ///< this rank's send buffer
  const void* stage = nullptr;  ///< this rank's stage (the previous rank stores into it)
  void* nextStage = nullptr;    ///< the next rank's stage
  void* out = nullptr;          ///< this rank's output (written by the chains it ends)
  CollRingChain chain[kCollMaxRanks];
  int chains = 1;
  unsigned char unused[4] = {};
  std::size_t chunkBytes = std::size_t{16} << 10;  ///< a multiple of 16 (collRingReduceChunkBytes)
};
/// How far, in rounds of its blocks, a ring reduce's chain may claim ahead of the least advanced other chain
/// when several run side by side (colldev::keepPace in coll_ring_reduce.cu says why).
constexpr int kCollRingPaceRounds = 4;

/// Development hook (tools/tune/ring_trace.cu), off unless set: what each block of a ring kernel (the
/// broadcast and the reduce, and the n-chain ones of the reduce-scatter and all-reduce) or of the direct-read
/// reduction kernel (coll_reduce.cu: two-shot, reduce-scatter) did in its latest call on a GPU; the broadcast's
/// and the direct-read kernel's blocks leave the rounds and waits at 0.
/// Times are the GPU's global timer (~1 us steps), waits thread 0's SM cycles.
struct CollTraceRecord {
  unsigned int smid = 0;              ///< the SM the block ran on
  int chain = -1;                     ///< the block's chain (the rank it reduces towards in n-chain kernels)
  unsigned long long enteredNs = 0;   ///< the block's start
  unsigned long long startedNs = 0;   ///< its first round (after the start wait)
  unsigned long long finishedNs = 0;  ///< after its last round
  unsigned long long rounds = 0;      ///< its rounds, the end marker's included
  unsigned long long stageWait = 0;   ///< cycles waiting for its own signal warp to have released a slot's round
  unsigned long long freeWait = 0;    ///< cycles waiting for the next rank to free a slot
  unsigned long long readyWait = 0;   ///< cycles waiting for the previous rank's ready flag
  unsigned long long paceWait = 0;    ///< cycles a chain's first rank waited for the other chains (keepPace)
};
/// Points the current GPU's traced kernels at `records` (one per block of each launch; every launch overwrites
/// them), or stops the tracing (nullptr). Not for concurrent use with the kernels running.
void setCollTrace(CollTraceRecord* records);

/// Launch shapes (the same on every rank for one call: derived from rank-independent sizes; host functions in
/// coll_shapes.cc, which needs no device code).
/// Whether `bytes` cut in rounds of `chunkBytes` per block over `blocks` blocks leaves fewer rounds per block
/// than the flags can number (2^kCollRoundBits: 64 GiB on one block of 64 KiB chunks). A pipelined kernel
/// whose rounds would wrap into the next call's values must not run (its waits could pass early).
bool collRoundsFit(std::size_t bytes, int blocks, std::size_t chunkBytes);
/// LL threads per block, whatever the size: a kernel's block 0 also writes the counters' copies past its
/// grid, one per thread (finishKernel) -- with one warp, eight stores each made 8-128 B calls ~1 us slower.
constexpr int kCollLlThreads = 256;
/// LL blocks: one per kCollLlThreads lines, at most `maxBlocks` (every block resident; threads loop over lines).
int collLlBlocks(std::size_t bytes, int maxBlocks);
/// LL128 blocks (kCollLlThreads threads, eight lanes per line): one per kCollLlThreads / 8 lines, at most `maxBlocks`.
int collLl128Blocks(std::size_t bytes, int maxBlocks);
/// Blocks for `bytes` of reduction work per rank, capped at `maxBlocks` (the smallest SM count).
int collReduceBlocks(std::size_t bytes, int maxBlocks);
/// The ranks the direct-read reduction kernel is built for that a call of `nranks` ranks storing to `ndst`
/// destinations runs: 2, 4 or kCollMaxRanks, the least that holds both (coll_reduce.cu says why).
int collReduceRankBound(int nranks, int ndst);
/// The chunk copies of `bytes` per rank are cut in: 64 KiB, or down to 8 KiB so that `maxBlocks` blocks
/// all get work (medium messages are latency-bound: more blocks keep more loads in flight).
std::size_t collCopyChunkBytes(std::size_t bytes, int maxBlocks);
/// Blocks for `bytes` of copies per rank in chunks of collCopyChunkBytes, capped at `maxBlocks`.
int collCopyBlocks(std::size_t bytes, int maxBlocks);

/// The rings' chunks and grids. `maxChunk` is the largest chunk a block moves per round
/// (PEERLINK_COLL_RING_CHUNK, a multiple of 16), 0 for each kernel's own; chunks are at least 8 KiB unless
/// `maxChunk` is less.
/// Ring broadcast: up to 32 KiB, aiming at 64 rounds per block, and the blocks.
std::size_t collRingBroadcastChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk = 0);
int collRingBroadcastBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk = 0);
/// A chain of stores (the ring broadcast's kernel as the ring all-reduce's SM gather): up to 64 KiB, aiming
/// at 16 rounds per block, and the blocks; collRingChainBlocks for `chains` chains of at most `bytes` each,
/// side by side (blocks per chain: the grid is chains times that).
std::size_t collRingChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk = 0);
int collRingBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk = 0);
int collRingChainBlocks(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk = 0);
/// Ring reduce: at most `chainBlocks` blocks (PEERLINK_COLL_RING_REDUCE_BLOCKS; 0: 32, and never more than 128),
/// chunks as collRingChunkBytes's (up to 32 KiB on grids of 64+ blocks, else 64 KiB), capped so that four stage
/// slots per block fit one kCollRingStageBytes stage.
int collRingReduceBlocks(std::size_t bytes, int maxBlocks, std::size_t maxChunk = 0, int chainBlocks = 0);
std::size_t collRingReduceChunkBytes(std::size_t bytes, int maxBlocks, std::size_t maxChunk = 0, int chainBlocks = 0);
/// Whether a ring reduce chain of `bytes` in chunks of `chunkBytes` fits the flags' round numbers: its blocks
/// claim chunks as they go, so one block may run every chunk and the end marker.
bool collRingReduceRoundsFit(std::size_t bytes, std::size_t chunkBytes);
/// The same for `chains` reduce chains side by side (the ring reduce-scatter and all-reduce), on at most 128
/// blocks in all.
int collRingReduceChainBlocks(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk = 0);
std::size_t collRingReduceChainChunkBytes(std::size_t bytes, int chains, int maxBlocks, std::size_t maxChunk = 0);
/// n chains side by side on one grid of each ring kernel (the ring all-reduce's segments, the ring
/// reduce-scatter's blocks), whose longest chain has `longest` bytes: the ring reduce kernel's grid and chunk,
/// and the ring broadcast kernel's as the all-reduce's SM gather.
struct CollRingChainsShape {
  int reduceBlocks = 0;
  std::size_t reduceChunk = 0;
  int gatherBlocks = 0;
  std::size_t gatherChunk = 0;
};
CollRingChainsShape collRingChainsShape(std::size_t longest, int chains, int maxBlocks, std::size_t maxChunk = 0);
/// Whether a push reduction whose largest shard is `maxShardBytes` runs as one launch (coll_push_phased.cu):
/// every shard within one kCollPushSlotBytes slot. Its grid is collReduceBlocks's for that shard.
constexpr bool collPushPhasedFits(std::size_t maxShardBytes) {
  return maxShardBytes <= kCollPushSlotBytes;
}
/// The launches of a push reduction whose largest shard is `maxShardBytes`: one per kCollPushSlotBytes part of
/// every shard, at least one.
constexpr std::size_t collPushParts(std::size_t maxShardBytes) {
  return maxShardBytes <= kCollPushSlotBytes ? 1 : (maxShardBytes + kCollPushSlotBytes - 1) / kCollPushSlotBytes;
}

/// Launch on the current device (the rank's GPU), on `stream`. `type`/`op` pick the instantiation; the
/// caller validated them (avg on floating types only). Throw Error(CudaError) when the launch fails.
/// `type`/`op` matter only when args.reduce.
/// `launch`: through the rank's eager graph or directly, overlapping the previous kernel or not (kernel_launch.hpp).
void launchCollLl(const CollLlArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                  const KernelLaunch& launch);
/// The same exchange in LL128 lines (coll_ll128.cu; only over NVLink: see there); args.scratch: LL128 areas.
void launchCollLl128(const CollLlArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                     const KernelLaunch& launch);
void launchCollReduce(const CollReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                      const KernelLaunch& launch);
void launchCollCopy(const CollCopyArgs& args, int blocks, cudaStream_t stream, const KernelLaunch& launch);
void launchCollP2pLl(const CollP2pLlArgs& args, int blocks, cudaStream_t stream, const KernelLaunch& launch);
/// The push reduction in two phases: pushes, a meeting, the reduce (every shard within a stage slot).
void launchCollPushPhased(const CollPushReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                          const KernelLaunch& launch);
void launchCollRingBroadcast(const CollRingArgs& args, int blocks, cudaStream_t stream, const KernelLaunch& launch);
void launchCollRingReduce(const CollRingReduceArgs& args, CollType type, CollOp op, int blocks, cudaStream_t stream,
                          const KernelLaunch& launch);

/// Loads every collective kernel into the current device's context (cudaFuncGetAttributes), so no first
/// launch of one of them can wait behind a spinning kernel (see kernel_preload.cuh). The communicator calls
/// it on every device at creation; the push reduction's kernels only with `push` (PEERLINK_COLL_PUSH=1, or
/// AUTO on 3+ ranks), the LL128 kernels only with `ll128` (a GPU that may run them).
void preloadCollKernels(bool push, bool ll128);

namespace detail {
void preloadCollReduceKernels();                           // coll_reduce.cu
void preloadCollLlKernels();                               // coll_ll.cu
void preloadCollLl128Kernels();                            // coll_ll128.cu
void preloadCollP2pLlKernels();                            // coll_p2p_ll.cu
void preloadCollPushPhasedKernels();                       // coll_push_phased.cu
void preloadCollRingKernels();                             // coll_ring_broadcast.cu
void setCollRingBroadcastTrace(CollTraceRecord* records);  // coll_ring_broadcast.cu, for setCollTrace
void setCollReduceTrace(CollTraceRecord* records);         // coll_reduce.cu, for setCollTrace
void preloadCollRingReduceKernels();                       // coll_ring_reduce.cu
}  // namespace detail

}  // namespace peerlink::kernels
