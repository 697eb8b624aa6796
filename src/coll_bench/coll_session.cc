#include "coll_bench/coll_session.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "coll/communicator_access.hpp"
#include "coll_bench/coll_bench_data.hpp"
#include "coll_bench/coll_world.hpp"
#include "coll_bench/nccl_session.hpp"
#include "coll_bench/reference_nccl.hpp"
#include "core/cuda_check.hpp"
#include "core/stream_wait.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// A captured graph: one for all ranks (Joined) or one per rank (PerRank); destroyed with the object.
struct Graphs {
  std::vector<cudaGraph_t> graphs;
  std::vector<cudaGraphExec_t> execs;
  Graphs() = default;
  Graphs(const Graphs&) = delete;
  Graphs& operator=(const Graphs&) = delete;
  ~Graphs() {
    for (cudaGraphExec_t exec : execs) cudaGraphExecDestroy(exec);
    for (cudaGraph_t graph : graphs) cudaGraphDestroy(graph);
  }
};

}  // namespace

struct CollSession::State {
  Params params;
  CollBenchOptions options;
  const CollWorld* world = nullptr;
  int ranks = 0;                            // the world's
  std::vector<int> local;                   // this process's ranks, by local index
  std::vector<int> devices;                 // their GPUs, by local index
  std::vector<Stream> streams;              // by local index, as every vector below
  std::vector<Event> starts, stops, joins;  // joins: fork (the first local rank) and join events for joined captures
  std::vector<Event> marks;                 // --iteration-times: [iteration * local ranks + index], made when needed
  std::vector<DeviceBuffer> sendBuffers, recvBuffers;
  BufferSet plain;
  std::unique_ptr<Communicator> communicator;
  NodeWorld* nodes = nullptr;  // the communicator's world across hosts; null on one host
  std::unique_ptr<NcclSession> nccl;
  std::vector<int> windows;  // --register: peerlink's send and recv buffers registered as windows

  ~State() {
    // Collective: every process deregisters, so none frees a buffer another still maps.
    try {
      for (const int window : windows) communicator->deregisterWindow(window);
    } catch (const Error&) {  // a peer is gone: nothing left to coordinate with
    }
  }
  std::array<CollConfigStatus, kCollConfigCount> configs;
  std::vector<unsigned char> host;  // staging for the checked run

  std::size_t count() const { return local.size(); }

  std::chrono::milliseconds timeout(int collectives) const {
    return std::chrono::milliseconds(params.getInt("PEERLINK_TIMEOUT_MS") * std::max(1, collectives));
  }

  // Waits for every local rank's stream, up to a deadline per collective queued; a kernel that gave up at its own
  // deadline is reported as soon as it records so (the communicator's health, checked while waiting).
  void waitAll(int collectives, const std::string& what) {
    const std::function<void()> health = [this] {
      if (communicator) communicator->checkHealth();
    };
    for (std::size_t i = 0; i < count(); ++i) {
      waitForStream(streams[i].get(), timeout(collectives), fmt::format("{} on rank {}", what, local[i]),
                    "PEERLINK_TIMEOUT_MS per collective", health);
    }
    health();
  }

  std::size_t elementSize() const { return dataTypeSize(options.type); }

  void* sendOf(const BufferSet& set, std::size_t i, Placement placement, const CollSizing& sizing) const {
    if (placement == Placement::OutOfPlace) return set.send[i];
    return static_cast<char*>(set.recv[i]) + local[i] * sizing.sendInPlaceOffset * elementSize();
  }
  void* recvOf(const BufferSet& set, std::size_t i, Placement placement, const CollSizing& sizing) const {
    if (placement == Placement::OutOfPlace) return set.recv[i];
    return static_cast<char*>(set.recv[i]) + local[i] * sizing.recvInPlaceOffset * elementSize();
  }

  const BufferSet& buffersOf(CollConfig config) const {
    return config == CollConfig::NcclSymmetric ? nccl->symmetric : plain;
  }

