// The transport between nodes for one process: a world of processes over PointToPoint (MPI, mpi_library.hpp),
// its ranks' identities and nodes, groups (a node's ranks, a rail: one local index on every node), and one
// progress thread per world that makes every MPI call, so a caller (a CUDA host function, the communicator's
// thread) only queues a call and waits for it. docs/multinode.md is the users' guide.
//
//   NetWorld world(openMpiPointToPoint(params), options, hostDeviceAccess(), std::make_unique<HostMemory>());
//   NetGroup& rail = world.rail();                 // this rank's rail: the ranks of its local index
//   rail.allReduce(send, recv, count, DataType::F32, ReduceOp::Sum);
//
// Every wait has a deadline (PEERLINK_NET_TIMEOUT_MS); an error names the call, the step and the peers (rank,
// host, pid) it waited for. After an error the world is broken: later calls fail at once, naming the first error.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "core/cpu_set.hpp"
#include "net/net_call.hpp"
#include "net/net_path.hpp"
#include "net/plan_runner.hpp"
#include "net/point_to_point.hpp"
#include "net/queued_computations.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink::net {

/// Where the staged path reduces the pieces it received (PEERLINK_NET_REDUCE).
enum class NetReduce {
  Auto,  ///< the device access's memory (DeviceAccess::stagedMemory): on the GPU where the data is on one, but for
         ///< a call of one piece whose reductions are below NetOptions::gpuReduceMinBytes, which the host reduces
  Gpu,   ///< the device access's memory for every piece, however small its reductions
  Host,  ///< on the host, on the transport's thread
};

struct NetOptions {
  std::chrono::milliseconds timeout{300000};           ///< PEERLINK_NET_TIMEOUT_MS: every wait
  std::size_t chunkBytes = std::size_t{4} << 20;       ///< PEERLINK_NET_CHUNK_BYTES: a piece of every block
  NetPath path = NetPath::Staged;                      ///< choosePath's (net_path.hpp)
  NetReduce reduce = NetReduce::Auto;                  ///< PEERLINK_NET_REDUCE
  std::size_t gpuReduceMinBytes = kGpuReduceMinBytes;  ///< Auto: one piece's smaller ones on the host (reducesOnHost)
  BootstrapOptions identity;                           ///< PEERLINK_HOSTID: who this process says it is
  std::optional<CpuSet> progressCpus;                  ///< where the progress thread binds itself (none: left as is)
  /// Staged: a call returns once its last copies out to the caller's memory are queued, not done; the caller orders
  /// its later work after them (a communicator: its stream waits for them, cuda_device_access.hpp). Saves the wait for
  /// a GPU copy per call.
  bool copiesOutInStreamOrder = false;
  /// PEERLINK_NET_ASYNC: whether NetGroup::asyncFits lets calls of one small staged piece run async.
  bool asyncCalls = true;
  static NetOptions fromParams(const Params& params);
};

/// The pinned slots of async calls: sets of input, output and scratch, each of this many bytes: an async call's piece
/// at most, eager or captured into a CUDA graph (an eager call whose piece needs more is queued, its reductions the
/// GPU's; a captured one is cut into pieces). Up to this size an eager call ends as soon or sooner async than queued,
/// even with the host reducing (bench/results/2026-12-03-h200-graphs-across-nodes/, calls m and n).
constexpr std::size_t kAsyncSlotBytes = std::size_t{1} << 20;
/// Async calls in flight at once, each on a slot set of its own.
constexpr std::size_t kAsyncSets = 4;
/// AsyncFlags::gaveUp's value where a graph's call's kernel got no ticket from its graph's start within its deadline.
constexpr std::uint64_t kNoTicket = ~std::uint64_t{0};
/// Copies in, and out, one async call makes at most (a segment per block: a rail of up to that many nodes).
constexpr std::size_t kAsyncCopiesMax = 8;
/// Reductions an async or captured call's piece makes as it copies out (SlotReduction), and sources each reads, at most
/// (a queued call's copy out reduces with the plans' kernel: as many sources, any number of reductions).
constexpr std::size_t kAsyncReductionsMax = 2;
constexpr std::size_t kAsyncReductionSourcesMax = 8;

