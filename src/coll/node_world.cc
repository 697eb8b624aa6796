// NodeWorld (node_world.hpp): every call of the API as a hierarchical plan (creation: node_world_creation.cc).
#include "coll/node_world.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "coll/comm_validation.hpp"
#include "coll/node_decisions.hpp"
#include "core/cuda_check.hpp"
#include "core/idle_wait.hpp"
#include "kernels/async_call.cuh"
#include "net/cuda_device_access.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

void NodeWorld::submit(CommState& state, const CallArgs& call) {
  checkLocal(call.rank, callName(call.collective, call.isSend));
  validateCall(state, call);
  if (call.collective != Collective::SendRecv) {
    collective(call);
  } else if (state.groupDepth > 0) {
    state.group.push_back(call);
  } else {
    peerCalls({call});
  }
}

void NodeWorld::describeTo(CommState& state, const Params& params) const {
  state.params = params;
  state.nranks = grid_.size();
  state.devices.assign(static_cast<std::size_t>(grid_.size()), -1);
  state.devices[static_cast<std::size_t>(rank_)] = device_;
  state.world.nranks = grid_.size();
  state.world.localRanks = {rank_};
  state.world.spansProcesses = true;
}

int NodeWorld::device(int rank) const {
  checkLocal(rank, "Communicator::device");
  return device_;
}

void NodeWorld::checkLocal(int rank, const char* what) const {
  if (rank < 0 || rank >= grid_.size()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}: rank {} is out of range (ranks 0..{})", what, rank, grid_.size() - 1));
  }
  if (rank != rank_) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}: rank {} lives in another process ({}, node {}); call it there", what, rank,
                            describePeer(peers_[static_cast<std::size_t>(rank)]), grid_.nodeOf(rank)));
  }
}

std::string NodeWorld::lost() const {
  const std::lock_guard<std::mutex> lock(lostMutex_);
  return lost_;
}

void NodeWorld::peerLost(int rank, const std::string& why) {
  {
    const std::lock_guard<std::mutex> lock(lostMutex_);
    if (lost_.empty()) lost_ = why;
  }
  if (net_) net_->peerLost(rank, why);
}

void NodeWorld::abort() noexcept {
  peerLost(rank_, "rank " + std::to_string(rank_) + " aborted its communicator (Communicator::abort)");
  if (node_) node_->abort();
}

Error NodeWorld::streamStalled(const char* before) const {
  return Error(ErrorCode::Timeout,
               fmt::format("rank {} (host {}): the work on its stream before {} did not finish within {} ms "
                           "(PEERLINK_NET_TIMEOUT_MS; a kernel of the node that waits for a peer?)",
                           rank_, host_, before, net_->options().timeout.count()));
}

// The caller's stream's work so far done, polled against the transport's deadline: the transport's copies run on a
// stream of their own and read the data as it is when the call starts.
void NodeWorld::waitForStream(cudaStream_t stream, const char* before) {
  PEERLINK_CUDA_CHECK(cudaEventRecord(done_.get(), stream));
  doneRecorded_ = true;
  const auto timeout = net_->options().timeout;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  IdleWait idle;
  for (;;) {
    const cudaError_t status = cudaEventQuery(done_.get());
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) PEERLINK_CUDA_CHECK(status);
    const std::string why = lost();
    if (!why.empty()) throw Error(ErrorCode::RemoteError, "Communicator: " + why);
    if (std::chrono::steady_clock::now() > deadline) throw streamStalled(before);
    idle.idle();
  }
}

// Staged, only the transport's copies read the caller's memory: the copy stream waits for the caller's, and a small
// call saves the host's wait for the stream and the copy's launch after it. The deadline is the transport's, on the
// copy (acrossNodes names the stream when the copy never started).
void NodeWorld::orderTransportAfter(cudaStream_t stream, const char* before) {
  if (!copiesFollowStream_) return waitForStream(stream, before);
  PEERLINK_CUDA_CHECK(cudaEventRecord(done_.get(), stream));
  doneRecorded_ = true;
  copies_->orderCopiesAfter(done_.get());
}

