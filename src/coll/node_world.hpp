// A communicator rank whose world spans hosts: the node's own communicator (the ranks of this host, on peerlink's
// NVLink kernels) and the transport between nodes (src/net/, MPI point-to-point through libpeerlink_mpi.so), and
// every call of the public API carried out as a hierarchical plan (hierarchical_plan.hpp) over them, eagerly. The
// decisions are node_decisions.hpp's; docs/multinode.md is the users' guide.
//
// One rank per process; communicator rank r is MPI_COMM_WORLD's rank r (checked at creation); MPI initialized with
// MPI_THREAD_MULTIPLE before, finalized after the communicator is destroyed. Phases in the node are the node
// communicator's calls on the caller's stream. A phase across nodes, staged with PEERLINK_NET_ASYNC on, returns once
// queued: a small one is one kernel on the caller's stream (runAsync), any other is copies on the transport's copy
// stream, queued at once after the caller's stream's work, with its messages on the progress thread (runQueued).
// Otherwise (and for send/recv groups too large for the kernel) the call blocks the host: its copies wait for the
// caller's stream (bounded by PEERLINK_NET_TIMEOUT_MS), it runs on the progress thread until its results' copies to the
// caller's buffers are queued, which the caller's stream then waits for. Inside a CUDA graph capture, calls whose
// phases across nodes each fit an async call are captured (captured_calls.hpp); others are refused.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "coll/captured_calls.hpp"
#include "coll/comm_state.hpp"
#include "coll/hierarchical_plan.hpp"
#include "coll/recent_plans.hpp"
#include "net/cuda_device_access.hpp"
#include "net/net_world.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

/// The time a rank's calls spent across nodes, summed: a call that waits, from the transport's start until its
/// results' copies to the caller's buffers are queued (the caller's stream waited for before it is not counted); a
/// call that returns once queued (async, queued, captured), the transport's thread's, from its first piece's copies
/// in done to its last piece's results in pinned memory (net::QueuedCallTime; a rank that copies out without waiting
/// for them, as a broadcast's root, may read before its last call is in).
struct AcrossNodesTime {
  std::uint64_t calls = 0;  ///< calls of the transport (an all-reduce makes one, a send/recv group one per pair)
  double seconds = 0;
};

class NodeWorld {
 public:
  /// Collective over every rank of the communicator (`bootstrap` is this rank's, connected to all of them): MPI
  /// checked on every rank (an error names the rank that cannot use it, or is not the MPI rank it must be), the
  /// node's communicator made (its id from the node's first rank over the bootstrap), the transport made.
  NodeWorld(Bootstrap& bootstrap, NodeGrid grid, int device, const Params& params);
  ~NodeWorld();
  NodeWorld(const NodeWorld&) = delete;
  NodeWorld& operator=(const NodeWorld&) = delete;

  const NodeGrid& grid() const { return grid_; }
  int rank() const { return rank_; }
  /// The CUDA ordinal of `rank`'s GPU: this rank's; Error(InvalidUsage) naming where another rank is.
  int device(int rank) const;
  /// Error(InvalidUsage) unless `rank` is this process's.
  void checkLocal(int rank, const char* what) const;

  /// What CommState the communicator's other files read (size, local ranks, devices, for validateCall).
  void describeTo(CommState& state, const Params& params) const;
  /// A call of the public API, checked (validateCall on `state`, which describeTo filled): a collective runs now; a
  /// send/recv joins state.group inside a group, else runs as a group of its own.
  void submit(CommState& state, const CallArgs& call);
  /// A collective of the public API (not send/recv): queued now, or captured where `call.stream` is capturing
  /// (Error(Unsupported) for a phase across nodes too large for an async call).
  void collective(const CallArgs& call);
  /// This rank's send/recv group (communicator.hpp's groupStart ... groupEnd, or one call outside a group); captured
  /// as `collective` is, where its pairs across nodes each fit an async call on one stream.
  void peerCalls(const std::vector<CallArgs>& calls);

  /// Which way a call of `collective` with `bytes` per rank goes.
  std::string describeChoice(Collective collective, std::size_t bytes) const;
  /// The node communicator's stalls and losses, a broken transport, a lost rank.
  void checkHealth();
  /// A rank of the communicator is gone (the bootstrap's watchdog): every wait fails at once naming it.
  void peerLost(int rank, const std::string& why);
  /// The application gives up: the node's communicator aborts, the transport's waits end.
  void abort() noexcept;
  /// The node's communicator (registered windows are its).
  Communicator& node() { return *node_; }
  /// The calls across nodes since the last reset (`peerlink coll` times the phases across nodes with it). Read and
  /// reset from the thread that makes the calls.
  AcrossNodesTime acrossNodesTime() const;
  void resetAcrossNodesTime();