/// The flags an async call's two sides meet at, in pinned host memory (the device access's, mapped for a GPU).
/// Each word on a cache line of its own: the GPU writes some, the host others.
struct AsyncFlags {
  struct alignas(64) Word {
    std::atomic<std::uint64_t> value{0};
  };
  Word release;  ///< the transport's: the last async call that ended, in ticket order (also one that failed)
  /// The transport's: the first ticket that failed (0: none); it and every later call's results are not in the slots
  /// (the world is broken), so the caller leaves its buffers as they are. Written before that ticket's release.
  Word failedFrom;
  /// The caller's: a ticket whose kernel stopped waiting for its release (deadline), or kNoTicket.
  Word gaveUp;
  Word copiedIn[kAsyncSets];  ///< the caller's, per slot set: the ticket whose copies in are done
  /// The caller's, per slot set: the ticket whose kernel ended (its copies out done, or left out): the set's slots
  /// are free from then on.
  Word copiedOut[kAsyncSets];
  // Queued calls' pieces (NetGroup::prepareQueued), numbered in order by tickets of their own.
  Word pieceCopied;  ///< the device's copy stream's: the last piece whose copies in are done
  /// The transport's: the last piece whose results lie in its slot; where a call failed, its last piece (its results
  /// are not written).
  Word pieceReady;
  AskedComputations computations;  ///< queued calls' copies and reductions on the device
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && sizeof(std::atomic<std::uint64_t>) == 8,
              "the flags are plain 64-bit words to the GPU");

/// The tickets of async calls handed to the progress thread in one job (NetWorld::submitAsync).
struct AsyncTickets {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

/// A call whose copies the caller makes itself, in its stream's order, around the transport's messages
/// (NetGroup::prepareAsync): the caller hands the call to the transport with startAsync, which returns at once,
/// copies `copiesIn` and then writes `ticket` to `flags->copiedIn[set]` (both visible to the host); once
/// `flags->release` reaches `ticket` the call ended, and unless `flags->failedFrom` is set and at most `ticket` its
/// results lie in the slot, and the caller copies `copiesOut`; then it writes `ticket` to `flags->copiedOut[set]`.
/// Where `awaitsRelease` is false the copies out read only what the copies in wrote: the caller makes them at once,
/// without waiting for the release, and goes on while the call's messages leave. A call without copies in runs its
/// messages as soon as the set's last kernel ended (`copiedOut`), before the caller's stream gets to it. Where the
/// call's reductions are the GPU's (NetGroup::copiedCallPiece), its messages only move data and the copies out
/// are followed by `reductionsOut`, of `run`'s type and op, Avg dividing by `run.divisor` (copiedCallPiece).
struct AsyncCall {
  std::uint64_t ticket = 0;
  std::size_t set = 0;  ///< its slot set, ticket % kAsyncSets: the caller's copies of the set's last call came before
  std::vector<SlotCopy> copiesIn;
  std::vector<SlotCopy> copiesOut;
  std::vector<SlotReduction> reductionsOut;
  bool awaitsRelease = true;
  AsyncFlags* flags = nullptr;
  /// Set by the caller where it could not queue its side (a failed launch): the call's job then fails at once,
  /// breaking the world, and releases its ticket in order.
  std::shared_ptr<std::atomic<bool>> abandoned = std::make_shared<std::atomic<bool>>(false);
  CopiedPieceRun run;
  CallPiece piece;
  StagingSlots::Slot slot;
  CallContext context;
};

/// A piece of a call captured into a CUDA graph as async calls (NetGroup::prepareReplayed): prepared once, at the
/// capture, and run each time the graph runs. There the graph's start (a host function, coll/captured_calls.hpp)
/// calls NetGroup::startReplay for each of its calls in order, which takes a ticket for each of the call's pieces and
/// hands the call to the transport as one job; each piece's kernels wait for its ticket, then for its slot set to be
/// free (its last call's kernel and messages ended), and make the set's copies (`copiesIn[set]`, `copiesOut[set]`),
/// as an async call's kernel does. Where the piece's reductions are the GPU's (NetGroup::prepareReplayed), its
/// messages only move data, and its copy out makes them (`reductionsOut[set]`, of `run`'s type and op, Avg dividing
/// by `run.divisor`; copiedCallPiece).
struct ReplayedCall {
  std::array<std::vector<SlotCopy>, kAsyncSets> copiesIn;
  std::array<std::vector<SlotCopy>, kAsyncSets> copiesOut;
  std::array<std::vector<SlotReduction>, kAsyncSets> reductionsOut;
  bool awaitsRelease = true;
  AsyncFlags* flags = nullptr;
  CopiedPieceRun run;
  CallPiece piece;
};

/// A call whose pieces run on the progress thread while the caller goes on (NetGroup::prepareQueued): the caller
/// queues `deviceOps` on its device's copy stream (after its own stream's work so far: the copies in read the
/// caller's buffers), then its own stream's next work after them, and hands the call to the transport with
/// startQueued. The transport's thread takes each piece once the copy stream wrote its ticket to
/// `flags->pieceCopied`, runs its messages, and writes the ticket to `flags->pieceReady`, which the copy stream waits
/// for before it copies the piece out. Its copies and reductions are the host's, or, where `computations` is not
/// empty, the device's: piece p's are tickets `computations[p]` of `flags->computations`, each run by `kernel` on
/// the copy stream once asked (queued_computations.hpp); or, where its pieces' plans only move data
/// (NetGroup::copiedCallPiece), their copies out reduce (QueuedDeviceOp::Reduce, of `kernel`'s type and op). The
/// thread makes no call of the device: the copy stream never waits for work queued after it.
struct QueuedCall {
  std::vector<QueuedDeviceOp> deviceOps;
  AskedKernel kernel;
  AsyncFlags* flags = nullptr;
  /// Set by the caller where it could not queue its side: the call's job then fails at once, breaking the world,
  /// and marks every piece ready.
  std::shared_ptr<std::atomic<bool>> abandoned = std::make_shared<std::atomic<bool>>(false);
  // The transport's side.
  std::vector<CallPiece> pieces;
  std::vector<std::uint64_t> tickets;
  std::vector<StagingSlots::Slot> slots;
  std::vector<TicketRange> computations;
  std::size_t landingBytes = 0;  ///< of each slot, for the temporaries of the device's computations
  CopiedPieceRun run;
  CallContext context;
};

class NetWorld;

/// Some ranks of a world, this one among them; the collectives among them. Calls are collective: every member
/// makes the same calls in the same order. Any thread may call; calls run one at a time on the world's progress
/// thread, in the order they were made.
class NetGroup {
 public:
  int rank() const { return me_; }
  int size() const { return static_cast<int>(members_.size()); }
  /// The world ranks of the members, in group rank order.
  const std::vector<int>& members() const { return members_; }
  const std::string& name() const { return name_; }
  NetWorld& world() const { return world_; }

