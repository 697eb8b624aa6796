// peerlink::Communicator: the public API over the communicator's state. Each call is checked on its own,
// queued for its rank, and when every rank has a call queued the set is matched and launched
// (comm_validation, comm_launch). Send/recv calls are paired at groupEnd(), or, outside a group, as soon as
// the partner's call arrives. Any error thrown by a call discards every call not launched yet, so the
// communicator is ready for a fresh set afterwards.
#include "peerlink/communicator.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "peerlink/cuda.hpp"

#include "coll/bootstrap_exchange.hpp"
#include "coll/comm_health.hpp"
#include "coll/comm_launch.hpp"
#include "coll/comm_launch_arena_ring.hpp"
#include "coll/comm_launch_p2p_staged.hpp"
#include "coll/comm_launch_plan.hpp"
#include "coll/comm_launch_staged.hpp"
#include "coll/comm_setup.hpp"
#include "coll/comm_state.hpp"
#include "coll/comm_teardown.hpp"
#include "coll/comm_validation.hpp"
#include "coll/communicator_state.hpp"
#include "coll/cross_process_way.hpp"
#include "coll/node_decisions.hpp"
#include "coll/registered_calls.hpp"
#include "coll/shared_calls.hpp"
#include "coll/sharing_choice.hpp"
#include "core/cpu_affinity.hpp"
#include "core/log.hpp"
#include "core/parallel_each.hpp"
#include "peerlink/error.hpp"
#include "topology/gpu_cpus.hpp"

