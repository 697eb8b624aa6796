// Creating and destroying a communicator's resources (comm_setup.hpp).
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

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll/comm_launch_support.hpp"
#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/log.hpp"
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

// The push kernels' stages: nranks senders' slots of kCollPushSlotBytes per rank, under PEERLINK_COLL_PUSH=1
// and where AUTO may push (3+ ranks of an NVLink mesh: pushStagesFor). Not zeroed: the
// kernels' flags guard every read.
void addPushStages(CommState& state) {
  for (RankResources& rank : state.ranks) {
    rank.stage = DeviceBuffer(rank.device, static_cast<std::size_t>(state.nranks) * kernels::kCollPushSlotBytes);
  }
}

// One rank's GPU: context, SM count, zeroed flags / scratch / counters, every collective kernel loaded.
// Runs on its own thread (context creation and module loads of several GPUs overlap).
// `push`: the push reduction's kernels (PEERLINK_COLL_PUSH=1, or AUTO on 3+ ranks, which may push). The stages
// come once the topology is known (addPushStages).
void setupRank(RankResources& rank, int device, int nranks, bool push) {
  const auto start = Clock::now();
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaFree(nullptr));  // creates the context now, on this thread
  PEERLINK_CU_CHECK(driverApi().ctxGetCurrent(&rank.context));
  const auto contextReady = Clock::now();
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&rank.smCount, cudaDevAttrMultiProcessorCount, device));
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&rank.computeMajor, cudaDevAttrComputeCapabilityMajor, device));
  rank.device = device;
  rank.flags = DeviceBuffer(device, kernels::kCollFlagBytes);
  rank.scratch = DeviceBuffer(device, 2 * static_cast<std::size_t>(nranks) * kernels::kCollLlSlotBytes);
  // Apart from LL's: an LL receiver must never find LL128 payload where it expects its flags.
  rank.ll128Scratch = DeviceBuffer(device, 2 * static_cast<std::size_t>(nranks) * kernels::kCollLl128SlotBytes);
  // Apart from the collectives' too: a pair's sets and the collectives are numbered apart, so their lines
  // in one slot could meet.
  rank.p2pScratch = DeviceBuffer(device, 2 * static_cast<std::size_t>(nranks) * kernels::kCollP2pLlSlotBytes);
  if (nranks > 1) rank.ringStage = DeviceBuffer(device, kernels::kCollRingStageBytes);
  rank.sync = DeviceBuffer(device, sizeof(kernels::CollRankSync));
  rank.eagerGraph = std::make_unique<kernels::KernelGraph>();
  rank.copyStream = Stream(device);
  rank.forkEvent = Event(device, cudaEventDisableTiming);
  rank.joinEvent = Event(device, cudaEventDisableTiming);
  PEERLINK_CUDA_CHECK(cudaMemset(rank.flags.data(), 0, rank.flags.size()));
  PEERLINK_CUDA_CHECK(cudaMemset(rank.scratch.data(), 0, rank.scratch.size()));
  PEERLINK_CUDA_CHECK(cudaMemset(rank.ll128Scratch.data(), 0, rank.ll128Scratch.size()));
  PEERLINK_CUDA_CHECK(cudaMemset(rank.p2pScratch.data(), 0, rank.p2pScratch.size()));
  PEERLINK_CUDA_CHECK(cudaMemset(rank.sync.data(), 0, rank.sync.size()));
  const auto buffersReady = Clock::now();
  // LL128 runs on compute capability 9.0+ only (ll128Capable): its kernels are loaded there only.
  kernels::preloadCollKernels(push, rank.computeMajor >= 9);
  // Peers store into these buffers from their first kernel on: the zeroes must have landed before.
  PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  logInfo(LogSubsys::Coll, "GPU {} set up: context {:.1f} ms, buffers {:.1f}, kernels loaded {:.1f}", device,
          millisecondsBetween(start, contextReady), millisecondsBetween(contextReady, buffersReady),
          millisecondsBetween(buffersReady, Clock::now()));
}