  void allReduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int avgDivisor = 0);
  void allGather(const void* send, void* recv, std::size_t count, DataType type);
  void reduceScatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int avgDivisor = 0);
  void broadcast(const void* send, void* recv, std::size_t count, DataType type, int root);
  void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
              int avgDivisor = 0);
  void allToAll(const void* send, void* recv, std::size_t count, DataType type);
  /// A send/recv group (NCCL's groupStart ... groupEnd of sends and recvs), peers as group ranks.
  void sendRecv(const std::vector<PeerOp>& ops, DataType type);

  /// The generic call: queued on the progress thread; waits until it ran (and throws its error).
  void run(const NetCall& call);

  /// Whether `call` may run async: PEERLINK_NET_ASYNC on, the staged path, one piece, its slots within
  /// kAsyncSlotBytes each, at most kAsyncCopiesMax copies each way. Makes the async slots at the first call. Its
  /// reductions are the copy out's where copiedCallPiece says, as a captured call's.
  bool asyncFits(const NetCall& call);
  /// The same for a send/recv group of `type` elements (sendRecv's).
  bool asyncFits(const std::vector<PeerOp>& ops, DataType type);
  /// The next async call of `call` (asyncFits; runCall's checks): its ticket, slot set, copies and flags. Waits on
  /// the host until the set's last call ended on the progress thread (kAsyncSets calls before; each has its
  /// deadlines). Error(RemoteError) where an earlier call broke the world.
  AsyncCall prepareAsync(const NetCall& call);
  /// The same for a send/recv group (asyncFits; runPeerOps's checks).
  AsyncCall prepareAsync(const std::vector<PeerOp>& ops, DataType type);
  /// prepareAsync where `call` fits (its plan built once), else nullopt.
  std::optional<AsyncCall> tryPrepareAsync(const NetCall& call);
  /// Hands `async` to the progress thread and returns: there, once its copiedIn flag reaches its ticket, its
  /// messages run, and then the ticket goes to the release flag -- also where it fails (the caller's copies in never
  /// done within the deadline, a lost peer, the call abandoned), after failedFrom, so that no caller waits forever;
  /// the world is then broken (brokenBy() says why, every later call throws it, and async calls already queued end
  /// at once).
  void startAsync(AsyncCall async);
  /// The caller could not queue the kernel of the async call `abandoned` belongs to (`why`): the call fails, and the
  /// world breaks at once -- a call without copies in may already have run its messages, and a kernel the driver
  /// queued despite the error may still read the call's slots.
  void abandonAsync(const std::shared_ptr<std::atomic<bool>>& abandoned, const std::string& why);

  /// `call` (a collective) captured into a CUDA graph as async calls, one per piece, in order, each piece the
  /// largest that fits the async slots (kAsyncSlotBytes) and kernel (asyncFits; runCall's checks); empty where none
  /// fits, or PEERLINK_NET_ASYNC is off, or the path is not staged. Takes no ticket: each run of the graph does
  /// (startReplay). Where the staged path reduces on the GPU, a one-shot plan's reductions (an all-reduce of 2 ranks,
  /// a reduce-scatter: coll::acrossNodesAlgorithm) are left to the pieces' copies out (copiedCallPiece): nothing waits
  /// for the host to reduce.
  std::vector<ReplayedCall> prepareReplayed(const NetCall& call);
  /// The same for a send/recv group of `type` elements (runPeerOps's checks): one async call per piece, the pieces
  /// cut alike on both ranks of a pair.
  std::vector<ReplayedCall> prepareReplayed(const std::vector<PeerOp>& ops, DataType type);
  /// One run of a call's `pieces` (prepareReplayed's; a graph's start's, holding `numbering`:
  /// NetWorld::lockNumbering, once for all the graph's calls): takes the next ticket for each piece, numbers the
  /// call, hands it to the progress thread as one job, which runs its pieces kPiecesInFlight at a time as a queued
  /// call's (each once its kernel copied it in) and releases each piece's ticket as it ends, and returns the first
  /// ticket (piece p's is first + p) for the kernels. Waits for nothing (the kernels wait for their slot sets); makes
  /// no CUDA call. Where the world broke, the job ends at once with the call failed and its tickets released; where
  /// the call cannot be started (out of memory) it fails, and the world with it.
  std::uint64_t startReplay(const std::vector<ReplayedCall>& pieces,
                            const std::unique_lock<std::mutex>& numbering) noexcept;

  /// Whether `call` may be queued (prepareQueued): PEERLINK_NET_ASYNC on, the staged path, a collective (not
  /// send/recv) with elements; where its copies and reductions are the device's (computesOnDevice), a piece's
  /// computations and one step's more fit the ticket ring (kAskedRing), and no reduction has more sources than a
  /// kernel takes.
  bool queuedFits(const NetCall& call) const;
  /// The next queued call of `call` (where queuedFits; runCall's checks): its pieces, their slots and tickets, and what
  /// the device does. Slots too small for its pieces grow first, once the copies of the calls queued before ended
  /// (within the deadline, else Error(Timeout)). Error(RemoteError) where an earlier call broke the world. The
  /// tickets are taken last: the caller must hand the call to startQueued.
  QueuedCall prepareQueued(const NetCall& call);
  /// The same for a send/recv group of `type` elements (its copies the host's: nothing to reduce): PEERLINK_NET_ASYNC
  /// on, the staged path, something to move, a group runPeerOps would run.
  bool queuedFits(const std::vector<PeerOp>& ops, DataType type) const;
  /// The next queued send/recv group (where queuedFits; runPeerOps's checks), as prepareQueued of a call.
  QueuedCall prepareQueued(const std::vector<PeerOp>& ops, DataType type);
  /// Hands `queued` to the progress thread and returns: there, in the order of every call, it runs its pieces
  /// (each once copied in; the deadline and a lost peer end the wait) and marks each ready -- every one, also where
  /// the call fails (its last piece's ticket at once), so that the device never waits forever; the world is then
  /// broken (as startAsync).
  void startQueued(QueuedCall queued);

 private:
  friend class NetWorld;
  NetGroup(NetWorld& world, std::vector<int> members, std::string name);
  CallContext context(const char* what);
  /// Whether a queued `call`, whose first piece's plan is `first`, has its copies and reductions made on the device,
  /// as the staged path would: it reduces, the world's staged memory is the device's, and PEERLINK_NET_REDUCE leaves
  /// its reductions to the GPU (not reducesOnHost under AUTO).
  bool computesOnDevice(const NetCall& call, const coll::Plan& first) const;
  /// A queued call of `pieces` (each piece's local copies still in its plan), its copies and reductions the device's
  /// where `onDevice`: slots, tickets, the device side; the call numbered last.
  QueuedCall prepareQueued(std::vector<CallPiece> pieces, CopiedPieceRun run, bool onDevice);
  /// The one piece of `call` where it may run async (asyncFits), its local copies taken out; else nullopt.
  std::optional<CallPiece> asyncPiece(const NetCall& call);
  /// The same for a send/recv group of `type` elements.
  std::optional<CallPiece> asyncPiece(const std::vector<PeerOp>& ops, DataType type);
  /// `plan` with this rank's final reductions taken out, and those reductions, where its copy out can make them
  /// (copiedCallPiece); nullopt otherwise.
  std::optional<std::pair<coll::Plan, std::vector<DeferredReduction>>> deferredInCopiesOut(
      const coll::Plan& plan) const;
  /// Piece p of `call` (pieces of `step` elements a block) as a call whose copies the caller queues runs it (async,
  /// queued, captured): callPiece's, its plan's final reductions left to the copy out (deferReductions) where the
  /// staged path's reductions are the GPU's.
  CallPiece copiedCallPiece(const NetCall& call, std::size_t p, std::size_t step) const;
  /// Whether `piece` fits a slot set and the kernel's copies and reductions; takes its local copies out
  /// (takeLocalCopies) on the way.
  bool asyncFits(CallPiece& piece, std::size_t elementSize);
  AsyncCall prepareAsync(CallPiece piece, CopiedPieceRun run, std::size_t elementSize);
  ReplayedCall prepareReplayed(CallPiece piece, CopiedPieceRun run, std::size_t elementSize);
  /// prepareReplayed's pieces of a call of `count` elements of `type` a block (`pieceOf(p, step)`: piece p of `step`
  /// elements a block): the largest step whose first piece fits an async call, halved from the transport's piece.
  std::vector<ReplayedCall> replayedPieces(std::size_t count, DataType type, const CopiedPieceRun& run,
                                           const std::function<CallPiece(std::size_t p, std::size_t step)>& pieceOf);
  /// Hands `calls` (an eager async call, or a captured call's pieces, their tickets following each other) to the
  /// progress thread as one job, under the numbering lock: their pieces run as runCopiedPieces runs a queued call's,
  /// each ticket released as its piece ends. Calls whose first ticket is not the next one submitted (another thread
  /// took one between) fail, from the first ticket not yet submitted, and break the world.
  void submitInOrder(std::vector<AsyncCall> calls);

  NetWorld& world_;
  std::vector<int> members_;
  int me_ = 0;
  std::string name_;
  std::uint64_t calls_ = 0;
  int tagBase_ = 0;
};