namespace peerlink {
namespace {

// An NVTX range named after the call, with the rank as its payload (a no-op without a tool attached).
class NvtxRange {
 public:
  NvtxRange(const char* name, int rank) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    attributes.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    attributes.payload.iValue = rank;
    nvtxRangePushEx(&attributes);
  }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

const char* rangeName(Collective collective, bool isSend) {
  switch (collective) {
    case Collective::AllReduce: return "peerlink allReduce";
    case Collective::Broadcast: return "peerlink broadcast";
    case Collective::Reduce: return "peerlink reduce";
    case Collective::AllGather: return "peerlink allGather";
    case Collective::ReduceScatter: return "peerlink reduceScatter";
    case Collective::AllToAll: return "peerlink allToAll";
    case Collective::SendRecv: return isSend ? "peerlink send" : "peerlink recv";
  }
  return "peerlink";
}

void discardPending(coll::CommState& state) {
  for (auto& queue : state.pending) queue.clear();
  state.group.clear();
  state.loose.clear();
}

// Runs `body`; on any error discards what is not launched yet, then rethrows.
template <typename Fn>
void discardingOnError(coll::CommState& state, Fn&& body) {
  try {
    body();
  } catch (...) {
    discardPending(state);
    throw;
  }
}

// The settings that decide the way of a call across processes, as the communicator holds them.
coll::CrossProcessSettings crossProcessSettingsOf(const coll::CommState& comm) {
  coll::CrossProcessSettings settings;
  settings.sharing = comm.world.spansProcesses ? comm.shared.mode : coll::BufferSharing::Off;
  settings.arenaRing = comm.arenaRing;
  settings.arenaRingShape = comm.arenaRingShape;
  settings.hasRingArea = comm.layout.hasRingArea;
  settings.windowBytes = comm.layout.windowBytes;
  settings.stageSerially = comm.stageSerially;
  settings.maxBlocks = comm.maxBlocks;
  return settings;
}

// Which way a call of a world that spans processes goes, once per collective and way in the COLL log.
void logPathOnce(coll::CommState& state, const coll::CallArgs& shape, int way, const char* how) {
  const std::size_t index =
      static_cast<std::size_t>(shape.collective) * coll::CommState::kReachWays + static_cast<std::size_t>(way);
  if (state.reachLogged[index]) return;
  state.reachLogged[index] = true;
  logInfo(LogSubsys::Coll, "{} of {} bytes across processes: {}", collectiveName(shape.collective),
          shape.count * dataTypeSize(shape.type), how);
}

// A set holds a call for every rank: the local ranks' own, and for a rank of another process a stand-in with
// the local calls' shape and no buffers (the kernels reach its buffers through the arenas, or not at all).
void submitCollective(coll::CommState& state, const coll::CallArgs& call, const coll::CallExchange& exchange) {
  coll::throwIfFailed(state);
  coll::validateCall(state, call);
  state.pending[static_cast<std::size_t>(call.rank)].push_back(call);
  const std::vector<int>& local = state.localRanks();
  for (;;) {
    for (const int r : local) {
      if (state.pending[static_cast<std::size_t>(r)].empty()) return;
    }
    std::vector<coll::CallArgs> set(static_cast<std::size_t>(state.nranks));
    for (const int r : local) {
      auto& queue = state.pending[static_cast<std::size_t>(r)];
      set[static_cast<std::size_t>(r)] = queue.front();
      queue.pop_front();
    }
    const coll::CallArgs& shape = set[static_cast<std::size_t>(local.front())];
    for (int r = 0; r < state.nranks; ++r) {
      if (state.world.isLocal(r)) continue;
      coll::CallArgs& standIn = set[static_cast<std::size_t>(r)];
      standIn = shape;
      standIn.rank = r;
      standIn.send = nullptr;
      standIn.recv = nullptr;
      standIn.stream = nullptr;
    }
    const bool capturing = coll::checkSetMatches(state, set);
    const coll::LaunchTracking tracking(state, set, capturing);
    if (state.planned) {
      coll::launchPlannedSet(state, set, capturing);
    } else if (!state.world.spansProcesses && !state.stageInOneProcess) {
      coll::launchCollectiveSet(state, set, capturing);
    } else if (!coll::needsStaging(state, set)) {
      logPathOnce(state, shape, 0, "in LL lines on the callers' own buffers");
      coll::launchCollectiveSet(state, set, capturing, coll::SetReach::LocalBuffers);
    } else if (const auto registered = state.world.spansProcesses ? coll::registeredSet(state, set) : std::nullopt) {
      // (In one process only the testing switch stages, standing for unregistered buffers.)
      logPathOnce(state, shape, 1, "on registered windows, reaching the peers' buffers directly");
      coll::launchRegisteredSet(state, *registered, capturing);
    } else if (const auto shared =
                   state.world.spansProcesses ? coll::sharedSet(state, set, capturing, exchange) : std::nullopt) {
      logPathOnce(state, shape, 3, "on buffers shared with the peers at the call, reaching them directly");
      coll::launchSharedSet(state, *shared, capturing);
    } else if (coll::runsAsArenaRing(state, set)) {
      logPathOnce(state, shape, 4, "as the arena ring (buffers not registered; slots in the ranks' arenas)");
      coll::launchArenaRingSet(state, set, capturing);
    } else {
      logPathOnce(state, shape, 2, "through the staging windows (buffers not registered)");
      coll::launchStagedSet(state, set, capturing);
    }
  }
}

void submitPointToPoint(coll::CommState& state, const coll::CallArgs& call) {
  coll::throwIfFailed(state);
  coll::validateCall(state, call);
  if (state.groupDepth > 0) {
    state.group.push_back(call);
    return;
  }
  // Across processes a rank sees its own calls only: one outside a group is a group of its own.
  if (state.world.spansProcesses) {
    const std::vector<coll::CallArgs> group = {call};
    const coll::LaunchTracking tracking(state, group, std::nullopt);
    coll::launchCrossProcessGroup(state, group);
    return;
  }
  // Outside a group: the oldest waiting partner call, if any, completes a group of two.
  const auto partner = std::find_if(state.loose.begin(), state.loose.end(), [&](const coll::CallArgs& other) {
    return other.isSend != call.isSend && other.rank == call.peer && other.peer == call.rank;
  });
  if (partner == state.loose.end()) {
    state.loose.push_back(call);
    return;
  }
  const std::vector<coll::CallArgs> pair = {*partner, call};
  state.loose.erase(partner);
  const coll::LaunchTracking tracking(state, pair, std::nullopt);
  coll::launchSendRecvPairs(state, coll::matchSendRecvs(state, pair));
}

}  // namespace

Communicator::Communicator(const std::vector<int>& devices, Params params) : state_(std::make_unique<State>()) {
  coll::LocalExchange exchange;
  coll::WorldSpec spec;
  spec.nranks = static_cast<int>(devices.size());
  for (int r = 0; r < spec.nranks; ++r) spec.ranks.push_back(r);
  spec.devices = devices;
  spec.exchange = &exchange;
  coll::setupCommunicator(state_->comm, spec, params);
  state_->armAbortWord();
}

namespace {

// Joins the world as each of `ranks` (a thread each: connecting waits for every rank). Each thread first runs
// near its rank's GPU (cpu_affinity.hpp): the bootstrap's watchdog thread, which it starts, inherits that.
std::vector<std::unique_ptr<Bootstrap>> connectRanks(const UniqueId& id, int nranks, const std::vector<int>& ranks,
                                                     const std::vector<int>& devices, const Params& params,
                                                     const BootstrapOptions& options) {
  std::vector<std::unique_ptr<Bootstrap>> bootstraps(ranks.size());
  forEachInParallel(ranks.size(), [&](std::size_t i) {
    bindCurrentThreadNearGpu(params, localCpusOfDevice(devices[i], params),
                             fmt::format("bootstrap watchdog of rank {} (GPU {})", ranks[i], devices[i]));
    bootstraps[i] = connectBootstrap(id, ranks[i], nranks, options);
  });
  return bootstraps;
}

}  // namespace

Communicator::Communicator(const UniqueId& id, int nranks, int rank, int device, Params params)
    : Communicator(id, nranks, std::vector<int>{rank}, std::vector<int>{device}, std::move(params)) {}

Communicator::Communicator(const UniqueId& id, int nranks, const std::vector<int>& ranks,
                           const std::vector<int>& devices, Params params)
    : Communicator(id, nranks, ranks, devices, params, BootstrapOptions::fromParams(params)) {}

Communicator::Communicator(const UniqueId& id, int nranks, const std::vector<int>& ranks,
                           const std::vector<int>& devices, Params params, const BootstrapOptions& options)
    : state_(std::make_unique<State>()) {
  if (ranks.empty() || ranks.size() != devices.size()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("Communicator: {} ranks and {} devices given; one device per rank, at least one",
                            ranks.size(), devices.size()));
  }
  // Ascending ranks, their devices alongside.
  std::vector<std::size_t> order(ranks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
  coll::WorldSpec spec;
  spec.nranks = nranks;
  for (const std::size_t i : order) {
    spec.ranks.push_back(ranks[i]);
    spec.devices.push_back(devices[i]);
  }
  for (const int rank : spec.ranks) {
    if (rank < 0 || rank >= nranks) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("Communicator: rank {} is out of range (ranks 0..{})", rank, nranks - 1));
    }
  }
  state_->bootstraps = connectRanks(id, nranks, spec.ranks, spec.devices, params, options);
  std::vector<Bootstrap*> local;
  for (const auto& bootstrap : state_->bootstraps) local.push_back(bootstrap.get());
  coll::BootstrapExchange exchange(local);
  spec.hostId = local.front()->peers()[static_cast<std::size_t>(spec.ranks.front())].hostId;
  spec.exchange = &exchange;
  spec.shareTimeout = options.deadline;
  State& state = *state_;
  try {
    if (const std::optional<coll::NodeGrid> grid = coll::multiNodeGrid(local.front()->peers())) {
      // Ranks on several hosts: the node's communicator and the transport between nodes (node_world.hpp).
      coll::checkOneRankPerProcess(spec.ranks, *grid);
      state.nodes = std::make_unique<coll::NodeWorld>(*local.front(), *grid, spec.devices.front(), params);
      state.nodes->describeTo(state.comm, params);
    } else {
      coll::setupCommunicator(state.comm, spec, params);
      state.armAbortWord();
    }
  } catch (const std::exception& error) {
    // The other ranks wait for this one at the next exchange: tell them why it will not come.
    for (Bootstrap* bootstrap : local) bootstrap->abort(error.what());
    throw;
  }
  // A peer lost from here on stops this process's kernels (one lost during setup failed it already; one lost
  // in between is reported at once by onPeerLost).
  for (Bootstrap* bootstrap : local) {
    bootstrap->onPeerLost([&state](int rank, const std::string& why) {
      state.giveUp(why);
      const std::lock_guard<std::mutex> lock(state.lossMutex);  // the destructor takes `nodes` under it
      if (state.nodes) state.nodes->peerLost(rank, why);
    });
  }
}