void NodeWorld::ensureScratch(std::size_t bytes, cudaStream_t stream, bool capturing) {
  // A capture waits for no event recorded outside it: a graph uses the scratch in its stream's order (calls across
  // nodes of one communicator are on one stream, or on streams the caller orders).
  if (doneRecorded_ && !capturing) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, done_.get(), 0));
  if (!capturing && !retiredScratch_.empty() && !captured_.anyAlive()) {
    // Every graph that could read them is gone; this stream's calls may still (streams of calls across nodes are
    // ordered: docs/multinode.md).
    waitForStream(stream, "old scratch is freed");
    retiredScratch_.clear();
  }
  if (bytes <= scratch_.size()) return;
  if (capturing || capturedAny_) {
    // A graph captured with the old scratch reads it whenever it runs.
    const RelaxedCaptureMode relaxed;
    DeviceBuffer grown(device_, bytes);
    if (scratch_.size() > 0) retiredScratch_.push_back(std::move(scratch_));
    scratch_ = std::move(grown);
    return;
  }
  // The old scratch may still be read by the last call's kernels.
  if (doneRecorded_) waitForStream(stream, "the scratch grows");
  scratch_ = DeviceBuffer();
  scratch_ = DeviceBuffer(device_, bytes);
}

void NodeWorld::afterGraphs(cudaStream_t stream) {
  if (captured_.anyAlive()) waitForStream(stream, "a call across nodes after a CUDA graph's calls");
}

std::uint64_t NodeWorld::kernelTimeoutNs() const {
  return 2 * static_cast<std::uint64_t>(net_->options().timeout.count()) * 1000000;
}

template <typename Fn>
void NodeWorld::inNode(const char* what, Fn&& body) {
  try {
    body();
  } catch (const Error& error) {
    // A rank of the node lost: the node's communicator names it by its rank there; the world's bootstrap, which saw
    // the same process go, names it by its rank here, usually a moment later.
    std::string why = lost();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (why.empty() && error.code() == ErrorCode::RemoteError && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      why = lost();
    }
    if (!why.empty()) throw Error(ErrorCode::RemoteError, "Communicator: " + why);
    throw Error(error.code(), fmt::format("{} in node {} (host {}; the node communicator's rank {} is rank {}): {}",
                                          what, grid_.nodeOf(rank_), host_, grid_.localOf(rank_), rank_, error.what()));
  }
}

AcrossNodesTime NodeWorld::acrossNodesTime() const {
  AcrossNodesTime time = acrossTime_;
  if (net_) {
    const auto [calls, seconds] = net_->queuedCallTime();
    time.calls += calls;
    time.seconds += seconds;
  }
  return time;
}

void NodeWorld::resetAcrossNodesTime() {
  acrossTime_ = {};
  if (net_) net_->resetQueuedCallTime();
}

template <typename Fn>
void NodeWorld::acrossNodes(const char* what, Fn&& body) {
  const auto start = std::chrono::steady_clock::now();
  try {
    body();
  } catch (const Error& error) {
    // The transport's copies waited for the caller's stream on the GPU: a copy that timed out may never have
    // started, because the work before it on the caller's stream did not end.
    if (error.code() != ErrorCode::Timeout || !copiesFollowStream_ ||
        cudaEventQuery(done_.get()) != cudaErrorNotReady) {
      throw;
    }
    throw streamStalled(what);
  }
  acrossTime_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++acrossTime_.calls;
}