class NetWorld {
 public:
  /// Starts the progress thread and gathers every rank's identity (host id, host, pid) over `p2p`: collective.
  /// `device` makes the staged path's copies, and its stagedMemory() the staged path's reductions (HostMemory where
  /// it has none, or with NetReduce::Host; HostMemory too for pieces whose reductions are below
  /// options.gpuReduceMinBytes); `callerMemory` computes on the callers' buffers on the direct path (HostMemory for
  /// host buffers).
  NetWorld(std::unique_ptr<PointToPoint> p2p, NetOptions options, std::unique_ptr<DeviceAccess> device,
           std::unique_ptr<LocalMemory> callerMemory);
  /// Stops the progress thread. A broken world keeps its pinned memory (messages may still land in it).
  ~NetWorld();
  NetWorld(const NetWorld&) = delete;
  NetWorld& operator=(const NetWorld&) = delete;

  int rank() const { return p2p_->rank(); }
  int size() const { return p2p_->size(); }
  const std::vector<PeerIdentity>& peers() const { return peers_; }
  /// "rank 3 (host b, pid 42)".
  std::string describe(int rank) const;
  const NetOptions& options() const { return options_; }

  /// The nodes (nodeGridOf: every node the same number of ranks, node-major); Error(InvalidUsage) otherwise.
  coll::NodeGrid grid() const { return nodeGridOf(peers_); }
  /// This rank's node's ranks, and its rail (its local index on every node).
  NetGroup& node();
  NetGroup& rail();
  /// Any group of world ranks with this rank in it (every member asks for the same list).
  std::unique_ptr<NetGroup> group(std::vector<int> members, std::string name);