// On one thread once every GPU is set up: the driver takes the enables one after another anyway (round 49
// calls A and B: each rank's thread enabling its own GPU's peers, after its kernel loads or before its
// buffers, made creation no faster; cudaMalloc after the enables took longer instead).
void enablePeers(CommState& state) {
  for (int a = 0; a < state.nranks; ++a) {
    for (int b = 0; b < state.nranks; ++b) {
      if (a == b) continue;
      const int from = state.devices[static_cast<std::size_t>(a)];
      const int to = state.devices[static_cast<std::size_t>(b)];
      if (from == to) continue;  // two ranks on one GPU (PEERLINK_COLL_SHARE_GPUS): local memory
      int can = 0;
      PEERLINK_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
      if (!can) {
        throw Error(ErrorCode::Unsupported,
                    fmt::format("Communicator: GPU {} (rank {}) cannot access GPU {} (rank {}) as a peer; the "
                                "collectives need peer access between every pair (see `peerlink doctor`)",
                                from, a, to, b));
      }
      state.peerAccess.enable(from, to);
    }
  }
}

}  // namespace

void setupCommunicator(CommState& state, const std::vector<int>& devices, const Params& params) {
  const auto start = Clock::now();
  configureLogging(params);  // before the setup threads log (a kept topology does not configure it)
  const bool shareGpus = params.getBool("PEERLINK_COLL_SHARE_GPUS");
  // The registry checked it: a multiple of 16, at least 1024, or 0 for each ring kernel's own.
  state.ringChunkBytes = static_cast<std::size_t>(params.getInt("PEERLINK_COLL_RING_CHUNK"));
  state.ringReduceBlocks = static_cast<int>(params.getInt("PEERLINK_COLL_RING_REDUCE_BLOCKS"));
  checkDevices(devices, shareGpus);
  state.params = params;
  state.devices = devices;
  state.nranks = static_cast<int>(devices.size());
  state.timeoutNs = static_cast<std::uint64_t>(params.getInt("PEERLINK_TIMEOUT_MS")) * 1000000u;
  state.settings = choiceSettingsFrom(params);

  // Discovery (CUDA, NVML, sysfs; once per process, discovery_cache.hpp) runs while the GPUs are set up: it
  // only feeds chooseAlgorithm. Started once the last context existed instead, creation was no faster
  // (round 49 call C).
  std::future<Topology> topology = std::async(std::launch::async, [&params] { return discoveredTopology(params); });
  state.ranks.resize(devices.size());
  std::vector<std::exception_ptr> errors(devices.size());
  std::vector<std::thread> threads;
  const bool autoPushKernels = state.settings.push == PushMode::Auto && state.nranks >= 3;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        setupRank(state.ranks[r], devices[r], state.nranks, state.settings.push == PushMode::Push || autoPushKernels);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const auto ranksReady = Clock::now();
  state.topology = topology.get();
  const auto topologyReady = Clock::now();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  enablePeers(state);
  const auto peersReady = Clock::now();
  state.fabric = fabricOf(state.topology, devices);
  const bool pushStages = pushStagesFor(state.settings, state.nranks, state.fabric);
  if (pushStages) addPushStages(state);
  const auto stagesReady = Clock::now();

  state.failures =
      PinnedBuffer(sizeof(kernels::CollFailure) * devices.size(), cudaHostAllocMapped | cudaHostAllocPortable);
  std::memset(state.failures.data(), 0, state.failures.size());
  std::vector<int> smCounts;
  for (int r = 0; r < state.nranks; ++r) {
    const RankResources& rank = state.ranks[static_cast<std::size_t>(r)];
    state.symmetric.flags[r] = static_cast<unsigned long long*>(rank.flags.data());
    state.symmetric.scratch[r] = rank.scratch.data();
    state.symmetric.ll128Scratch[r] = rank.ll128Scratch.data();
    state.symmetric.p2pScratch[r] = rank.p2pScratch.data();
    state.symmetric.stage[r] = rank.stage.data();
    state.symmetric.ringStage[r] = rank.ringStage.data();
    smCounts.push_back(rank.smCount);
  }
  state.maxBlocks = collGridCap(devices, smCounts, static_cast<int>(params.getInt("PEERLINK_COLL_MAX_BLOCKS")));
  std::vector<int> computeMajors;
  for (const RankResources& rank : state.ranks) computeMajors.push_back(rank.computeMajor);
  const bool gpusShared = std::set<int>(devices.begin(), devices.end()).size() != devices.size();
  state.overlapLaunches = launchesMayOverlap(params.getBool("PEERLINK_COLL_PDL"), computeMajors, gpusShared);
  // Eager launches side by side (launch_threads.hpp), only with a core for every rank's thread besides the
  // caller's, as the threads spin while awake. How long they stay awake is the CPU a run of calls costs
  // against the calls it speeds up: calls in a loop come microseconds apart, a training step's milliseconds.
  const std::chrono::microseconds awake{params.getInt("PEERLINK_COLL_LAUNCH_THREADS")};
  if (awake.count() > 0 && state.nranks > 1 &&
      std::thread::hardware_concurrency() > static_cast<unsigned int>(state.nranks)) {
    state.launchThreads = std::make_unique<LaunchThreads>(
        state.nranks,
        [devices](int rank) { PEERLINK_CUDA_CHECK(cudaSetDevice(devices[static_cast<std::size_t>(rank)])); }, awake);
  }
  state.pending.assign(devices.size(), {});
  state.reported.assign(devices.size(), 0);
  logInfo(LogSubsys::Coll,
          "communicator of {} ranks on GPUs {} created in {:.1f} ms (GPUs set up {:.1f}, topology {:.1f} more, "
          "peer access {:.1f}, push stages {}; deadline {} ms, algorithm {}, direct launches {} the previous "
          "kernel, eager launches from {})",
          state.nranks, fmt::join(devices, ","), millisecondsBetween(start, Clock::now()),
          millisecondsBetween(start, ranksReady), millisecondsBetween(ranksReady, topologyReady),
          millisecondsBetween(topologyReady, peersReady),
          pushStages ? fmt::format("{:.1f}", millisecondsBetween(peersReady, stagesReady)) : std::string("none"),
          state.timeoutNs / 1000000u, algorithmName(state.settings.forced),
          state.overlapLaunches ? "overlap" : "wait for",
          state.launchThreads ? "a thread per rank" : "the calling thread");
}