void NodeWorld::collective(const CallArgs& call) {
  const bool capturing = streamCapturing(call.stream);
  if (const std::string why = lost(); !why.empty()) throw Error(ErrorCode::RemoteError, "Communicator: " + why);
  std::optional<RelaxedCaptureMode> relaxed;  // the first call may allocate the transport's pinned slots
  if (capturing) relaxed.emplace();
  const DeviceGuard guard(device_);
  const std::size_t size = dataTypeSize(call.type);
  const bool inPlace = callInPlace(call.collective, rank_, call.send, call.recv, call.count, size);
  const std::shared_ptr<const HierarchicalPlan> recent = plans_.get(
      {{call.collective, call.count, call.root, call.type}, inPlace},
      [&] { return buildHierarchicalPlan(call.collective, grid_, call.count, call.root, inPlace, 0, call.type); });
  const HierarchicalPlan& plan = *recent;
  const RankLayout& layout = plan.plan.ranks[static_cast<std::size_t>(rank_)];
  ensureScratch(layout.scratchElements * size, call.stream, capturing);
  PlanBuffers buffers = planBuffersOf(layout, call.send, call.recv, size);
  buffers.scratch = static_cast<std::byte*>(scratch_.data());
  const std::vector<MemberCall> members = memberCallsOf(plan, rank_, call.op, buffers);
  const auto acrossOf = [&](const MemberCall& c) {
    return net::NetCall{c.collective, c.count, call.type,        c.op, c.avgDivisor, c.root,
                        c.send,       c.recv,  c.call->algorithm};
  };
  // Captured: every phase across nodes prepared before anything is queued, so that a refused call leaves none.
  std::vector<std::vector<net::ReplayedCall>> replayed;
  if (capturing) {
    for (const MemberCall& c : members) {
      if (c.scope == Scope::InNode) continue;
      replayed.push_back(net_->rail().prepareReplayed(acrossOf(c)));
      if (replayed.back().empty()) {
        throw Error(ErrorCode::Unsupported,
                    fmt::format("{} of {} elements on rank {} inside a CUDA graph capture: a communicator across "
                                "nodes captures its calls as async calls between nodes (PEERLINK_NET_ASYNC=ON, "
                                "staged; each piece's slots at most {} KiB, its copies at most {} a way), which this "
                                "one cannot be: call it outside the capture",
                                callName(call.collective), call.count, call.rank, net::kAsyncSlotBytes >> 10,
                                net::kAsyncCopiesMax));
      }
    }
  } else {
    afterGraphs(call.stream);
  }
  std::size_t nextReplayed = 0;
  const int local = grid_.localOf(rank_);
  bool streamReady = false;  // the stream holds no work the transport is not ordered after
  for (const MemberCall& c : members) {
    if (c.scope == Scope::InNode) {
      if (c.member != local) throw Error(ErrorCode::Internal, "an in-node call whose member is not the local index");
      inNode(callName(c.collective), [&] {
        Communicator& node = *node_;
        switch (c.collective) {
          case Collective::AllReduce:
            node.allReduce(local, c.send, c.recv, c.count, call.type, c.op, call.stream);
            break;
          case Collective::Broadcast:
            node.broadcast(local, c.send, c.recv, c.count, call.type, c.root, call.stream);
            break;
          case Collective::Reduce:
            node.reduce(local, c.send, c.recv, c.count, call.type, c.op, c.root, call.stream);
            break;
          case Collective::AllGather: node.allGather(local, c.send, c.recv, c.count, call.type, call.stream); break;
          case Collective::ReduceScatter:
            node.reduceScatter(local, c.send, c.recv, c.count, call.type, c.op, call.stream);
            break;
          case Collective::AllToAll: node.allToAll(local, c.send, c.recv, c.count, call.type, call.stream); break;
          case Collective::SendRecv: throw Error(ErrorCode::Internal, "send/recv in a collective's plan");
        }
      });
      streamReady = false;
      continue;
    }
    net::NetGroup& rail = net_->rail();
    if (rail.members() != c.call->members) {
      throw Error(ErrorCode::Internal, "a call across nodes names other ranks than " + rail.name());
    }
    if (capturing) {
      captured_.capture(rail, std::move(replayed[nextReplayed]), call.stream, kernelTimeoutNs());
      ++nextReplayed;
      capturedAny_ = true;
      continue;
    }
    const net::NetCall across = acrossOf(c);
    if (asyncCalls_) {
      inNode("the phase before a call across nodes", [&] { node_->checkHealth(); });  // before a ticket is taken
      if (std::optional<net::AsyncCall> async = rail.tryPrepareAsync(across)) {
        runAsync(rail, std::move(*async), call.stream);
        streamReady = false;  // its copies out are on the stream, where the transport's own copies do not wait
        continue;
      }
      if (queuedCalls_ && rail.queuedFits(across)) {
        runQueued(rail, rail.prepareQueued(across), call.stream);
        streamReady = false;
        continue;
      }
    }
    if (!streamReady) {
      orderTransportAfter(call.stream, "a phase across nodes");
      inNode("the phase before a call across nodes", [&] { node_->checkHealth(); });
      streamReady = true;
    }
    acrossNodes("a phase across nodes", [&] { rail.run(across); });
    copies_->orderAfterCopies(call.stream);
  }
  if (capturing) return;  // (an event recorded in a capture is the graph's)
  PEERLINK_CUDA_CHECK(cudaEventRecord(done_.get(), call.stream));
  doneRecorded_ = true;
}