Communicator::~Communicator() {
  if (!state_) return;
  if (state_->nodes) {
    State& state = *state_;
    for (const auto& bootstrap : state.bootstraps) {
      bootstrap->onPeerLost([&state](int, const std::string& why) { state.giveUp(why); });
    }
    // A watchdog may still be in the callback it copied before: it reads `nodes` under lossMutex.
    std::unique_ptr<coll::NodeWorld> nodes;
    {
      const std::lock_guard<std::mutex> lock(state.lossMutex);
      nodes = std::move(state.nodes);
    }
    nodes.reset();
    return;
  }
  state_->retire();
}

int Communicator::size() const noexcept {
  return state_->comm.nranks;
}

std::vector<int> Communicator::localRanks() const {
  return state_->comm.localRanks();
}

int Communicator::device(int rank) const {
  if (state_->nodes) return state_->nodes->device(rank);
  const coll::CommState& comm = state_->comm;
  if (rank < 0 || rank >= comm.nranks) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("Communicator::device: rank {} is out of range (ranks 0..{})", rank, comm.nranks - 1));
  }
  if (!comm.world.isLocal(rank)) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("Communicator::device: rank {} lives in another process ({})",
                                                     rank, comm.world.describe(rank)));
  }
  return comm.devices[static_cast<std::size_t>(rank)];
}

