// One collective call of a group of processes over point-to-point messages, cut into pieces of at most
// PEERLINK_NET_CHUNK_BYTES of every block and pipelined:
//
// Each piece runs the flat plan of the call's algorithm (coll::acrossNodesAlgorithm: one shot where it moves the
// ring's bytes in one step, else the ring where the collective has one, direct otherwise) over the group, as a
// MemberPlan of its own; kPiecesInFlight pieces run at once, so one piece's messages move while another computes.
//
//   staged  (MPI cannot read device memory): pieces are copied from the caller's memory into pinned host memory
//           ahead of their run, and back once run, while the pieces in flight move their messages; kSlots slots of
//           pinned memory. The copies are DeviceAccess's (cudaMemcpyAsync on a GPU, memcpy in CPU tests); the
//           reductions its stagedMemory's: kernels on the GPU reading the pinned pieces where the data is on a GPU
//           (but for a call of one piece whose reductions are small, which the host reduces: reducesOnHost), else on
//           the host (coll/host_reduce.hpp's arithmetic, the kernels').
//   direct  (a CUDA-aware MPI, or host memory): the messages read and write the caller's memory, and copies and
//           reductions are the caller's LocalMemory's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/deferred_reductions.hpp"
#include "net/plan_runner.hpp"
#include "net/point_to_point.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink::net {

/// Copies between the caller's memory (a GPU's) and pinned host memory. Nothing here blocks: the transport polls
/// reached() against its deadline.
class DeviceAccess {
 public:
  virtual ~DeviceAccess() = default;
  /// Queues a copy of `bytes` bytes, either way between the caller's memory and memory of allocateHost.
  virtual void copyAsync(void* dst, const void* src, std::size_t bytes) = 0;
  /// A marker after every copy queued so far.
  virtual std::uint64_t mark() = 0;
  /// Whether every copy queued before `marker` is done.
  virtual bool reached(std::uint64_t marker) = 0;
  /// Host memory the copies reach fastest (cudaHostAlloc on a GPU).
  virtual void* allocateHost(std::size_t bytes) = 0;
  virtual void freeHost(void* memory) noexcept = 0;
  /// What the staged path computes on (its slots are allocateHost's memory; its landing buffers this memory's own):
  /// a GPU's reductions over pinned memory where the caller's data is on that GPU (gpu_staged_memory.hpp); null:
  /// the host's (HostMemory, on the transport's thread).
  virtual std::unique_ptr<LocalMemory> stagedMemory() { return nullptr; }
};

/// Copies with memcpy, done when queued; host memory from the heap. For callers whose memory is the host's.
std::unique_ptr<DeviceAccess> hostDeviceAccess();

/// Pieces of one call whose messages are in flight at once, each with a tag of its own (a call takes this many
/// tags: MemberRun::tag and those after it).
constexpr std::size_t kPiecesInFlight = 2;

/// How a call's messages reach the caller's memory (net_path.hpp decides).
enum class NetPath {
  Staged,  ///< through pinned host memory, pipelined
  Direct,  ///< MPI reads and writes the caller's memory
};
/// "staged", "direct".
const char* netPathName(NetPath path) noexcept;

/// The pinned host memory of the staged path: a slot per piece in flight, one being copied in and one being copied
/// out, grown as calls need, kept between calls. After a failure the transport may still write into them, so a
/// broken world never frees them.
class StagingSlots {
 public:
  explicit StagingSlots(DeviceAccess& device) : device_(device) {}
  ~StagingSlots();
  StagingSlots(const StagingSlots&) = delete;
  StagingSlots& operator=(const StagingSlots&) = delete;

