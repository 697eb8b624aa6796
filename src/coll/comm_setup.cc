// Creating a communicator's resources (comm_setup.hpp).
#include "coll/comm_setup.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <set>
#include <string>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll/arena_sharing.hpp"
#include "coll/comm_launch_plan.hpp"
#include "coll/comm_launch_support.hpp"
#include "coll/cross_process_way.hpp"
#include "coll/peer_verdicts.hpp"
#include "coll/plan_staged.hpp"
#include "coll/rank_transport.hpp"
#include "core/cpu_affinity.hpp"
#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/gpu_work.hpp"
#include "core/log.hpp"
#include "core/parallel_each.hpp"
#include "core/stream_wait.hpp"
#include "kernels/kernel_preload.cuh"
#include "peerlink/error.hpp"
#include "topology/discovery_cache.hpp"

namespace peerlink::coll {
namespace {

using Clock = std::chrono::steady_clock;

double millisecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

void checkDevices(const std::vector<int>& devices, bool shareGpus) {
  if (devices.empty()) throw Error(ErrorCode::InvalidUsage, "Communicator: no devices given");
  if (devices.size() > static_cast<std::size_t>(kernels::kCollMaxRanks)) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("Communicator: {} devices given, at most {} ranks are supported",
                                                     devices.size(), kernels::kCollMaxRanks));
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw Error(ErrorCode::NoDevice, "Communicator: no CUDA GPU (" + cudaErrorText(status) + ")");
  }
  std::set<int> seen;
  for (const int device : devices) {
    if (device < 0 || device >= count) {
      throw Error(
          ErrorCode::InvalidUsage,
          fmt::format("Communicator: device {} is out of range (this process has GPUs 0..{})", device, count - 1));
    }
    if (!seen.insert(device).second && !shareGpus) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("Communicator: device {} is given twice (one rank per GPU; PEERLINK_COLL_SHARE_GPUS=1 "
                              "lets ranks share a GPU for testing)",
                              device));
    }
  }
}

void checkWorldSpec(const WorldSpec& spec) {
  if (spec.exchange == nullptr) throw Error(ErrorCode::Internal, "Communicator: no world exchange");
  if (spec.nranks < 1 || spec.nranks > kernels::kCollMaxRanks) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("Communicator: a world of {} ranks; 1 to {} are supported",
                                                     spec.nranks, kernels::kCollMaxRanks));
  }
  if (spec.ranks.size() != spec.devices.size()) {
    throw Error(ErrorCode::Internal, "Communicator: ranks and devices of different lengths");
  }
  std::set<int> seen;
  for (const int rank : spec.ranks) {
    if (rank < 0 || rank >= spec.nranks) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("Communicator: rank {} is out of range (ranks 0..{})", rank, spec.nranks - 1));
    }
    if (!seen.insert(rank).second) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("Communicator: rank {} is given twice", rank));
    }
  }
  if (!std::is_sorted(spec.ranks.begin(), spec.ranks.end())) {
    throw Error(ErrorCode::Internal, "Communicator: local ranks must be ascending");
  }
}

// One rank's GPU before the world is known: context, SM count, counters, streams, every collective kernel
// loaded. Runs on its own thread (context creation and module loads of several GPUs overlap).
// `push`: the push reduction's kernels (PEERLINK_COLL_PUSH=1, or AUTO on 3+ ranks, which may push); `eagerGraphs`:
// the graph eager launches go through (PEERLINK_COLL_EAGER_GRAPHS). Nothing here
// waits for the whole device (another communicator's kernel may be stalled on it): the counters are zeroed on the
// rank's own stream, and that stream is awaited within `timeout`.
void setupRank(RankResources& rank, int device, bool push, bool eagerGraphs, std::chrono::milliseconds timeout) {
  const auto start = Clock::now();
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaFree(nullptr));  // creates the context now, on this thread
  PEERLINK_CU_CHECK(driverApi().ctxGetCurrent(&rank.context));
  const auto contextReady = Clock::now();
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&rank.smCount, cudaDevAttrMultiProcessorCount, device));
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&rank.computeMajor, cudaDevAttrComputeCapabilityMajor, device));
  rank.device = device;
  rank.sync = DeviceBuffer(device, sizeof(kernels::CollRankSync));
  if (eagerGraphs) rank.eagerGraph = std::make_unique<kernels::KernelGraph>();
  rank.copyStream = Stream(device);
  rank.forkEvent = Event(device, cudaEventDisableTiming);
  rank.joinEvent = Event(device, cudaEventDisableTiming);
  PEERLINK_CUDA_CHECK(cudaMemsetAsync(rank.sync.data(), 0, rank.sync.size(), rank.copyStream.get()));
  const auto buffersReady = Clock::now();
  // LL128 runs on compute capability 9.0+ only (ll128Capable): its kernels are loaded there only.
  kernels::preloadCollKernels(push, rank.computeMajor >= 9);
  if (rank.eagerGraph) kernels::readyKernelGraph(*rank.eagerGraph, rank.copyStream.get());
  waitForStream(rank.copyStream.get(), timeout, fmt::format("setting up GPU {}", device), "PEERLINK_TIMEOUT_MS");
  logInfo(LogSubsys::Coll, "GPU {} set up: context {:.1f} ms, counters {:.1f}, kernels loaded {:.1f}", device,
          millisecondsBetween(start, contextReady), millisecondsBetween(contextReady, buffersReady),
          millisecondsBetween(buffersReady, Clock::now()));
}