namespace {

// `exchange`: the world's, for calls that share their buffers at the call (shared_calls.hpp).
void submitCall(std::mutex& mutex, coll::CommState& state, const coll::CallArgs& call,
                const coll::CallExchange& exchange) {
  const NvtxRange range(rangeName(call.collective, call.isSend), call.rank);
  const std::lock_guard<std::mutex> lock(mutex);
  discardingOnError(state, [&] {
    if (call.collective == Collective::SendRecv) {
      submitPointToPoint(state, call);
    } else {
      submitCollective(state, call, exchange);
    }
  });
}

coll::CallArgs makeCall(Collective which, int rank, const void* send, void* recv, std::size_t count, DataType type,
                        ReduceOp op, int root, cudaStream_t stream) {
  coll::CallArgs call;
  call.collective = which;
  call.rank = rank;
  call.send = send;
  call.recv = recv;
  call.count = count;
  call.type = type;
  call.op = op;
  call.root = root;
  call.stream = stream;
  return call;
}

}  // namespace

void Communicator::State::submit(const coll::CallArgs& call) {
  throwIfPeerLost();
  if (nodes) {
    const NvtxRange range(rangeName(call.collective, call.isSend), call.rank);
    const std::lock_guard<std::mutex> lock(mutex);
    discardingOnError(comm, [&] { nodes->submit(comm, call); });
    return;
  }
  coll::CallExchange exchange;
  exchange.allGather = [this](const std::vector<std::vector<std::uint8_t>>& blobs, std::size_t bytes) {
    return callAllGather(blobs, bytes, std::nullopt).value();
  };
  exchange.allGatherWithin = [this](const std::vector<std::vector<std::uint8_t>>& blobs, std::size_t bytes,
                                    std::chrono::nanoseconds patience) {
    return callAllGather(blobs, bytes, patience);
  };
  submitCall(mutex, comm, call, exchange);
}