// The kernel waits on the GPU for the transport's release, and the transport's job for the kernel's copies in: the
// job needs nothing queued after the kernel, and reduces on the host where the kernel's copy out does not (no GPU work
// of its own that could wait behind a spinning kernel). A kernel whose release never comes leaves at twice the
// transport's deadline.
static_assert(net::kAsyncCopiesMax <= static_cast<std::size_t>(kernels::kAsyncCallCopiesMax),
              "an async call's copies fit its kernel's arguments");
static_assert(net::kAsyncReductionsMax <= static_cast<std::size_t>(kernels::kAsyncCallReductionsMax) &&
                  net::kAsyncReductionSourcesMax <= static_cast<std::size_t>(kernels::kAsyncCallReductionSourcesMax),
              "an async call's reductions fit its kernel's arguments");

void NodeWorld::runAsync(net::NetGroup& group, net::AsyncCall async, cudaStream_t stream) {
  AsyncSet& set = asyncSets_[async.set];
  kernels::AsyncCallArgs args;
  const auto ranges = [](const std::vector<net::SlotCopy>& copies, kernels::AsyncCopyRange* into) {
    int n = 0;
    for (const net::SlotCopy& copy : copies) into[n++] = {copy.src, copy.dst, copy.bytes};
    return n;
  };
  args.ins = ranges(async.copiesIn, args.in);
  args.outs = ranges(async.copiesOut, args.out);
  const auto tooManySources = [](const net::SlotReduction& reduction) {
    return reduction.srcs.size() > net::kAsyncReductionSourcesMax;
  };
  // (asyncFits says they fit; a call that did not would fail below, once its ticket is handed on.)
  const bool reductionsFit = async.reductionsOut.size() <= net::kAsyncReductionsMax &&
                             std::none_of(async.reductionsOut.begin(), async.reductionsOut.end(), tooManySources);
  for (std::size_t r = 0; reductionsFit && r < async.reductionsOut.size(); ++r) {
    const net::SlotReduction& reduction = async.reductionsOut[r];
    kernels::AsyncReduceRange& range = args.reduce[args.reductions++];
    range.dst = reduction.dst;
    for (const void* src : reduction.srcs) range.srcs[range.nsrcs++] = src;
    range.count = reduction.count;
  }
  args.type =
      static_cast<int>(async.run.type);  // (the kernels' CollType and CollOp follow DataType's, ReduceOp's order)
  args.op = static_cast<int>(async.run.op);
  args.divisor = async.run.divisor;
  net::AsyncFlags& flags = *async.flags;
  args.copiedIn = reinterpret_cast<std::uint64_t*>(&flags.copiedIn[async.set].value);
  args.copiedOut = reinterpret_cast<std::uint64_t*>(&flags.copiedOut[async.set].value);
  args.awaitRelease = async.awaitsRelease;
  args.release = reinterpret_cast<const volatile std::uint64_t*>(&flags.release.value);
  args.failedFrom = reinterpret_cast<const volatile std::uint64_t*>(&flags.failedFrom.value);
  args.gaveUp = reinterpret_cast<std::uint64_t*>(&flags.gaveUp.value);
  args.ticket = async.ticket;
  args.timeoutNs = kernelTimeoutNs();
  const std::shared_ptr<std::atomic<bool>> abandoned = async.abandoned;
  group.startAsync(std::move(async));  // its ticket is released whatever happens below
  try {
    // The set's last kernel may be on another stream (streams are not told apart by their handles: always wait). A
    // graph's kernels on the set are not among these events: they ended before this call took its ticket
    // (afterGraphs), or the world broke (a graph's and this thread's calls at once, NetGroup::submitInOrder).
    if (!reductionsFit) throw Error(ErrorCode::Internal, "an async call's reductions do not fit its kernel");
    if (set.used) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, set.done.get(), 0));
    kernels::launchAsyncCall(args, stream);
    PEERLINK_CUDA_CHECK(cudaEventRecord(set.done.get(), stream));
    set.used = true;
  } catch (const std::exception& error) {
    group.abandonAsync(abandoned, error.what());
    throw;
  } catch (...) {
    group.abandonAsync(abandoned, "not an exception");
    throw;
  }
}