  /// Slot `index` (0 to kSlots - 1): a piece's input, output and scratch, and where messages it receives land
  /// (a queued call's whose computations the device makes: queued_computations.hpp).
  struct Slot {
    std::byte* input = nullptr;
    std::byte* output = nullptr;
    std::byte* scratch = nullptr;
    std::byte* landing = nullptr;
  };
  /// The bytes of each part of a slot.
  struct Sizes {
    std::size_t input = 0;
    std::size_t output = 0;
    std::size_t scratch = 0;
    std::size_t landing = 0;
  };
  /// Every slot made big enough; call only while no message uses them. Memory it frees to grow is freed once the
  /// work queued on the device has ended (copies out a call left queued still read it), within `timeout`, else
  /// Error(Timeout); once leaked, memory it outgrows is kept instead.
  void reserve(const Sizes& bytes, std::chrono::milliseconds timeout);
  Slot slot(std::size_t index) const { return slots_[index % kSlots]; }
  /// Keeps the memory forever (a world whose messages may still land in it).
  /// Any thread.
  void leak() noexcept { leaked_.store(true, std::memory_order_release); }

  static constexpr std::size_t kSlots = kPiecesInFlight + 2;

 private:
  void release() noexcept;
  /// Whether every copy queued on the device so far ended within `timeout`.
  bool copiesEnded(std::chrono::milliseconds timeout);
  DeviceAccess& device_;
  Slot slots_[kSlots];
  std::size_t sizes_[4] = {0, 0, 0, 0};
  std::atomic<bool> leaked_{false};
};

/// What a group gives every call.
/// The time the transport's thread spent running calls that return once queued (runCopiedPieces: async, queued and
/// captured calls), each from its first piece's start (its copies in done) to its last piece's results in pinned
/// memory, summed. The thread adds a call before it says its last piece is done; any thread reads.
struct QueuedCallTime {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> nanoseconds{0};
};

struct CallContext {
  MemberRun run;  ///< p2p, members, me, tag, timeout, describe, lost (op and divisor are the call's)
  QueuedCallTime* queuedTime = nullptr;  ///< where runCopiedPieces adds the call's time (NetWorld's)
  NetPath path = NetPath::Staged;
  std::size_t chunkBytes = std::size_t{4} << 20;
  DeviceAccess* device = nullptr;  ///< staged: the copies
  StagingSlots* slots = nullptr;   ///< staged
  LocalMemory* staged = nullptr;   ///< staged: copies and reductions on the slots (the GPU's or the host's)
  /// Staged, where `staged` queues its work on a GPU: the host's, for a call of one piece whose reductions are all
  /// below `gpuReduceMinBytes` (reducesOnHost, net_path.hpp); null: `staged` computes every piece.
  LocalMemory* stagedOnHost = nullptr;
  std::size_t gpuReduceMinBytes = 0;
  LocalMemory* caller = nullptr;  ///< direct: copies and reductions on the caller's memory
  /// Staged: whether a call waits for its last copies out to the caller's memory before it returns; if not, they
  /// are left queued on `device`, and the caller orders its own later work after them (NetOptions).
  bool awaitCopiesOut = true;
};

/// One collective call, as the API makes it (communicator.hpp: count, root a rank of the group; in place where
/// send and recv alias as the API says).
struct NetCall {
  Collective collective = Collective::AllReduce;
  std::size_t count = 0;
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int avgDivisor = 0;  ///< what Avg divides by; 0: the group's size (a hierarchical call passes every rank's)
  int root = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  Algorithm algorithm = Algorithm::Auto;  ///< the flat plan; Auto: ring where the collective has one
};

/// One send or receive of a send/recv group: `count` elements with group rank `peer`. Sends and receives between
/// two ranks are matched in the order each gave them (NCCL's rule).
struct PeerOp {
  bool send = true;
  int peer = 0;
  void* data = nullptr;
  std::size_t count = 0;
};

/// A copy of `count` elements of rank's Input at `input` into its Output at `output`.
struct LocalCopy {
  std::size_t input = 0;
  std::size_t output = 0;
  std::size_t count = 0;
};

/// One piece of a call: its flat plan, and where this process's part of the plan's Input and Output lies in the
/// caller's memory.
struct CallPiece {
  coll::Plan plan;
  BufferMap input;
  BufferMap output;
  std::size_t inputElements = 0;
  std::size_t outputElements = 0;
  std::size_t scratchElements = 0;
  std::vector<LocalCopy> atCopyOut;  ///< staged: taken out of the plan (takeLocalCopies), made by the copy out
  /// Taken out of the plan (deferReductions), made by the copy out: an async, captured or queued call's where the GPU
  /// reduces (NetGroup::copiedCallPiece).
  std::vector<DeferredReduction> reducedAtCopyOut;
};