// One rank's arena, once the world gives its layout: exportable when other processes must map it. Zeroed
// where the layout says, on the rank's own stream, which is awaited: peers store into it from their first kernel
// on. With a staging window, the stream and events of the staged calls' copies too.
void allocateArena(RankResources& rank, const SymmetricLayout& layout, bool exportable, ShareKind kind,
                   std::chrono::milliseconds timeout) {
  DeviceGuard guard(rank.device);
  if (layout.windowBytes > 0) rank.staging = std::make_unique<StagingStreams>(rank.device);
  if (exportable) {
    rank.arena.shared = std::make_unique<ExportableBuffer>(rank.device, layout.bytes, kind);
  } else {
    rank.arena.local = DeviceBuffer(rank.device, layout.bytes);
  }
  PEERLINK_CUDA_CHECK(cudaMemsetAsync(rank.arena.base(), 0, layout.zeroedBytes, rank.copyStream.get()));
  if (layout.hasRingArea) {
    rank.ringState = DeviceBuffer(rank.device, kernels::kHostRingMaxBlocks * sizeof(kernels::HostRingBlockState));
    PEERLINK_CUDA_CHECK(cudaMemsetAsync(rank.ringState.data(), 0, rank.ringState.size(), rank.copyStream.get()));
  }
  waitForStream(rank.copyStream.get(), timeout, fmt::format("zeroing the arena on GPU {}", rank.device),
                "PEERLINK_TIMEOUT_MS");
}

// On one thread once every GPU is set up: the driver takes the enables one after another anyway (enabling
// each rank's peers on its own setup thread made creation no faster).
void enablePeers(CommState& state) {
  for (const int a : state.localRanks()) {
    for (const int b : state.localRanks()) {
      const int from = state.devices[static_cast<std::size_t>(a)];
      const int to = state.devices[static_cast<std::size_t>(b)];
      if (from == to) continue;  // two ranks on one GPU (PEERLINK_COLL_SHARE_GPUS): local memory
      // Under the staged plans only the Direct pairs are peers; the others never touch each other's memory.
      if (state.planned && state.planned->links.way(a, b) != PairWay::Direct &&
          state.planned->links.way(b, a) != PairWay::Direct) {
        continue;
      }
      int can = 0;
      PEERLINK_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
      if (!can) {
        throw Error(ErrorCode::Unsupported,
                    fmt::format("Communicator: GPU {} (rank {}) cannot access GPU {} (rank {}) as a peer; the "
                                "collectives need peer access between every pair (see `peerlink doctor`)",
                                from, a, to, b));
      }
      state.peerAccess.enable(from, to);
      // An exportable arena (cuMem) is reached through its mapping's access list, not peer access.
      RankResources& target = state.ranks[static_cast<std::size_t>(b)];
      if (target.arena.shared) target.arena.shared->allowAccess(from);
    }
  }
}