// Everything the call does on the GPU is queued now, in the caller's thread, before anything that waits for it: on the
// transport's copy stream, after the caller's stream's work so far, its copies and the waits for the transport's
// thread between them; the caller's stream's next work after them. The transport's thread runs the messages and
// reductions on the host and makes no CUDA call: a call that waited, on the GPU, for work queued after it would
// never end (streams share the device's queues, and a CUDA call can wait for the whole device). A call whose
// caller's stream never gets there fails at the transport's deadline saying the stream did not reach its copies.
void NodeWorld::runQueued(net::NetGroup& group, net::QueuedCall queued, cudaStream_t stream) {
  const std::vector<net::QueuedDeviceOp> ops = std::move(queued.deviceOps);  // (the job needs no copy)
  net::AsyncFlags& flags = *queued.flags;
  const net::AskedKernel kernel = queued.kernel;
  const std::shared_ptr<std::atomic<bool>> abandoned = queued.abandoned;
  group.startQueued(std::move(queued));
  queuedAny_ = true;
  try {
    // The copy stream waits for the event as recorded now; recording it again for a later call changes nothing here.
    PEERLINK_CUDA_CHECK(cudaEventRecord(queuedAfter_.get(), stream));
    copies_->orderCopiesAfter(queuedAfter_.get());
    copies_->queue(ops, flags.pieceCopied.value, flags.pieceReady.value, flags.computations, kernel);
    copies_->orderAfterCopies(stream);
  } catch (...) {
    abandoned->store(true, std::memory_order_release);  // its job fails at once, every piece marked ready
    throw;
  }
}

net::NetGroup& NodeWorld::pairGroup(int peer) {
  auto& group = pairs_[peer];
  if (!group) {
    group = net_->group({std::min(rank_, peer), std::max(rank_, peer)},
                        fmt::format("ranks {} and {}", std::min(rank_, peer), std::max(rank_, peer)));
  }
  return *group;
}

