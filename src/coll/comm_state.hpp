// The communicator's state (peerlink::Communicator keeps one): the ranks' devices and symmetric resources,
// the peer pointer tables the kernels take, and the calls waiting for their partners.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "coll/arena_ring.hpp"
#include "coll/call_sharing.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/launch_threads.hpp"
#include "coll/plan_executor.hpp"
#include "coll/plan_stages.hpp"
#include "coll/rank_links.hpp"
#include "coll/recent_plans.hpp"
#include "coll/staged_graphs.hpp"
#include "coll/staging_schedule.hpp"
#include "coll/symmetric_layout.hpp"
#include "coll/user_windows.hpp"
#include "coll/world.hpp"
#include "core/gpu_work.hpp"
#include "kernels/coll_kernels.cuh"
#include "kernels/kernel_graph.hpp"
#include "peerlink/collective_choice.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/params.hpp"
#include "peerlink/shared_memory.hpp"
#include "peerlink/topology.hpp"
#include "transport/peer_access.hpp"

namespace peerlink::coll {

/// One rank's call as the caller made it (a send or recv too: peer and isSend).
struct CallArgs {
  Collective collective = Collective::AllReduce;
  int rank = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  ///< as the API counts it (per rank for allGather's send, reduceScatter's recv, ...)
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  cudaStream_t stream = nullptr;
  int peer = -1;        ///< send/recv: the other rank
  bool isSend = false;  ///< send/recv: which of the two
};

/// One rank's arena (symmetric_layout.hpp): every buffer its peers reach, in one allocation on its GPU. In one
/// process a cudaMalloc allocation, which peers reach through peer access; when the world spans processes an
/// exportable one (cuMem with a POSIX fd, or legacy IPC), which the other processes map.
struct RankArena {
  DeviceBuffer local;
  std::unique_ptr<ExportableBuffer> shared;
  void* base() const noexcept { return shared ? shared->data() : local.data(); }
};

/// A rank's second stream, on which a staged call's copies into and out of its window run while the kernels run on
/// the caller's stream, and the events of that schedule (staging_schedule.hpp); and the stream a call is captured
/// on in the caller's stead (staged_graphs.hpp).
struct StagingStreams {
  explicit StagingStreams(int device);
  Stream copies;
  std::array<Event, kStagingEvents> events;
  Stream capture;
};

/// What one rank owns, on its GPU (only the ranks this process drives have them).
struct RankResources {
  int device = -1;
  CUcontext context = nullptr;  ///< the GPU's primary context: a stream of it belongs to this GPU
  int smCount = 0;
  int computeMajor = 0;  ///< the GPU's compute capability, major part
  RankArena arena;       ///< flags, lines, stages, staging window: reached by every peer
  DeviceBuffer sync;     ///< kernels::CollRankSync, zeroed: this rank's counters, read by its own kernels only
  /// Eager launches on this GPU (kernel_graph.hpp); null under PEERLINK_COLL_EAGER_GRAPHS=0 (direct launches).
  std::unique_ptr<kernels::KernelGraph> eagerGraph;
  /// The copy-engine collectives' second stream and its fork and join events (comm_launch_copy_engine.cc):
  /// the pushes to the peers run there while the caller's stream makes the local copy.
  Stream copyStream;
  Event forkEvent;
  Event joinEvent;
  /// Where the communicator has staging windows: the staged calls' copy stream and events.
  std::unique_ptr<StagingStreams> staging;
  /// Where it has the arena ring: its blocks' states (kernels::HostRingBlockState, zeroed), read by this rank only.
  DeviceBuffer ringState;
};

/// The symmetric part of every kernel's arguments: each rank's flag area, lines and stages as one rank's GPU
/// addresses them. In one process a peer's cudaMalloc pointer is valid on every GPU (peer access, UVA), so
/// every local rank's table is the same; a peer in another process is reached through this rank's mapping
/// of its arena (ImportedBuffer), and the kernels do not change.
struct SymmetricTable {
  unsigned long long* flags[kernels::kCollMaxRanks] = {};
  void* scratch[kernels::kCollMaxRanks] = {};
  void* ll128Scratch[kernels::kCollMaxRanks] = {};
  void* p2pScratch[kernels::kCollMaxRanks] = {};
  void* stage[kernels::kCollMaxRanks] = {};
  void* ringStage[kernels::kCollMaxRanks] = {};
  void* window[kernels::kCollMaxRanks] = {};  ///< staging windows (a world that spans processes, or the testing switch)
  void* ringArea[kernels::kCollMaxRanks] = {};  ///< the arena ring's areas (arena_ring.hpp), beside the windows
};

/// Sets rank `rank`'s entries of `table` to its arena at `base` (as the table's GPU addresses it).
void setTableRank(SymmetricTable& table, int rank, const SymmetricLayout& layout, void* base);

/// Every rank's user buffers for one matched call, as the launching GPU addresses them: in one process the
/// callers' pointers (peer access makes any GPU's cudaMalloc memory addressable); across processes, on
/// registered windows, each local GPU's mappings of the other processes' buffers (SetPointers, comm_launch.hpp).
struct PeerPointerTable {
  const void* send[kernels::kCollMaxRanks] = {};
  void* recv[kernels::kCollMaxRanks] = {};
  /// Bytes from one block of rank p's send to the next where they are not adjacent, 0 where they are: a staged
  /// all-to-all rank's kernel reads its own blocks of a chunk in the caller's buffer, a whole block apart.
  std::size_t sendPitch[kernels::kCollMaxRanks] = {};
};

/// A kernel choice and the call facts it was made for.
struct ChoiceMemo {
  bool valid = false;
  std::size_t bytes = 0;
  Fact inPlace = Fact::No;
  Fact aligned = Fact::No;
  CollectiveChoice choice;
};

/// A collective's latest kernel choices: a staged call asks for its whole size and for its chunks' in turn, and
/// a loop of calls of a few sizes (a model's buckets) should build no reasons after the first of each.
struct ChoiceMemos {
  std::array<ChoiceMemo, 4> entries;
  std::size_t next = 0;  ///< the entry a new choice replaces
};

/// The staged plans' resources (comm_launch_plan.hpp): a communicator has them when some pair of its ranks is not
/// Direct, and then runs every call through the plans.
struct PlannedWays {
  RankLinks links;
  std::size_t chunkBytes = 0;         ///< the plans' chunk (stagedChunkBytes)
  bool oneKernel = true;              ///< plans that fit run as one kernel a rank (PEERLINK_COLL_STAGED_KERNEL)
  std::vector<DeviceBuffer> scratch;  ///< by rank (local ranks): kPlanStageBytes on its GPU
  std::vector<void*> lines;  ///< by rank (every rank): its LL area in host memory (small calls), device-addressable
  std::vector<void*> stage;  ///< by rank (every rank): its host stage, as this process addresses it
  std::vector<unsigned long long*> flags;  ///< by rank (every rank): its step flags (plan_barrier.cuh), host memory
  /// By rank (every rank): its host ring area (kernels/host_ring.cuh) in host memory, after its LL area,
  /// device-addressable.
  std::vector<unsigned char*> ring;
  std::vector<int> ringOrder;        ///< the host ring's order, as the staged plans' (chooseRing)
  std::size_t hostRingMaxBytes = 0;  ///< calls up to this run as the host ring (PEERLINK_COLL_HOST_RING)
  /// The host ring's grid and slot where PEERLINK_COLL_HOST_RING_SHAPE sets one (else hostRingShape's per call).
  std::optional<HostRingShape> hostRingShape;
  std::vector<DeviceBuffer> counters;  ///< by rank (local ranks): its step barriers and send/recv chunks, on its GPU
  std::vector<std::unique_ptr<OwnedCopyLanes>> lanes;  ///< by rank (local ranks): its copy lanes (plan_executor.hpp)
  /// Where stages and flags live: one process, a mapped pinned buffer per rank (kPlanFlagBytes of flags, its LL
  /// area, then the stage); across processes, shared host memory every process maps, laid out alike.
  std::vector<PinnedBuffer> pinned;
  std::unique_ptr<SharedPlanStages> shared;
  RecentPlans recent;  ///< the plans of the latest call shapes (under the communicator's mutex, as every launch)
  /// By rank (local ranks): the failure record's launch id when the rank's plan-run grid words were last zeroed. A
  /// run that failed may leave them counting a late block's arrival; the next run zeroes them first.
  std::vector<unsigned long long> gridZeroedAt;
};

/// How much scratch and host stage each rank of a communicator with staged plans keeps: a call's plans reuse chunk
/// slots in them (plan_slots.hpp), in segments that fit (segment_plans.hpp).
constexpr std::size_t kPlanStageBytes = std::size_t{32} << 20;

// A hop's chunk unless PEERLINK_COLL_STAGED_CHUNK says otherwise. Every step pays a meeting of the ranks' streams
// (about 20 us on an H200), which larger chunks spread over more bytes at the cost of a longer fill and drain; 4 MiB
// moved the most of the sizes compared (bench/results/2026-11-29-h200x1-staged-slots/, call t6). Plans deeper than
// the stages halve it (stagedSegments).
constexpr std::size_t kPlanChunkBytes = std::size_t{4} << 20;

/// The grid of the plan-run kernel (plan_run.cuh), within the communicator's: enough threads to keep a GPU's link
/// to host memory busy with their loads and stores, few enough to stay resident beside other kernels.
constexpr int kPlanRunBlocks = 32;

/// The staged plans' small calls -- messages of up to kPlanLlMaxBytes a rank -- go as one LL kernel a rank through
/// the ranks' LL areas in host memory instead (comm_launch_plan.hpp): a plan's steps each cost a meeting of the
/// ranks (about 20 us on an H200), a whole small call in LL lines about as much as one. An LL line carries 8 bytes
/// of payload in 16, so a slot holds twice the largest message.
constexpr std::size_t kPlanLlMaxBytes = std::size_t{256} << 10;
constexpr unsigned char kPlanLlSlotShift = 19;
static_assert(std::size_t{1} << kPlanLlSlotShift == 2 * kPlanLlMaxBytes, "an LL slot holds the largest message");

/// A rank's LL area in host memory: a slot per parity and sender (coll_ll.cu).
inline std::size_t planLlAreaBytes(int nranks) {
  return 2 * static_cast<std::size_t>(nranks) << kPlanLlSlotShift;
}

struct CommState {
  Params params;
  Topology topology;         ///< this process's
  World world;               ///< every rank, as every rank knows it (world.hpp)
  std::vector<int> devices;  ///< by rank: the CUDA ordinal of a local rank's GPU, -1 for a rank of another process
  int nranks = 0;
  std::vector<RankResources> ranks;     ///< by rank; set up for local ranks only
  SymmetricLayout layout;               ///< every rank's arena (the same layout on every rank)
  std::vector<SymmetricTable> tables;   ///< by rank: the arenas as a local rank's GPU addresses them
  std::vector<ImportedBuffer> imports;  ///< arenas of ranks in other processes, mapped here
  UserWindows windows;                  ///< the application's registered buffers (user_windows.hpp)
  PinnedBuffer failures;                ///< kernels::CollFailure[nranks], mapped: kernels report stalls here
  /// The abort word (mapped host memory the communicator's owner keeps, outliving this state): set once a peer
  /// is lost or the application aborts; every kernel's wait gives up. Null: the kernels read none.
  unsigned int* abortWord = nullptr;
  PeerAccessTable peerAccess;
  std::uint64_t timeoutNs = 0;
  ChoiceSettings settings;         ///< PEERLINK_ALGO, PEERLINK_PROTO, PEERLINK_COLL_PUSH, PEERLINK_COLL_CE
  CollectiveFabric fabric;         ///< the links between the ranks' GPUs, for the kernel choice
  int maxBlocks = 1;               ///< grid cap: the smallest SM count of the ranks' GPUs, or PEERLINK_COLL_MAX_BLOCKS
  std::size_t ringChunkBytes = 0;  ///< PEERLINK_COLL_RING_CHUNK: the rings' largest chunk, 0 each kernel's own
  int ringReduceBlocks = 0;        ///< PEERLINK_COLL_RING_REDUCE_BLOCKS: the reduce's chain grid, 0 its own
  bool overlapLaunches = false;    ///< direct launches overlap the previous kernel (PEERLINK_COLL_PDL; comm_setup.cc)
  /// PEERLINK_COLL_STAGE_UNREGISTERED (testing): a world in one process runs its calls through the staging windows
  /// as ranks in different processes do with unregistered buffers; `stageSerially`: a staged call's chunks one
  /// after another on the caller's stream instead of pipelined (comm_launch_staged.hpp).
  bool stageInOneProcess = false;
  bool stageSerially = false;
  /// PEERLINK_COLL_STAGE_COPIES=PEERS: a staged chunk copies only the parts the peers touch (staging_plan.hpp).
  bool stageOwnParts = true;
  /// PEERLINK_COLL_ARENA_RING and _SHAPE: which calls that would go through the staging windows run as the arena
  /// ring instead, and on what grid (arena_ring.hpp).
  ArenaRingMode arenaRing = ArenaRingMode::Auto;
  std::optional<HostRingShape> arenaRingShape;
  /// PEERLINK_COLL_STAGE_GRAPHS=ON: staged calls that come back replay a graph (staged_graphs.hpp); else null.
  std::unique_ptr<StagedGraphs> stagedGraphs;
  /// Calls on unregistered buffers that share them with the peers at the call (PEERLINK_COLL_SHARE_BUFFERS,
  /// shared_calls.hpp), and whose windows stay open.
  SharedCalls shared;
  /// Non-null when some pair of ranks is not Direct (rank_transport.hpp): every call runs as a staged plan.
  std::unique_ptr<PlannedWays> planned;