// Each pair's way (rank_transport.hpp) from the topology, the settings and the doctor's verdicts (across processes
// every process's cache merged, so that every rank chooses the same ways: gatherWorldVerdicts); where some pair is
// not Direct, the staged plans' buffers (collective over the world), and every pair that is not Direct in the P2P
// log.
void choosePlannedWays(CommState& state, WorldExchange& exchange) {
  const World& world = state.world;
  RankTransport transport;
  if (world.spansProcesses) {
    std::vector<std::int64_t> processes;
    for (const RankCard& card : world.cards) processes.push_back(card.pid);
    const PeerVerdicts verdicts = gatherWorldVerdicts(world, state.topology.driverVersion, state.params, exchange);
    transport = chooseRankTransport(world.topology, world.gpu, state.params, &verdicts, processes);
  } else {
    std::vector<int> gpus;
    for (const int gpu : state.devices) {
      if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
    }
    const PeerVerdicts verdicts =
        gpus.size() >= 2 ? gatherPeerVerdicts(state.topology, gpus, state.params) : PeerVerdicts{};
    transport = chooseRankTransport(state.topology, state.devices, state.params, &verdicts);
  }
  if (!needsStagedPlans(transport.links)) return;
  logInfo(LogSubsys::P2p,
          "communicator: every call runs as a staged plan ({}); {} pair{} not direct:", transport.verdicts,
          transport.reasons.size(), transport.reasons.size() == 1 ? "" : "s");
  for (const std::string& reason : transport.reasons) logInfo(LogSubsys::P2p, "  {}", reason);
  state.planned = makePlannedWays(state, std::move(transport.links), exchange);
}

// Every local rank's card, the world gathered from every rank's, and the world checked (world.hpp).
World gatherWorld(const CommState& state, const WorldSpec& spec) {
  std::vector<std::vector<std::uint8_t>> mine;
  for (std::size_t i = 0; i < spec.ranks.size(); ++i) {
    mine.push_back(
        encodeRankCard(makeRankCard(spec.ranks[i], spec.nranks, state.topology, spec.devices[i], state.params,
                                    spec.hostId, state.topology.host, static_cast<std::int64_t>(::getpid()))));
  }
  const std::vector<std::uint8_t> all = spec.exchange->allGather(mine, kRankCardBytes);
  std::vector<RankCard> cards;
  for (int r = 0; r < spec.nranks; ++r) {
    try {
      cards.push_back(decodeRankCard(all.data() + static_cast<std::size_t>(r) * kRankCardBytes, kRankCardBytes));
    } catch (const Error& error) {
      throw Error(error.code(), fmt::format("the card of rank {}: {}", r, error.what()));
    }
  }
  return makeWorld(std::move(cards), spec.ranks, state.params.getBool("PEERLINK_COLL_SHARE_GPUS"));
}

// The CPUs each launch thread runs on: its GPU's NUMA node's (cpu_affinity.hpp), decided on this thread, whose
// mask the threads inherit. Index 0 is the caller's own thread, which is the application's and left alone.
std::vector<CpuSet> launchThreadCpus(const Topology& topology, const std::vector<int>& devices, const Params& params) {
  std::vector<CpuSet> cpus(devices.size());
  for (std::size_t i = 1; i < devices.size(); ++i) {
    std::string cpuList;
    for (const Gpu& gpu : topology.gpus) {
      if (gpu.cudaOrdinal == devices[i]) cpuList = gpu.cpuAffinity;
    }
    const AffinityDecision decision = decideNearGpu(params, cpuList);
    logInfo(LogSubsys::Coll, "CPU affinity of the launch thread of GPU {}: {}", devices[i], decision.reason);
    if (decision.bindTo) cpus[i] = *decision.bindTo;
  }
  return cpus;
}

}  // namespace

void setTableRank(SymmetricTable& table, int rank, const SymmetricLayout& layout, void* base) {
  auto* bytes = static_cast<unsigned char*>(base);
  table.flags[rank] = reinterpret_cast<unsigned long long*>(bytes + layout.flags);
  table.scratch[rank] = bytes + layout.scratch;
  table.ll128Scratch[rank] = bytes + layout.ll128Scratch;
  table.p2pScratch[rank] = bytes + layout.p2pScratch;
  table.ringStage[rank] = layout.hasRingStage ? bytes + layout.ringStage : nullptr;
  table.stage[rank] = layout.hasStage ? bytes + layout.stage : nullptr;
  table.window[rank] = layout.windowBytes > 0 ? bytes + layout.window : nullptr;
  table.ringArea[rank] = layout.hasRingArea ? bytes + layout.ringArea : nullptr;
}