std::optional<std::vector<std::uint8_t>> Communicator::State::callAllGather(
    const std::vector<std::vector<std::uint8_t>>& blobs, std::size_t bytes,
    std::optional<std::chrono::nanoseconds> patience) {
  const auto sockets = [this](const std::vector<std::vector<std::uint8_t>>& mine, std::size_t size) {
    return withExchange([&](coll::WorldExchange& exchange) { return exchange.allGather(mine, size); });
  };
  if (bootstraps.empty() || bytes > coll::SharedMemoryExchange::kMaxBytes) return sockets(blobs, bytes);
  if (!callExchangeTried) {
    callExchangeTried = true;
    try {
      callExchange = std::make_unique<coll::SharedMemoryExchange>(comm.world, sockets);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::SystemError) throw;
      logWarn(LogSubsys::Coll, "calls exchange through the bootstraps' sockets (every rank waits for all): {}",
              error.what());
    }
  }
  if (!callExchange) return sockets(blobs, bytes);
  const std::chrono::nanoseconds timeout(comm.timeoutNs);
  const auto alive = [this] { throwIfPeerLost(); };
  if (patience) return callExchange->allGatherWithin(blobs, bytes, *patience, timeout, alive);
  return callExchange->allGather(blobs, bytes, timeout, alive);
}

void Communicator::allReduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                             cudaStream_t stream) {
  state_->submit(makeCall(Collective::AllReduce, rank, send, recv, count, type, op, 0, stream));
}

void Communicator::broadcast(int rank, const void* send, void* recv, std::size_t count, DataType type, int root,
                             cudaStream_t stream) {
  state_->submit(makeCall(Collective::Broadcast, rank, send, recv, count, type, ReduceOp::Sum, root, stream));
}

void Communicator::reduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                          int root, cudaStream_t stream) {
  state_->submit(makeCall(Collective::Reduce, rank, send, recv, count, type, op, root, stream));
}

void Communicator::allGather(int rank, const void* send, void* recv, std::size_t sendCount, DataType type,
                             cudaStream_t stream) {
  state_->submit(makeCall(Collective::AllGather, rank, send, recv, sendCount, type, ReduceOp::Sum, 0, stream));
}

void Communicator::reduceScatter(int rank, const void* send, void* recv, std::size_t recvCount, DataType type,
                                 ReduceOp op, cudaStream_t stream) {
  state_->submit(makeCall(Collective::ReduceScatter, rank, send, recv, recvCount, type, op, 0, stream));
}

void Communicator::allToAll(int rank, const void* send, void* recv, std::size_t count, DataType type,
                            cudaStream_t stream) {
  state_->submit(makeCall(Collective::AllToAll, rank, send, recv, count, type, ReduceOp::Sum, 0, stream));
}

void Communicator::send(int rank, const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) {
  coll::CallArgs call = makeCall(Collective::SendRecv, rank, buffer, nullptr, count, type, ReduceOp::Sum, 0, stream);
  call.peer = peer;
  call.isSend = true;
  state_->submit(call);
}

void Communicator::recv(int rank, void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) {
  coll::CallArgs call = makeCall(Collective::SendRecv, rank, nullptr, buffer, count, type, ReduceOp::Sum, 0, stream);
  call.peer = peer;
  call.isSend = false;
  state_->submit(call);
}

void Communicator::groupStart() {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  ++state_->comm.groupDepth;
}