void releaseCommunicator(CommState& state) noexcept {
  if (state.launchThreads != nullptr) {
    const LaunchThreads::Stats& stats = state.launchThreads->stats();
    try {
      logInfo(LogSubsys::Coll,
              "launch threads: {} eager sets, {} launches by the threads, {} taken back from a thread that had "
              "not started them in {} us, longest wait for a thread {:.1f} us",
              stats.sets, stats.handedOver, stats.takenBack, LaunchThreads::kTakeBackAfter.count(),
              std::chrono::duration<double, std::micro>(stats.longestWait).count());
    } catch (...) {  // out of memory for the line: nothing to report it to
    }
  }
  std::uint64_t graphLaunches = 0;
  std::uint64_t graphUpdates = 0;
  for (const RankResources& rank : state.ranks) {
    if (rank.eagerGraph == nullptr) continue;
    graphLaunches += rank.eagerGraph->launches();
    graphUpdates += rank.eagerGraph->updates();
  }
  try {
    logInfo(LogSubsys::Coll, "eager launches through the kept graphs: {}, {} of them re-aimed at new arguments",
            graphLaunches, graphUpdates);
  } catch (...) {  // out of memory for the line: nothing to report it to
  }
  // A kernel of one rank may still store into another rank's flags or scratch (a late peer finishing
  // after a timeout): every GPU drains before any buffer is freed. Every wait is bounded by the deadline.
  int current = -1;
  const bool known = cudaGetDevice(&current) == cudaSuccess;
  for (const RankResources& rank : state.ranks) {
    if (rank.device < 0) continue;
    if (cudaSetDevice(rank.device) == cudaSuccess) cudaDeviceSynchronize();
    cudaGetLastError();
  }
  if (known) cudaSetDevice(current);
  cudaGetLastError();
  // Peer access stays as it is: other parts of the process may use it, and enabling is idempotent.
}

}  // namespace peerlink::coll