void setupCommunicator(CommState& state, const WorldSpec& spec, const Params& params) {
  const auto start = Clock::now();
  configureLogging(params);  // before the setup threads log (a kept topology does not configure it)
  const bool shareGpus = params.getBool("PEERLINK_COLL_SHARE_GPUS");
  // The registry checked it: a multiple of 16, at least 1024, or 0 for each ring kernel's own.
  state.ringChunkBytes = static_cast<std::size_t>(params.getInt("PEERLINK_COLL_RING_CHUNK"));
  state.ringReduceBlocks = static_cast<int>(params.getInt("PEERLINK_COLL_RING_REDUCE_BLOCKS"));
  checkDevices(spec.devices, shareGpus);
  checkWorldSpec(spec);
  state.params = params;
  state.nranks = spec.nranks;
  state.devices.assign(static_cast<std::size_t>(spec.nranks), -1);
  for (std::size_t i = 0; i < spec.ranks.size(); ++i)
    state.devices[static_cast<std::size_t>(spec.ranks[i])] = spec.devices[i];
  state.timeoutNs = static_cast<std::uint64_t>(params.getInt("PEERLINK_TIMEOUT_MS")) * 1000000u;
  const std::chrono::milliseconds timeout(params.getInt("PEERLINK_TIMEOUT_MS"));
  state.settings = choiceSettingsFrom(params);
  state.work = std::make_unique<WorkTracker>();
  releaseHeldIfIdle();  // what earlier communicators held back, where nothing runs now

  // Discovery (CUDA, NVML, sysfs; once per process, discovery_cache.hpp) runs while the GPUs are set up.
  // Started once the last context existed instead, creation was no faster.
  std::future<Topology> topology = std::async(std::launch::async, [&params] { return discoveredTopology(params); });
  state.ranks.resize(static_cast<std::size_t>(spec.nranks));
  const bool autoPushKernels = state.settings.push == PushMode::Auto && state.nranks >= 3;
  const bool pushKernels = state.settings.push == PushMode::Push || autoPushKernels;
  const bool eagerGraphs = params.getBool("PEERLINK_COLL_EAGER_GRAPHS");
  std::exception_ptr setupError;
  try {
    forEachInParallel(spec.ranks.size(), [&](std::size_t i) {
      setupRank(state.ranks[static_cast<std::size_t>(spec.ranks[i])], spec.devices[i], pushKernels, eagerGraphs,
                timeout);
    });
  } catch (...) {
    setupError = std::current_exception();
  }
  const auto ranksReady = Clock::now();
  state.topology = topology.get();
  if (setupError) std::rethrow_exception(setupError);
  const auto topologyReady = Clock::now();
  state.world = gatherWorld(state, spec);
  const auto worldReady = Clock::now();

  // The fabric from the world, so ranks of several processes see the same; the push stages where AUTO may
  // push or PEERLINK_COLL_PUSH=1 asks; the staging window where peers' buffers may be out of reach (another
  // process's), or where the testing switch sends one process's calls through it.
  state.fabric = fabricOf(state.world.topology, state.world.gpu);
  const bool pushStages = pushStagesFor(state.settings, state.nranks, state.fabric);
  const bool exportable = state.world.spansProcesses;
  const CrossProcessSettings crossProcess = crossProcessSettingsFrom(params);
  state.stageInOneProcess = params.getString("PEERLINK_COLL_STAGE_UNREGISTERED") != "OFF" && !exportable;
  state.stageSerially = crossProcess.stageSerially;
  state.stageOwnParts = params.getString("PEERLINK_COLL_STAGE_COPIES") == "PEERS";
  if (params.getString("PEERLINK_COLL_STAGE_GRAPHS") == "ON") state.stagedGraphs = std::make_unique<StagedGraphs>();
  state.shared.mode = crossProcess.sharing;
  if (state.world.spansProcesses && state.shared.mode != BufferSharing::Off && !everyProcessOnOneGpu(state.world)) {
    state.shared.mode = BufferSharing::Off;
    logInfo(LogSubsys::Coll,
            "shared buffers: off, as some process drives ranks on more than one GPU (another "
            "process's allocation opens for one GPU of a process only); calls on unregistered "
            "buffers go through the staging windows");
  }
  state.arenaRing = crossProcess.arenaRing;
  state.arenaRingShape = crossProcess.arenaRingShape;
  state.layout =
      symmetricLayout(state.nranks, pushStages, exportable || state.stageInOneProcess ? crossProcess.windowBytes : 0,
                      state.arenaRing != ArenaRingMode::Off);
  const ShareKind kind = arenaShareKind(state.world);
  forEachInParallel(spec.ranks.size(), [&](std::size_t i) {
    allocateArena(state.ranks[static_cast<std::size_t>(spec.ranks[i])], state.layout, exportable, kind, timeout);
  });
  const auto arenasReady = Clock::now();
  choosePlannedWays(state, *spec.exchange);
  enablePeers(state);
  state.tables.assign(static_cast<std::size_t>(state.nranks), SymmetricTable{});
  for (const int a : state.localRanks()) {
    for (const int b : state.localRanks()) {
      setTableRank(state.tables[static_cast<std::size_t>(a)], b, state.layout,
                   state.ranks[static_cast<std::size_t>(b)].arena.base());
    }
  }
  const auto peersReady = Clock::now();
  // Under the staged plans no kernel reaches another process's arena (and without peer access none could map it).
  if (state.world.spansProcesses && !state.planned) shareArenas(state, *spec.exchange, spec.shareTimeout);
  const auto sharedReady = Clock::now();

  {
    // A pinned allocation makes the current device's context: a rank's GPU, never device 0 by default.
    DeviceGuard guard(state.devices[static_cast<std::size_t>(state.localRanks().front())]);
    state.failures = PinnedBuffer(sizeof(kernels::CollFailure) * static_cast<std::size_t>(state.nranks),
                                  cudaHostAllocMapped | cudaHostAllocPortable);
  }
  std::memset(state.failures.data(), 0, state.failures.size());
  std::vector<int> smCounts;
  for (const RankCard& card : state.world.cards) smCounts.push_back(card.smCount);
  state.maxBlocks = collGridCap(state.world.gpu, smCounts, static_cast<int>(params.getInt("PEERLINK_COLL_MAX_BLOCKS")));
  std::vector<int> computeMajors;
  for (const RankCard& card : state.world.cards) computeMajors.push_back(card.ccMajor);
  state.overlapLaunches =
      launchesMayOverlap(params.getBool("PEERLINK_COLL_PDL"), computeMajors, state.world.gpusShared);
  // Eager launches side by side (launch_threads.hpp), only with a core for every local rank's thread besides
  // the caller's, as the threads spin while awake. How long they stay awake is the CPU a run of calls costs
  // against the calls it speeds up: calls in a loop come microseconds apart, a training step's milliseconds.
  const std::chrono::microseconds awake{params.getInt("PEERLINK_COLL_LAUNCH_THREADS")};
  const auto local = static_cast<int>(spec.ranks.size());
  if (awake.count() > 0 && local > 1 && std::thread::hardware_concurrency() > static_cast<unsigned int>(local)) {
    const std::vector<int> localDevices = spec.devices;
    state.launchThreads = std::make_unique<LaunchThreads>(
        local,
        [localDevices](int index) {
          PEERLINK_CUDA_CHECK(cudaSetDevice(localDevices[static_cast<std::size_t>(index)]));
        },
        awake, LaunchThreads::kTakeBackAfter, launchThreadCpus(state.topology, localDevices, params));
  }
  state.pending.assign(static_cast<std::size_t>(state.nranks), {});
  state.reported.assign(static_cast<std::size_t>(state.nranks), 0);
  // No rank's kernel may store into a peer's arena before the peer has zeroed it and mapped everyone's.
  spec.exchange->barrier();
  logInfo(LogSubsys::Coll,
          "communicator of {} ranks ({} here, on GPUs {}) created in {:.1f} ms (GPUs set up {:.1f}, topology {:.1f} "
          "more, world {:.1f}, arenas {:.1f}{}, peer access {:.1f}, shared with other processes {}; deadline {} ms, "
          "algorithm {}, direct launches {} the previous kernel, eager launches from {})",
          state.nranks, local, fmt::join(spec.devices, ","), millisecondsBetween(start, Clock::now()),
          millisecondsBetween(start, ranksReady), millisecondsBetween(ranksReady, topologyReady),
          millisecondsBetween(topologyReady, worldReady), millisecondsBetween(worldReady, arenasReady),
          pushStages ? " with push stages" : "", millisecondsBetween(arenasReady, peersReady),
          state.world.spansProcesses ? fmt::format("{:.1f} ms", millisecondsBetween(peersReady, sharedReady))
                                     : std::string("no"),
          state.timeoutNs / 1000000u, algorithmName(state.settings.forced),
          state.overlapLaunches ? "overlap" : "wait for",
          state.launchThreads ? "a thread per rank" : "the calling thread");
}

}  // namespace peerlink::coll