  // One iteration of the collective on every local rank.
  void issuePeerlink(Placement placement, const CollSizing& sizing) {
    Communicator& comm = *communicator;
    const std::size_t n = sizing.count;
    const DataType type = options.type;
    const bool group = options.collective == Collective::SendRecv;
    if (group) comm.groupStart();
    for (std::size_t i = 0; i < count(); ++i) {
      const int rank = local[i];
      const void* send = sendOf(plain, i, placement, sizing);
      void* recv = recvOf(plain, i, placement, sizing);
      cudaStream_t stream = streams[i].get();
      switch (options.collective) {
        case Collective::AllReduce: comm.allReduce(rank, send, recv, n, type, options.op, stream); break;
        case Collective::Broadcast: comm.broadcast(rank, send, recv, n, type, options.root, stream); break;
        case Collective::Reduce: comm.reduce(rank, send, recv, n, type, options.op, options.root, stream); break;
        case Collective::AllGather: comm.allGather(rank, send, recv, n, type, stream); break;
        case Collective::ReduceScatter: comm.reduceScatter(rank, send, recv, n, type, options.op, stream); break;
        case Collective::AllToAll: comm.allToAll(rank, send, recv, n, type, stream); break;
        case Collective::SendRecv:
          comm.send(rank, send, n, type, (rank + 1) % ranks, stream);
          comm.recv(rank, recv, n, type, (rank + ranks - 1) % ranks, stream);
          break;
      }
    }
    if (group) comm.groupEnd();
  }

  void issueNccl(const BufferSet& set, Placement placement, const CollSizing& sizing) {
    const NcclApi& api = nccl->library.api;
    const std::size_t n = sizing.count;
    const ncclDataType_t type = ncclDataTypeOf(options.type);
    const ncclRedOp_t op = ncclRedOpOf(options.op);
    ncclResult_t first = kNcclSuccess;
    auto keep = [&](ncclResult_t result) {
      if (first == kNcclSuccess) first = result;
    };
    nccl->check(api.groupStart(), "ncclGroupStart");
    for (std::size_t i = 0; i < count(); ++i) {
      const int rank = local[i];
      const void* send = sendOf(set, i, placement, sizing);
      void* recv = recvOf(set, i, placement, sizing);
      ncclComm_t comm = nccl->comms[i];
      cudaStream_t stream = streams[i].get();
      switch (options.collective) {
        case Collective::AllReduce: keep(api.allReduce(send, recv, n, type, op, comm, stream)); break;
        case Collective::Broadcast: keep(api.broadcast(send, recv, n, type, options.root, comm, stream)); break;
        case Collective::Reduce: keep(api.reduce(send, recv, n, type, op, options.root, comm, stream)); break;
        case Collective::AllGather: keep(api.allGather(send, recv, n, type, comm, stream)); break;
        case Collective::ReduceScatter: keep(api.reduceScatter(send, recv, n, type, op, comm, stream)); break;
        case Collective::AllToAll:
          if (api.allToAll != nullptr) {
            keep(api.allToAll(send, recv, n, type, comm, stream));
            break;
          }
          for (int peer = 0; peer < ranks; ++peer) {  // nccl-tests' grouped send/recv
            const std::size_t offset = peer * n * elementSize();
            keep(api.send(static_cast<const char*>(send) + offset, n, type, peer, comm, stream));
            keep(api.recv(static_cast<char*>(recv) + offset, n, type, peer, comm, stream));
          }
          break;
        case Collective::SendRecv:
          keep(api.send(send, n, type, (rank + 1) % ranks, comm, stream));
          keep(api.recv(recv, n, type, (rank + ranks - 1) % ranks, comm, stream));
          break;
      }
    }
    const ncclResult_t end = api.groupEnd();
    nccl->check(first, collectiveName(options.collective));
    nccl->check(end, "ncclGroupEnd");
  }

  void issue(CollConfig config, Placement placement, const CollSizing& sizing, int iterations) {
    for (int i = 0; i < iterations; ++i) {
      if (isNcclConfig(config)) {
        issueNccl(buffersOf(config), placement, sizing);
      } else {
        issuePeerlink(placement, sizing);
      }
    }
  }