 private:
  void waitForStream(cudaStream_t stream, const char* before);
  /// The transport's next call reads the data the caller's stream holds once its work so far is done.
  void orderTransportAfter(cudaStream_t stream, const char* before);
  /// `async` (net::NetGroup::prepareAsync) on `group`: one kernel on `stream` copies in, tells the transport, waits
  /// for its release and copies out; returns once queued.
  void runAsync(net::NetGroup& group, net::AsyncCall async, cudaStream_t stream);
  /// `queued` (net::NetGroup::prepareQueued) on `group`: its copies on the transport's copy stream after `stream`'s
  /// work so far, `stream`'s next work after them, its messages on the progress thread; returns at once (but for the
  /// copy stream's queue filling up, for a call of many pieces).
  void runQueued(net::NetGroup& group, net::QueuedCall queued, cudaStream_t stream);
  /// Error(Timeout): the work on this rank's stream before `before` did not finish within the transport's deadline.
  Error streamStalled(const char* before) const;
  void ensureScratch(std::size_t bytes, cudaStream_t stream, bool capturing);
  /// An eager call across nodes while a graph holding captured calls may still run: the stream's work so far (any
  /// graph's host functions among it) done first, so that this call is numbered after the graph's, as on every rank.
  void afterGraphs(cudaStream_t stream);
  /// How long an async call's kernel waits for the transport at most: twice its deadline.
  std::uint64_t kernelTimeoutNs() const;
  template <typename Fn>
  void inNode(const char* what, Fn&& body);
  template <typename Fn>
  void acrossNodes(const char* what, Fn&& body);
  std::string lost() const;
  net::NetGroup& pairGroup(int peer);

  /// What a call's hierarchical plan depends on besides the grid (fixed at creation).
  struct PlanKey {
    CallShapeKey shape;
    bool inPlace = false;
    bool operator==(const PlanKey& other) const noexcept { return shape == other.shape && inPlace == other.inPlace; }
  };

  NodeGrid grid_;
  int rank_ = 0;
  int device_ = 0;
  std::string host_;
  std::string pathName_;
  std::vector<PeerIdentity> peers_;
  DeviceBuffer scratch_;
  Event done_;         ///< after the last call's work on its stream: the scratch is free again
  Event queuedAfter_;  ///< on the caller's stream before a queued call: its copies wait for it
  bool doneRecorded_ = false;
  /// Staged: the transport's copies out of the caller's memory wait for its stream on the GPU; direct: MPI reads the
  /// caller's memory itself, so the host waits for the stream first.
  bool copiesFollowStream_ = false;
  /// Staged and PEERLINK_NET_ASYNC on: small calls across nodes run async (the rail says which fit).
  bool asyncCalls_ = false;
  /// Async calls on, and streams that can wait for and write 64-bit values: calls across nodes too large for an async
  /// call's kernel are queued (runQueued).
  bool queuedCalls_ = false;
  bool queuedAny_ = false;  ///< a call was queued: the copy stream may wait for the transport's flags
  /// Per slot set of async calls: an event after its last kernel (the set's next kernel waits for it, whatever its
  /// stream).
  struct AsyncSet {
    Event done;
    bool used = false;
  };
  std::array<AsyncSet, net::kAsyncSets> asyncSets_;
  CapturedCalls captured_;
  bool capturedAny_ = false;  ///< a call was captured: graphs may read the scratch of their capture at any time
  std::vector<DeviceBuffer> retiredScratch_;  ///< scratch a graph may still read (kept until the end)
  AcrossNodesTime acrossTime_;
  mutable std::mutex lostMutex_;
  std::string lost_;
  std::unique_ptr<Communicator> node_;
  std::unique_ptr<net::NetWorld> net_;       ///< destroyed first: its progress thread may still copy into the buffers
  net::CudaDeviceAccess* copies_ = nullptr;  ///< net_'s copies to and from pinned memory
  std::map<int, std::unique_ptr<net::NetGroup>> pairs_;
  /// The plans of the latest call shapes: building one costs microseconds per call, as much as a small call's
  /// messages between nodes.
  RecentValues<PlanKey, HierarchicalPlan> plans_{kRecentPlanShapes};
};

}  // namespace peerlink::coll