  /// Tells the world a rank is gone (e.g. from Bootstrap::onPeerLost): every wait, on any rank, fails at once with
  /// the first such `why` (the collective it belongs to cannot finish without the rank).
  void peerLost(int rank, const std::string& why);
  /// The first error a call of this world met (an async call's kernel that gave up waiting for its release is one),
  /// or empty.
  std::string brokenBy() const;
  /// The calls that returned once queued (async, queued and captured ones) that ended since the last reset, and the
  /// transport's seconds on them (QueuedCallTime).
  std::pair<std::uint64_t, double> queuedCallTime() const;
  void resetQueuedCallTime();
  /// Keeps every pinned buffer forever, whatever happens: for a caller whose own copies out of them may not have
  /// ended (an async call's, on a stream that did not get there).
  void keepPinnedMemory() noexcept;
  /// The lock the calls' numbers and tickets are taken under: a graph's start holds it while it starts its calls
  /// (NetGroup::startReplay), so that no other call is numbered among them.
  std::unique_lock<std::mutex> lockNumbering();

 private:
  friend class NetGroup;
  struct Job;
  void submitAndWait(const std::function<void()>& work);
  /// Queues `work` and returns; once it ran, the last of `tickets` (async calls') goes to the release flag -- where it
  /// failed, marked failed from the first of them first, also those `work` released already -- and `finally` runs,
  /// whatever happened (also where the world broke before it ran, which it then does not). Any error of it breaks the
  /// world: nobody waits for it.
  void submitAsync(std::function<void()> work, std::optional<AsyncTickets> tickets, std::function<void()> finally = {});
  /// Marks async call `ticket` and every later one failed (AsyncFlags::failedFrom only goes down).
  void failFrom(std::uint64_t ticket) noexcept;
  /// Async calls up to `ticket` ended (AsyncFlags::release, which never goes back). The progress thread's.
  void releaseThrough(std::uint64_t ticket) noexcept;
  /// Marks the world broken by `why` (unless it already is) and keeps its pinned memory: for a failure on the
  /// caller's thread that leaves this rank out of step with its peers.
  void breakWith(const std::string& why);
  void progress();
  std::string lostWhy() const;
  /// Keeps the staged path's memory forever (messages or queued work of a broken world may still use it). Under
  /// the mutex.
  void leakStaged() noexcept;
  /// The async calls' slot sets, made once.
  void makeAsyncSlots();
  /// Error(RemoteError) saying the world broke, why, and that it cannot be used again.
  Error brokenError(const std::string& why) const;