  // Captures `iterations` iterations. On failure every capture is ended before the error propagates, so
  // the streams stay usable.
  void capture(Graphs& out, CollConfig config, Placement placement, const CollSizing& sizing, int iterations) {
    const bool joined = options.capture == GraphCapture::Joined;
    std::vector<cudaStream_t> capturing;
    try {
      if (joined) {
        cudaStream_t origin = streams[0].get();
        PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
        capturing.push_back(origin);
        PEERLINK_CUDA_CHECK(cudaEventRecord(joins[0].get(), origin));
        for (std::size_t i = 1; i < count(); ++i) {
          PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[i].get(), joins[0].get(), 0));
        }
      } else {
        for (std::size_t i = 0; i < count(); ++i) {
          PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(streams[i].get(), cudaStreamCaptureModeThreadLocal));
          capturing.push_back(streams[i].get());
        }
      }
      issue(config, placement, sizing, iterations);
      if (joined) {
        for (std::size_t i = 1; i < count(); ++i) {
          PEERLINK_CUDA_CHECK(cudaEventRecord(joins[i].get(), streams[i].get()));
          PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[0].get(), joins[i].get(), 0));
        }
      }
      for (cudaStream_t stream : capturing) {
        cudaGraph_t graph = nullptr;
        PEERLINK_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        out.graphs.push_back(graph);
      }
      capturing.clear();
      for (cudaGraph_t graph : out.graphs) {
        cudaGraphExec_t exec = nullptr;
        PEERLINK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        out.execs.push_back(exec);
      }
    } catch (...) {
      for (cudaStream_t stream : capturing) {
        cudaGraph_t graph = nullptr;
        if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
      }
      cudaGetLastError();
      throw;
    }
  }

  void launch(const Graphs& graphs) {
    for (std::size_t i = 0; i < graphs.execs.size(); ++i) {
      PEERLINK_CUDA_CHECK(cudaGraphLaunch(graphs.execs[i], streams[i].get()));
    }
  }

  bool isGraph(CollConfig config) const { return config != CollConfig::Peerlink && config != CollConfig::Nccl; }

  // One run in the configuration's own mode (a one-iteration graph for graph configurations).
  void runOnce(CollConfig config, Placement placement, const CollSizing& sizing) {
    if (!isGraph(config)) {
      issue(config, placement, sizing, 1);
      return;
    }
    Graphs graphs;
    capture(graphs, config, placement, sizing, 1);
    launch(graphs);
    waitAll(1, "the checked collective");
  }

  std::int64_t checkedRun(CollConfig config, Placement placement, const CollSizing& sizing) {
    const BufferSet& set = buffersOf(config);
    const CheckSpec spec{options.collective, options.type, options.op, ranks, options.root, sizing};
    const std::size_t size = elementSize();
    host.resize(std::max(sizing.sendCount, sizing.recvCount) * size);
    for (std::size_t i = 0; i < count(); ++i) {
      cudaStream_t stream = streams[i].get();
      const std::size_t poisonBytes = placement == Placement::InPlace ? sizing.bytes : sizing.recvCount * size;
      PEERLINK_CUDA_CHECK(cudaMemsetAsync(set.recv[i], kPoisonByte, poisonBytes, stream));
      fillInput(spec, local[i], host.data());
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(sendOf(set, i, placement, sizing), host.data(), sizing.sendCount * size,
                                          cudaMemcpyHostToDevice, stream));
      waitForStream(stream, timeout(1), fmt::format("uploading rank {}'s input", local[i]));
    }
    world->barrier();  // every rank's input is in place before any rank's kernel reads it
    runOnce(config, placement, sizing);
    waitAll(1, "the checked collective");
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < count(); ++i) {
      const std::size_t elements = checkedElements(spec, local[i]);
      if (elements == 0) continue;
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(host.data(), recvOf(set, i, placement, sizing), elements * size,
                                          cudaMemcpyDeviceToHost, streams[i].get()));
      waitForStream(streams[i].get(), timeout(1), fmt::format("reading rank {}'s output", local[i]));
      wrong += countWrong(spec, local[i], host.data());
    }
    return world->total(wrong);
  }

  // Eager iterations one by one (--iteration-times): an event on every local rank's stream after each; per
  // iteration the slowest rank's time from the event before (the first: from the run's start). Fills
  // `perIteration` and returns the whole run's time per iteration, as timedRun does.
  double timedIterations(CollConfig config, Placement placement, const CollSizing& sizing,
                         std::vector<double>& perIteration) {
    const int iterations = options.iterations;
    while (marks.size() < static_cast<std::size_t>(iterations) * count()) {
      marks.emplace_back(devices[marks.size() % count()]);
    }
    const auto mark = [&](int iteration, std::size_t i) -> Event& {
      return marks[static_cast<std::size_t>(iteration) * count() + i];
    };
    world->barrier();
    for (std::size_t i = 0; i < count(); ++i) PEERLINK_CUDA_CHECK(cudaEventRecord(starts[i].get(), streams[i].get()));
    for (int k = 0; k < iterations; ++k) {
      issue(config, placement, sizing, 1);
      for (std::size_t i = 0; i < count(); ++i) {
        PEERLINK_CUDA_CHECK(cudaEventRecord(mark(k, i).get(), streams[i].get()));
      }
    }
    waitAll(iterations, "the timed iterations");
    perIteration.assign(static_cast<std::size_t>(iterations), 0.0);
    double slowestMs = 0;
    for (std::size_t i = 0; i < count(); ++i) {
      for (int k = 0; k < iterations; ++k) {
        float ms = 0;
        cudaEvent_t from = k == 0 ? starts[i].get() : mark(k - 1, i).get();
        PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, from, mark(k, i).get()));
        perIteration[static_cast<std::size_t>(k)] =
            std::max(perIteration[static_cast<std::size_t>(k)], static_cast<double>(ms) * 1000.0);
      }
      float total = 0;
      PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&total, starts[i].get(), mark(iterations - 1, i).get()));
      slowestMs = std::max(slowestMs, static_cast<double>(total));
    }
    for (double& us : perIteration) us = world->slowest(us);
    return world->slowest(slowestMs * 1000.0 / iterations);
  }

  // Per iteration, in microseconds, the slowest rank of the world (a joined graph is timed on the first local
  // rank's stream, which it is launched into and which waits for every local rank's part).
  double timedRun(CollConfig config, Placement placement, const CollSizing& sizing, std::vector<double>& perIteration) {
    const int iterations = options.iterations;
    issue(config, placement, sizing, options.warmup);
    waitAll(options.warmup, "the warm-up");
    if (nodes != nullptr) nodes->resetAcrossNodesTime();  // acrossNodesUs: the timed iterations' alone
    if (options.iterationTimes && !isGraph(config)) return timedIterations(config, placement, sizing, perIteration);
    Graphs graphs;
    if (isGraph(config)) {
      capture(graphs, config, placement, sizing, iterations);
      launch(graphs);  // the first launch uploads the graph
      waitAll(iterations, "the first graph launch");
    }
    const std::size_t timed = isGraph(config) && options.capture == GraphCapture::Joined ? 1 : count();
    world->barrier();  // the processes start the timed run together
    for (std::size_t i = 0; i < timed; ++i) PEERLINK_CUDA_CHECK(cudaEventRecord(starts[i].get(), streams[i].get()));
    if (isGraph(config)) {
      launch(graphs);
    } else {
      issue(config, placement, sizing, iterations);
    }
    for (std::size_t i = 0; i < timed; ++i) PEERLINK_CUDA_CHECK(cudaEventRecord(stops[i].get(), streams[i].get()));
    waitAll(iterations, "the timed iterations");
    double slowestMs = 0;
    for (std::size_t i = 0; i < timed; ++i) {
      float ms = 0;
      PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, starts[i].get(), stops[i].get()));
      slowestMs = std::max(slowestMs, static_cast<double>(ms));
    }
    return world->slowest(slowestMs * 1000.0 / iterations);
  }

  // After timedRun: per timed iteration, the slowest rank's time in calls across nodes; 0 on one host and for the
  // configurations that do not run peerlink eagerly.
  double acrossNodesUs(CollConfig config) const {
    if (nodes == nullptr || config != CollConfig::Peerlink) return 0;
    return world->slowest(nodes->acrossNodesTime().seconds * 1e6 / options.iterations);
  }
};