/// Elements of every block in one piece of a call of `type` (`chunkBytes` of it, aligned as the kernels want).
std::size_t pieceElementsOf(std::size_t chunkBytes, DataType type);
/// Piece `p` of `call` (pieces of `step` elements of every block) as rank `me` of `nranks` runs it. Pure.
CallPiece callPiece(const NetCall& call, int nranks, int me, std::size_t p, std::size_t step);

/// A copy between the caller's memory and a slot of pinned memory.
struct SlotCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};
/// A reduction a piece's copy out makes (its reducedAtCopyOut): `count` elements into the caller's memory at `dst`
/// from `srcs` in order, finishing (Avg divides there): the caller's own input where it is the source, else the slot's
/// scratch, where a peer's input landed.
struct SlotReduction {
  void* dst = nullptr;
  std::vector<const void*> srcs;
  std::size_t count = 0;
};
/// What a queued call's device side does on the copy stream, in order (queuedDeviceOps): the copies, and the
/// waits and writes of piece tickets in pinned host memory that order them with the transport's thread.
struct QueuedDeviceOp {
  enum class Kind {
    Copy,        ///< `copy`
    AwaitReady,  ///< wait until the ready word reaches `ticket`: that piece's results lie in its slot
    Copied,      ///< write `ticket` to the copied word: that piece's copies in are done
    /// wait until the asked word reaches `ticket`, run that computation, write `ticket` to the computed word
    /// (queued_computations.hpp)
    Compute,
    /// `reduction`, of the call's type and op, Avg dividing by `divisor`: a copy out that reduces (the piece's
    /// messages only moved data, its plan's reductions deferred)
    Reduce,
  };
  Kind kind = Kind::Copy;
  SlotCopy copy;
  std::uint64_t ticket = 0;
  SlotReduction reduction;
  int divisor = 0;
};
/// The device side of a queued call whose piece p has `copiesIn[p]` and `copiesOut[p]`, ticket `tickets[p]`, and
/// lies in slot p % `slots`: piece p copied in once piece p - `slots` (the slot's last) is ready and copied out; the
/// call's last pieces copied out as they are ready. Piece p's computations on the device, tickets
/// `computations[p].first` on (`computations[p].count` of them; none where `computations` is empty), go just before
/// the wait for it to be ready: the copies in of the pieces ahead were queued before them. Its reductions as it copies
/// out (`reductionsOut[p]`, none where empty; Avg dividing by `divisor`) follow its copies out. Pure.
struct TicketRange {
  std::uint64_t first = 0;
  std::size_t count = 0;
};
std::vector<QueuedDeviceOp> queuedDeviceOps(const std::vector<std::vector<SlotCopy>>& copiesIn,
                                            const std::vector<std::vector<SlotCopy>>& copiesOut,
                                            const std::vector<std::uint64_t>& tickets, std::size_t slots,
                                            const std::vector<TicketRange>& computations = {},
                                            const std::vector<std::vector<SlotReduction>>& reductionsOut = {},
                                            int divisor = 0);

/// The staged copies of `piece` into `slot`: each Input segment to its place in the slot's input. Pure.
std::vector<SlotCopy> copiesIntoSlot(const CallPiece& piece, const StagingSlots::Slot& slot, std::size_t elementSize);
/// The staged copies of `piece` out of `slot`: each Output segment from the slot's output, but for the piece's
/// local copies (atCopyOut), which come from the slot's input, and its deferred reductions (reducedAtCopyOut), which
/// reductionsOutOfSlot makes. Error(Internal) for a local copy or reduction that lies in no one output segment. Pure.
std::vector<SlotCopy> copiesOutOfSlot(const CallPiece& piece, const StagingSlots::Slot& slot, std::size_t elementSize);
/// The reductions of `piece`'s copy out of `slot` (its reducedAtCopyOut). Error(Internal) for one whose output, or
/// own input, lies in no one segment of the piece. Pure.
std::vector<SlotReduction> reductionsOutOfSlot(const CallPiece& piece, const StagingSlots::Slot& slot,
                                               std::size_t elementSize);