void Communicator::groupEnd() {
  const NvtxRange range("peerlink groupEnd", -1);
  const std::lock_guard<std::mutex> lock(state_->mutex);
  coll::CommState& comm = state_->comm;
  if (comm.groupDepth == 0) throw Error(ErrorCode::InvalidUsage, "groupEnd: no group is open (groupStart first)");
  if (--comm.groupDepth > 0) return;
  std::vector<coll::CallArgs> calls;
  calls.swap(comm.group);
  if (calls.empty()) return;
  discardingOnError(comm, [&] {
    const coll::LaunchTracking tracking(comm, calls, std::nullopt);
    if (state_->nodes) {
      state_->nodes->peerCalls(calls);
    } else if (comm.world.spansProcesses) {
      coll::launchCrossProcessGroup(comm, calls);
    } else {
      coll::launchSendRecvPairs(comm, coll::matchSendRecvs(comm, calls));
    }
  });
}

std::string Communicator::describeChoice(Collective collective, std::size_t bytes) const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  coll::CommState& comm = state_->comm;
  if (state_->nodes) return state_->nodes->describeChoice(collective, bytes);
  if (comm.planned) return coll::describePlannedChoice(comm, collective, bytes);
  const auto describe = [](const CollectiveChoice& choice) {
    return std::string(algorithmName(choice.algorithm)) + " (" + kernelName(choice.kernel) + "): " + reasonText(choice);
  };
  if (!comm.world.spansProcesses && !comm.stageInOneProcess) {
    return describe(coll::callChoice(comm, collective, bytes, Fact::No, Fact::Yes));
  }
  // Across processes: what every rank chooses without seeing the others' buffers, then the way the call goes.
  const CollectiveChoice choice = coll::callChoice(comm, collective, bytes, Fact::Unknown, Fact::Unknown);
  const DataFlow flow = kernelInfo(choice.kernel).flow;
  const coll::CrossProcessSettings settings = crossProcessSettingsOf(comm);
  const auto wayOf = [&](bool registered, bool capturing) {
    return coll::crossProcessWay(settings, collective, bytes, comm.nranks, flow, registered, capturing);
  };
  const auto say = [&](coll::CrossProcessWay way) {
    return coll::describeCrossProcessWay(way, settings, collective, bytes, comm.nranks);
  };
  if (flow == DataFlow::ThroughStages) return describe(choice) + "; across processes: " + say(wayOf(false, false));
  // A shared call falls back to the unshared way (captured, or buffers that are not cudaMalloc memory).
  const coll::CrossProcessWay eager = wayOf(false, false);
  const coll::CrossProcessWay unshared = wayOf(false, true);
  return describe(coll::callChoice(comm, collective, bytes, Fact::No, Fact::Yes)) + "; across processes: so " +
         say(wayOf(true, false)) + ", else " +
         (eager == coll::CrossProcessWay::SharedAtCall ? "(eager) " + say(eager) + ", else " : std::string()) +
         say(unshared);
}

std::optional<Error> Communicator::asyncError() {
  try {
    state_->throwIfPeerLost();
    if (state_->nodes) {
      const std::lock_guard<std::mutex> lock(state_->mutex);
      state_->nodes->checkHealth();
    }
  } catch (const Error& error) {
    return error;
  }
  // Not under the communicator's lock: a call may hold it for long, and a watchdog polling here must not wait.
  return coll::lastFailure(state_->comm);
}

void Communicator::abort() noexcept {
  state_->giveUp("aborted by the application (Communicator::abort)");
  if (state_->nodes) state_->nodes->abort();
  for (const auto& bootstrap : state_->bootstraps) bootstrap->abort("rank aborted its communicator");
}

void Communicator::checkHealth() {
  state_->throwIfPeerLost();
  const std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->nodes) return state_->nodes->checkHealth();
  coll::throwIfFailed(state_->comm);
}

}  // namespace peerlink