  std::vector<std::deque<CallArgs>> pending;  ///< per rank: collectives waiting for the other ranks
  std::vector<CallArgs> group;                ///< send/recv calls of the open group
  int groupDepth = 0;
  std::vector<CallArgs> loose;               ///< send/recv outside a group, waiting for their partner
  std::vector<unsigned long long> reported;  ///< per rank: the last failure launch id reported
  /// Guards `reported` and `lastFailure`: the failure records are read from any thread (asyncError) without the
  /// communicator's lock, which a call may hold for long (a registration waiting on the other processes).
  std::unique_ptr<std::mutex> health = std::make_unique<std::mutex>();
  std::optional<Error> lastFailure;  ///< the latest failure reported: asyncError keeps saying it (comm_health.hpp)
  std::array<bool, 7 * kKernelCount> logged = {};        ///< (collective, kernel) choices logged once
  std::array<bool, 7 * kKernelCount> steppedAside = {};  ///< (collective, kernel): a fallback logged once
  std::array<ChoiceMemos, 7> choices;                    ///< per collective: the latest kernel choices
  /// Ways a call across processes reaches its peers' data (communicator.cc's COLL log): LL lines, registered
  /// windows, the staging windows, shared at the call, the arena ring.
  static constexpr std::size_t kReachWays = 5;
  std::array<bool, 7 * kReachWays> reachLogged = {};  ///< (collective, the path's way) logged once
  std::uint64_t sets = 0;                             ///< collective sets launched (for messages)

  /// An event behind the latest launch on each stream the local ranks' calls used (LaunchTracking,
  /// comm_teardown.hpp): what the teardown waits for instead of the devices. Null where `nodes` runs the calls.
  std::unique_ptr<WorkTracker> work;

  /// Eager sets' per-rank launches side by side (PEERLINK_COLL_LAUNCH_THREADS; comm_setup.cc); null: the
  /// calling thread launches every rank's. Last, so its threads stop before anything else goes.
  std::unique_ptr<LaunchThreads> launchThreads;
  /// The set being launched has a call on cudaStreamPerThread: its ranks' launches stay on the calling thread
  /// (forEachRank), whose per-thread stream it names (LaunchTracking sets it).
  bool launchOnCaller = false;

  kernels::CollFailure* failure(int rank) const { return static_cast<kernels::CollFailure*>(failures.data()) + rank; }
  const std::vector<int>& localRanks() const noexcept { return world.localRanks; }
  /// The symmetric buffers of every rank as local rank `rank`'s GPU addresses them.
  const SymmetricTable& tableOf(int rank) const { return tables[static_cast<std::size_t>(rank)]; }
};

}  // namespace peerlink::coll