/// Whether every element `piece` writes to the caller comes from its local copies (atCopyOut): its copies out then
/// read only the slot's input, never what its messages bring (a broadcast's root, a reduce's other ranks, a
/// send/recv group that only sends). Pure.
bool outputIsLocalCopies(const CallPiece& piece);

/// Runs `call` (SendRecv: use runPeerOps) for this process. Errors are MemberPlan's, and Error(Timeout) for a
/// copy that did not finish within the timeout; Error(InvalidUsage) for a root out of the group or null buffers.
void runCall(const CallContext& context, const NetCall& call);

/// Runs a send/recv group of `type` elements for this process.
void runPeerOps(const CallContext& context, const std::vector<PeerOp>& ops, DataType type);

/// Piece `p` of a send/recv group's `ops` of `type` elements (pieces of `step` elements), as rank `me` of `nranks`
/// runs it: every send's part in its Input, every receive's in its Output, one step; a send to this rank itself
/// matched to its receives from itself in order. Error(InvalidUsage) for a receive from itself without such a send.
/// Pure.
CallPiece peerPiece(const std::vector<PeerOp>& ops, int nranks, int me, DataType type, std::size_t p, std::size_t step);
/// Error(InvalidUsage) for an op whose peer is not a rank of a group of `nranks`, or with data but no buffer.
void checkPeerOps(const std::vector<PeerOp>& ops, int nranks);
/// runCall's checks of `call` for rank `me` of a group of `nranks`: Error(InvalidUsage) for send/recv, a root out of
/// the group, a missing buffer.
void checkCall(const NetCall& call, int nranks, int me);

/// How a piece's plan computes: runCall's parameters of the call it belongs to.
struct CopiedPieceRun {
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int divisor = 0;            ///< what Avg divides by; 0: the group's size
  const char* what = "call";  ///< for messages: "all_reduce", "send/recv"
};

/// Runs `pieces` whose copies the caller queues itself around them (NetGroup::startAsync, startQueued), up to
/// kPiecesInFlight at a time as the staged path does: piece p over `slots[p]` on `memoryOf(p)`, on lane
/// p % kPiecesInFlight's tag and temporaries, once `copiedIn(p)` says its copies into the slot are done (polled; a
/// lost peer ends the wait, and it has the call's deadline from the last progress: Error(Timeout) saying the caller's
/// stream did not get there); `done(p)` in order once each piece's results lie in its slot. Errors otherwise
/// runCall's.
void runCopiedPieces(const CallContext& context, const CopiedPieceRun& run, const std::vector<CallPiece>& pieces,
                     const std::vector<StagingSlots::Slot>& slots,
                     const std::function<LocalMemory&(std::size_t)>& memoryOf,
                     const std::function<bool(std::size_t)>& copiedIn, const std::function<void(std::size_t)>& done);

/// The flat plan of `call` over `nranks` ranks for a piece of `count` elements, out of place (what runCall runs
/// per piece): its algorithm, or under Auto coll::acrossNodesAlgorithm's. The algorithm decides the messages: every
/// rank's path (waiting, async, queued, captured) runs the same plan whoever reduces (PEERLINK_NET_REDUCE,
/// PEERLINK_NET_ASYNC), so that ranks reducing in different places still meet.
coll::Plan callPlan(const NetCall& call, int nranks, std::size_t count);

/// Pure. Takes out of `plan` the copies of rank `rank`'s own send data into its own recv buffer that no later step
/// reads or overwrites (the all-gather's own block, the broadcast root's buffer, the all-to-all's block to itself),
/// and returns them, in order of output. Nothing else moves, and no message, so the other ranks' plans stay as they
/// are. On the staged path they go from the input slot to the caller's memory with the piece's copy out, instead of
/// through the host.
std::vector<LocalCopy> takeLocalCopies(coll::Plan& plan, int rank);

}  // namespace peerlink::net