void NodeWorld::peerCalls(const std::vector<CallArgs>& calls) {
  if (calls.empty()) return;
  if (const std::string why = lost(); !why.empty()) throw Error(ErrorCode::RemoteError, "Communicator: " + why);
  const DeviceGuard guard(device_);
  std::vector<PeerCall> peers;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CallArgs& call = calls[i];
    void* data = call.isSend ? const_cast<void*>(call.send) : call.recv;
    peers.push_back({call.isSend, call.peer, data, call.count, dataTypeSize(call.type), call.type, i});
  }
  const PeerSplit split = splitPeerCalls(peers, grid_, rank_);
  std::vector<cudaStream_t> streams;
  for (const CallArgs& call : calls) {
    if (std::find(streams.begin(), streams.end(), call.stream) == streams.end()) streams.push_back(call.stream);
  }
  const bool capturing = streamCapturing(streams.front());
  std::optional<RelaxedCaptureMode> relaxed;  // the first call may allocate the transport's pinned slots
  if (capturing) relaxed.emplace();
  for (const cudaStream_t stream : streams) {
    if (streamCapturing(stream) != capturing) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("send/recv on rank {}: its streams are captured into a graph and not; capture all of a "
                              "group's streams or none",
                              rank_));
    }
  }
  // Each pair across nodes on one stream runs async where its calls fit the kernel, else queued on the transport's
  // copy stream; calls on several streams wait on the host. Captured, every pair must run async, on one stream.
  enum class Way { Async, Queued, Waits };
  std::vector<std::vector<net::PeerOp>> opsOf;
  std::vector<Way> ways;
  std::vector<std::vector<net::ReplayedCall>> replayed;
  bool anyWaits = false;
  for (const PeerSplit::Pair& pair : split.acrossNodes) {
    const int peerInGroup = pair.peer < rank_ ? 0 : 1;
    std::vector<net::PeerOp>& ops = opsOf.emplace_back();
    for (const PeerCall& p : pair.calls) ops.push_back({p.send, peerInGroup, p.data, p.count * p.elementSize});
    net::NetGroup& group = pairGroup(pair.peer);
    if (capturing) {
      if (streams.size() == 1) replayed.push_back(group.prepareReplayed(ops, DataType::U8));
      if (streams.size() != 1 || replayed.back().empty()) {
        throw Error(ErrorCode::Unsupported,
                    fmt::format("send/recv with rank {} on rank {} inside a CUDA graph capture: a communicator "
                                "across nodes captures a group whose calls across nodes are on one stream as async "
                                "calls between nodes (PEERLINK_NET_ASYNC=ON, staged), which this one's cannot be: "
                                "make the group outside the capture",
                                pair.peer, rank_));
      }
      ways.push_back(Way::Async);
      continue;
    }
    const bool oneStream = asyncCalls_ && streams.size() == 1;
    ways.push_back(oneStream && group.asyncFits(ops, DataType::U8)                    ? Way::Async
                   : oneStream && queuedCalls_ && group.queuedFits(ops, DataType::U8) ? Way::Queued
                                                                                      : Way::Waits);
    anyWaits = anyWaits || ways.back() == Way::Waits;
  }
  if (!capturing && !split.acrossNodes.empty()) {
    for (cudaStream_t stream : streams) afterGraphs(stream);
  }
  if (anyWaits) {
    // The data sent between nodes must be there when the transport copies it out.
    for (cudaStream_t stream : streams) orderTransportAfter(stream, "a send/recv across nodes");
  }
  if (!split.inNode.empty()) {
    const int local = grid_.localOf(rank_);
    inNode("send/recv", [&] {
      node_->groupStart();
      try {
        for (const PeerCall& p : split.inNode) {
          const CallArgs& call = calls[p.index];
          if (p.send) {
            node_->send(local, p.data, p.count, p.type, p.peer, call.stream);
          } else {
            node_->recv(local, p.data, p.count, p.type, p.peer, call.stream);
          }
        }
      } catch (...) {
        try {
          node_->groupEnd();  // closes the group: the failed call already discarded the calls queued in it
        } catch (...) {       // the first error is the one to report
        }
        throw;
      }
      node_->groupEnd();
    });
  }
  // One pair at a time, in the order every rank uses (splitPeerCalls): the transport runs its calls in that order.
  for (std::size_t i = 0; i < split.acrossNodes.size(); ++i) {
    net::NetGroup& group = pairGroup(split.acrossNodes[i].peer);
    if (capturing) {
      captured_.capture(group, std::move(replayed[i]), streams.front(), kernelTimeoutNs());
      capturedAny_ = true;
    } else if (ways[i] == Way::Async) {
      runAsync(group, group.prepareAsync(opsOf[i], DataType::U8), streams.front());
    } else if (ways[i] == Way::Queued) {
      runQueued(group, group.prepareQueued(opsOf[i], DataType::U8), streams.front());
    } else {
      acrossNodes("a send/recv across nodes", [&] { group.sendRecv(opsOf[i], DataType::U8); });
    }
  }
  if (anyWaits) {
    for (cudaStream_t stream : streams) copies_->orderAfterCopies(stream);
  }
}

std::string NodeWorld::describeChoice(Collective collective, std::size_t bytes) const {
  const Algorithm across = acrossNodesAlgorithm(collective, grid_.nodes);
  return fmt::format(
      "hierarchical over {} nodes x {} ranks: in the node {}; across nodes {} over MPI ({}, "
      "through pinned host memory)",
      grid_.nodes, grid_.ranksPerNode, node_->describeChoice(collective, bytes),
      across == Algorithm::Ring      ? "a ring"
      : across == Algorithm::OneShot ? "one shot"
                                     : algorithmName(across),
      pathName_);
}

void NodeWorld::checkHealth() {
  if (const std::string why = lost(); !why.empty()) throw Error(ErrorCode::RemoteError, "Communicator: " + why);
  inNode("checkHealth", [&] { node_->checkHealth(); });
  const std::string broken = net_->brokenBy();
  if (!broken.empty()) throw Error(ErrorCode::RemoteError, "Communicator: between nodes: " + broken);
}

}  // namespace peerlink::coll