CollSession::CollSession(const Params& params, const CollBenchOptions& options, const CollWorld& world, CollRun& run)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.params = params;
  s.options = options;
  s.world = &world;
  s.ranks = world.size();
  s.local = world.localRanks();
  s.devices = world.devices();
  if ((options.collective == Collective::Broadcast || options.collective == Collective::Reduce) &&
      options.root >= s.ranks) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-r {}: there are {} ranks", options.root, s.ranks));
  }
  std::size_t maxBytes = 256;
  for (std::size_t bytes : options.sizes) {
    maxBytes = std::max(maxBytes, collSizing(options.collective, bytes, options.type, s.ranks).bytes);
  }
  run.ranks = s.ranks;
  std::vector<std::string> names;
  std::vector<std::string> busIds;
  for (const int device : s.devices) {
    cudaDeviceProp properties{};
    PEERLINK_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    names.emplace_back(properties.name);
    busIds.push_back(
        fmt::format("{:04x}:{:02x}:{:02x}.0", properties.pciDomainID, properties.pciBusID, properties.pciDeviceID));
    s.streams.emplace_back(device);
    s.starts.emplace_back(device);
    s.stops.emplace_back(device);
    s.joins.emplace_back(device, cudaEventDisableTiming);
    s.sendBuffers.emplace_back(device, maxBytes);
    s.recvBuffers.emplace_back(device, maxBytes);
    s.plain.send.push_back(s.sendBuffers.back().data());
    s.plain.recv.push_back(s.recvBuffers.back().data());
  }
  run.deviceNames = world.gatherText(names);
  run.deviceBusIds = world.gatherText(busIds);
  // Every rank's CUDA ordinal in its own process (one process: GPUs 0..n-1).
  std::vector<std::string> ordinals;
  for (const int device : s.devices) ordinals.push_back(std::to_string(device));
  for (const std::string& ordinal : world.gatherText(ordinals)) run.devices.push_back(std::stoi(ordinal));

  auto setAll = [&](bool ncclSide, bool ok, const std::string& reason) {
    for (CollConfig config : kCollConfigs) {
      if (isNcclConfig(config) == ncclSide) s.configs[static_cast<int>(config)] = {ok, ok ? "" : reason};
    }
  };
  if (!options.peerlink) {
    setAll(false, false, "not measured (--nccl-only)");
  } else {
    try {
      const auto start = std::chrono::steady_clock::now();
      if (world.spansProcesses()) {
        UniqueId id;
        if (world.leads()) id = makeUniqueId(params);
        const std::vector<std::uint8_t> shared = world.fromRankZero(id.bytes, sizeof id.bytes);
        std::memcpy(id.bytes, shared.data(), sizeof id.bytes);
        s.communicator = std::make_unique<Communicator>(id, s.ranks, s.local, s.devices, params);
      } else {
        s.communicator = std::make_unique<Communicator>(s.devices, params);
      }
      run.creationMilliseconds =
          world.slowest(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      if (options.registerBuffers) {  // every rank's send and recv buffers as two windows (NCCL's -R 2 shape)
        const std::vector<std::size_t> bytes(s.count(), maxBytes);
        s.windows.push_back(s.communicator->registerWindow(s.plain.send, bytes));
        s.windows.push_back(s.communicator->registerWindow(s.plain.recv, bytes));
      }
      setAll(false, true, "");
      s.nodes = CommunicatorAccess::nodes(*s.communicator);
    } catch (const Error& error) {
      setAll(false, false, std::string("peerlink communicator unavailable: ") + error.what());
    }
  }
  if (!options.nccl) {
    setAll(true, false, "not measured (--no-nccl)");
    run.nccl.reason = "not measured (--no-nccl)";
  } else {
    run.nccl.nvls = ensureNvlsDisabled();  // before NCCL is loaded and initialized
    ReferenceNccl library = loadReferenceNccl(options.ncclLibrary);
    run.nccl.path = library.path;
    run.nccl.searched = library.searched;
    run.nccl.versionCode = library.versionCode;
    run.nccl.version = library.loaded ? ncclVersionString(library.versionCode) : "";
    if (!library.loaded) {
      run.nccl.reason = library.reason;
      setAll(true, false, "NCCL not loaded (" + library.reason + ")");
    } else {
      auto session = std::make_unique<NcclSession>();
      session->library = library;
      session->devices = s.devices;
      try {
        const auto start = std::chrono::steady_clock::now();
        session->init(world);
        run.nccl.initMilliseconds =
            world.slowest(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        run.nccl.loaded = true;
        s.nccl = std::move(session);
        setAll(true, true, "");
      } catch (const Error& error) {
        run.nccl.reason = error.what();
        setAll(true, false, error.what());
      }
      if (s.nccl && !library.symmetric) {
        s.configs[static_cast<int>(CollConfig::NcclSymmetric)] = {false, "N/A (" + library.symmetricReason + ")"};
      } else if (s.nccl) {
        try {
          s.nccl->setUpSymmetric(maxBytes);
        } catch (const Error& error) {
          s.configs[static_cast<int>(CollConfig::NcclSymmetric)] = {false, error.what()};
        }
      }
    }
  }
  run.configs = s.configs;
}

CollSession::~CollSession() = default;

void CollSession::abandon() noexcept {
  State* leaked = state_.release();
  (void)leaked;  // freeing would wait for the stuck kernels; the process is about to report and exit
}

std::string CollSession::peerlinkChoice(std::size_t bytesPerRank) const {
  if (!state_->communicator) return {};
  try {
    return state_->communicator->describeChoice(state_->options.collective, bytesPerRank);
  } catch (const Error& error) {
    return std::string("(describeChoice failed: ") + error.what() + ")";
  }
}

void CollSession::warmUp(const CollSizing& sizing) {
  State& s = *state_;
  if (sizing.count == 0 || s.options.warmup == 0) return;
  for (CollConfig config : kCollConfigs) {
    if (!s.configs[static_cast<int>(config)].available) continue;
    try {
      s.issue(config, Placement::OutOfPlace, sizing, s.options.warmup);
      s.waitAll(s.options.warmup, "the sweep's warm-up");
    } catch (const Error& error) {
      if (error.code() == ErrorCode::Timeout) throw;
    }
  }
}

CollMeasurement CollSession::measure(CollConfig config, Placement placement, const CollSizing& sizing) {
  State& s = *state_;
  CollMeasurement result;
  try {
    if (s.options.check) result.wrong = s.checkedRun(config, placement, sizing);
    result.timeUs = s.timedRun(config, placement, sizing, result.iterationUs);
    result.acrossNodesUs = s.acrossNodesUs(config);
    result.status = CollMeasurement::Status::Ok;
    const double seconds = result.timeUs * 1e-6;
    result.algbwGBps = seconds > 0 ? static_cast<double>(sizing.bandwidthBytes) / seconds / 1e9 : 0;
    result.busbwGBps = result.algbwGBps * busBandwidthFactor(s.options.collective, s.ranks);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::Timeout) throw;
    // A call the communicator cannot capture (across nodes with PEERLINK_NET_ASYNC=OFF) is not measured in a graph.
    result.status = error.code() == ErrorCode::Unsupported && config == CollConfig::PeerlinkGraph
                        ? CollMeasurement::Status::NotRun
                        : CollMeasurement::Status::Failed;
    result.reason = error.what();
  }
  return result;
}

}  // namespace peerlink::coll