  std::unique_ptr<PointToPoint> p2p_;
  NetOptions options_;
  std::unique_ptr<DeviceAccess> device_;
  std::unique_ptr<LocalMemory> callerMemory_;
  std::unique_ptr<LocalMemory> stagedMemory_;
  std::unique_ptr<LocalMemory> stagedOnHost_;  ///< small reductions where stagedMemory_ is the device's; else null
  bool stagedOnDevice_ = false;                ///< stagedMemory_ is the device's (its reductions on the GPU)
  StagingSlots slots_;
  StagingSlots queuedSlots_;  ///< the queued calls' (their copies run on the device while the thread runs others)
  std::array<StagingSlots::Slot, kAsyncSets> asyncSlots_{};  ///< allocated at the first async call
  std::unique_ptr<LocalMemory>
      asyncMemory_;  ///< where async calls' plans reduce: the host (nothing the GPU runs may wait for them)
  AsyncFlags* asyncFlags_ = nullptr;            ///< in the device's host memory
  std::unique_ptr<AskedTickets> askedTickets_;  ///< the progress thread's side of asyncFlags_->computations
  /// The calls' numbers and tickets: taken on the caller's thread, and by CUDA's host functions for graphs' calls.
  std::mutex numbering_;
  QueuedCallTime queuedTime_;
  std::uint64_t tickets_ = 0;           ///< the last ticket given (under numbering_)
  std::uint64_t submittedTickets_ = 0;  ///< the last async call's ticket handed to the thread (under numbering_)
  std::uint64_t pieceTickets_ = 0;      ///< the last queued piece's ticket (the caller's thread)
  std::uint64_t computeTickets_ = 0;    ///< the last queued computation's ticket (the caller's thread)
  bool leaked_ = false;                 ///< under the mutex: the staged and async slots kept
  bool keptForCaller_ = false;          ///< under the mutex: the async flags kept too (keepPinnedMemory)
  std::vector<PeerIdentity> peers_;
  std::unique_ptr<NetGroup> node_;
  std::unique_ptr<NetGroup> rail_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<std::size_t> queued_{0};  ///< queue_.size(), for the progress thread's look without the mutex
  std::string lost_;                    ///< the first rank lost, why
  std::string broken_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace peerlink::net
