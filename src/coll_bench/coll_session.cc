#include "coll_bench/coll_session.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "coll_bench/coll_bench_data.hpp"
#include "coll_bench/reference_nccl.hpp"
#include "core/cuda_check.hpp"
#include "core/stream_wait.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// Rank-indexed device pointers: the plain buffers (peerlink, NCCL plain and graph) or NCCL's symmetric ones.
struct BufferSet {
  std::vector<void*> send;
  std::vector<void*> recv;
};

// NCCL's communicators and, for the symmetric configuration, ncclMemAlloc buffers registered as windows.
struct NcclSession {
  ReferenceNccl library;
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  BufferSet symmetric;
  std::vector<ncclWindow_t> windows;  // send windows then recv windows, rank order

  void check(ncclResult_t result, const char* call) const {
    if (result != kNcclSuccess) {
      throw Error(ErrorCode::RemoteError, fmt::format("NCCL {} failed: {}", call, ncclErrorText(library, result)));
    }
  }

  void init() {
    comms.assign(devices.size(), nullptr);
    const ncclResult_t result = library.api.commInitAll(comms.data(), static_cast<int>(devices.size()), devices.data());
    if (result != kNcclSuccess) {
      comms.clear();
      check(result, "ncclCommInitAll");
    }
  }

  // ncclMemAlloc + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) for every rank, grouped (the ranks of
  // one thread register together, as nccl-tests -R 2 does).
  void setUpSymmetric(std::size_t bytes) {
    bytes = (bytes + kNcclWinAlignment - 1) / kNcclWinAlignment * kNcclWinAlignment;
    for (std::size_t rank = 0; rank < devices.size(); ++rank) {
      DeviceGuard guard(devices[rank]);
      for (std::vector<void*>* set : {&symmetric.send, &symmetric.recv}) {
        void* pointer = nullptr;
        check(library.api.memAlloc(&pointer, bytes), "ncclMemAlloc");
        set->push_back(pointer);
      }
    }
    windows.assign(2 * devices.size(), nullptr);
    check(library.api.groupStart(), "ncclGroupStart");
    ncclResult_t first = kNcclSuccess;
    for (std::size_t rank = 0; rank < devices.size(); ++rank) {
      for (int which = 0; which < 2; ++which) {
        void* pointer = which == 0 ? symmetric.send[rank] : symmetric.recv[rank];
        const ncclResult_t result = library.api.commWindowRegister(
            comms[rank], pointer, bytes, &windows[which * devices.size() + rank], kNcclWinCollSymmetric);
        if (first == kNcclSuccess) first = result;
      }
    }
    const ncclResult_t end = library.api.groupEnd();
    check(first, "ncclCommWindowRegister");
    check(end, "ncclGroupEnd (window registration)");
  }

  ~NcclSession() {
    if (!windows.empty() && library.api.commWindowDeregister != nullptr) {
      library.api.groupStart();
      for (std::size_t i = 0; i < windows.size(); ++i) {
        if (windows[i] != nullptr) library.api.commWindowDeregister(comms[i % devices.size()], windows[i]);
      }
      library.api.groupEnd();
    }
    for (std::vector<void*>* set : {&symmetric.send, &symmetric.recv}) {
      for (void* pointer : *set) library.api.memFree(pointer);
    }
    for (ncclComm_t comm : comms) library.api.commDestroy(comm);
  }
};

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
  int ranks = 0;
  std::vector<int> devices;
  std::vector<Stream> streams;
  std::vector<Event> starts, stops, joins;  // joins: fork (rank 0) and join events for joined captures
  std::vector<Event> marks;                 // --iteration-times: [iteration * ranks + rank], made when first needed
  std::vector<DeviceBuffer> sendBuffers, recvBuffers;
  BufferSet plain;
  std::unique_ptr<Communicator> communicator;
  std::unique_ptr<NcclSession> nccl;
  std::array<CollConfigStatus, kCollConfigCount> configs;
  std::vector<unsigned char> host;  // staging for the checked run

  std::chrono::milliseconds timeout(int collectives) const {
    return std::chrono::milliseconds(params.getInt("PEERLINK_TIMEOUT_MS") * std::max(1, collectives));
  }

  void waitAll(int collectives, const std::string& what) {
    for (int rank = 0; rank < ranks; ++rank) {
      waitForStream(streams[rank].get(), timeout(collectives), fmt::format("{} on rank {}", what, rank),
                    "PEERLINK_TIMEOUT_MS per collective");
    }
    if (communicator) communicator->checkHealth();
  }

  std::size_t elementSize() const { return dataTypeSize(options.type); }

  void* sendOf(const BufferSet& set, int rank, Placement placement, const CollSizing& sizing) const {
    if (placement == Placement::OutOfPlace) return set.send[rank];
    return static_cast<char*>(set.recv[rank]) + rank * sizing.sendInPlaceOffset * elementSize();
  }
  void* recvOf(const BufferSet& set, int rank, Placement placement, const CollSizing& sizing) const {
    if (placement == Placement::OutOfPlace) return set.recv[rank];
    return static_cast<char*>(set.recv[rank]) + rank * sizing.recvInPlaceOffset * elementSize();
  }

  const BufferSet& buffersOf(CollConfig config) const {
    return config == CollConfig::NcclSymmetric ? nccl->symmetric : plain;
  }

  // One iteration of the collective on every rank.
  void issuePeerlink(Placement placement, const CollSizing& sizing) {
    Communicator& comm = *communicator;
    const std::size_t count = sizing.count;
    const DataType type = options.type;
    const bool group = options.collective == Collective::SendRecv;
    if (group) comm.groupStart();
    for (int rank = 0; rank < ranks; ++rank) {
      const void* send = sendOf(plain, rank, placement, sizing);
      void* recv = recvOf(plain, rank, placement, sizing);
      cudaStream_t stream = streams[rank].get();
      switch (options.collective) {
        case Collective::AllReduce: comm.allReduce(rank, send, recv, count, type, options.op, stream); break;
        case Collective::Broadcast: comm.broadcast(rank, send, recv, count, type, options.root, stream); break;
        case Collective::Reduce: comm.reduce(rank, send, recv, count, type, options.op, options.root, stream); break;
        case Collective::AllGather: comm.allGather(rank, send, recv, count, type, stream); break;
        case Collective::ReduceScatter: comm.reduceScatter(rank, send, recv, count, type, options.op, stream); break;
        case Collective::AllToAll: comm.allToAll(rank, send, recv, count, type, stream); break;
        case Collective::SendRecv:
          comm.send(rank, send, count, type, (rank + 1) % ranks, stream);
          comm.recv(rank, recv, count, type, (rank + ranks - 1) % ranks, stream);
          break;
      }
    }
    if (group) comm.groupEnd();
  }

  void issueNccl(const BufferSet& set, Placement placement, const CollSizing& sizing) {
    const NcclApi& api = nccl->library.api;
    const std::size_t count = sizing.count;
    const ncclDataType_t type = ncclDataTypeOf(options.type);
    const ncclRedOp_t op = ncclRedOpOf(options.op);
    ncclResult_t first = kNcclSuccess;
    auto keep = [&](ncclResult_t result) {
      if (first == kNcclSuccess) first = result;
    };
    nccl->check(api.groupStart(), "ncclGroupStart");
    for (int rank = 0; rank < ranks; ++rank) {
      const void* send = sendOf(set, rank, placement, sizing);
      void* recv = recvOf(set, rank, placement, sizing);
      ncclComm_t comm = nccl->comms[rank];
      cudaStream_t stream = streams[rank].get();
      switch (options.collective) {
        case Collective::AllReduce: keep(api.allReduce(send, recv, count, type, op, comm, stream)); break;
        case Collective::Broadcast: keep(api.broadcast(send, recv, count, type, options.root, comm, stream)); break;
        case Collective::Reduce: keep(api.reduce(send, recv, count, type, op, options.root, comm, stream)); break;
        case Collective::AllGather: keep(api.allGather(send, recv, count, type, comm, stream)); break;
        case Collective::ReduceScatter: keep(api.reduceScatter(send, recv, count, type, op, comm, stream)); break;
        case Collective::AllToAll:
          if (api.allToAll != nullptr) {
            keep(api.allToAll(send, recv, count, type, comm, stream));
            break;
          }
          for (int peer = 0; peer < ranks; ++peer) {  // nccl-tests' grouped send/recv
            const std::size_t offset = peer * count * elementSize();
            keep(api.send(static_cast<const char*>(send) + offset, count, type, peer, comm, stream));
            keep(api.recv(static_cast<char*>(recv) + offset, count, type, peer, comm, stream));
          }
          break;
        case Collective::SendRecv:
          keep(api.send(send, count, type, (rank + 1) % ranks, comm, stream));
          keep(api.recv(recv, count, type, (rank + ranks - 1) % ranks, comm, stream));
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
        for (int rank = 1; rank < ranks; ++rank) {
          PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[rank].get(), joins[0].get(), 0));
        }
      } else {
        for (int rank = 0; rank < ranks; ++rank) {
          PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(streams[rank].get(), cudaStreamCaptureModeThreadLocal));
          capturing.push_back(streams[rank].get());
        }
      }
      issue(config, placement, sizing, iterations);
      if (joined) {
        for (int rank = 1; rank < ranks; ++rank) {
          PEERLINK_CUDA_CHECK(cudaEventRecord(joins[rank].get(), streams[rank].get()));
          PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[0].get(), joins[rank].get(), 0));
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
    for (int rank = 0; rank < ranks; ++rank) {
      cudaStream_t stream = streams[rank].get();
      const std::size_t poisonBytes = placement == Placement::InPlace ? sizing.bytes : sizing.recvCount * size;
      PEERLINK_CUDA_CHECK(cudaMemsetAsync(set.recv[rank], kPoisonByte, poisonBytes, stream));
      fillInput(spec, rank, host.data());
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(sendOf(set, rank, placement, sizing), host.data(), sizing.sendCount * size,
                                          cudaMemcpyHostToDevice, stream));
      waitForStream(stream, timeout(1), fmt::format("uploading rank {}'s input", rank));
    }
    runOnce(config, placement, sizing);
    waitAll(1, "the checked collective");
    std::int64_t wrong = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      const std::size_t elements = checkedElements(spec, rank);
      if (elements == 0) continue;
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(host.data(), recvOf(set, rank, placement, sizing), elements * size,
                                          cudaMemcpyDeviceToHost, streams[rank].get()));
      waitForStream(streams[rank].get(), timeout(1), fmt::format("reading rank {}'s output", rank));
      wrong += countWrong(spec, rank, host.data());
    }
    return wrong;
  }

  // Eager iterations one by one (--iteration-times): an event on every rank's stream after each; per
  // iteration the slowest rank's time from the event before (the first: from the run's start). Fills
  // `perIteration` and returns the whole run's time per iteration, as timedRun does.
  double timedIterations(CollConfig config, Placement placement, const CollSizing& sizing,
                         std::vector<double>& perIteration) {
    const int iterations = options.iterations;
    while (marks.size() < static_cast<std::size_t>(iterations) * ranks) {
      marks.emplace_back(devices[marks.size() % static_cast<std::size_t>(ranks)]);
    }
    const auto mark = [&](int iteration, int rank) -> Event& {
      return marks[static_cast<std::size_t>(iteration) * ranks + static_cast<std::size_t>(rank)];
    };
    for (int rank = 0; rank < ranks; ++rank) {
      PEERLINK_CUDA_CHECK(cudaEventRecord(starts[rank].get(), streams[rank].get()));
    }
    for (int i = 0; i < iterations; ++i) {
      issue(config, placement, sizing, 1);
      for (int rank = 0; rank < ranks; ++rank) {
        PEERLINK_CUDA_CHECK(cudaEventRecord(mark(i, rank).get(), streams[rank].get()));
      }
    }
    waitAll(iterations, "the timed iterations");
    perIteration.assign(static_cast<std::size_t>(iterations), 0.0);
    double slowestMs = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      for (int i = 0; i < iterations; ++i) {
        float ms = 0;
        cudaEvent_t from = i == 0 ? starts[rank].get() : mark(i - 1, rank).get();
        PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, from, mark(i, rank).get()));
        perIteration[static_cast<std::size_t>(i)] =
            std::max(perIteration[static_cast<std::size_t>(i)], static_cast<double>(ms) * 1000.0);
      }
      float total = 0;
      PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&total, starts[rank].get(), mark(iterations - 1, rank).get()));
      slowestMs = std::max(slowestMs, static_cast<double>(total));
    }
    return slowestMs * 1000.0 / iterations;
  }

  // Per iteration, in microseconds, the slowest rank (a joined graph is timed on rank 0's stream, which it
  // is launched into and which waits for every rank's part).
  double timedRun(CollConfig config, Placement placement, const CollSizing& sizing, std::vector<double>& perIteration) {
    const int iterations = options.iterations;
    issue(config, placement, sizing, options.warmup);
    waitAll(options.warmup, "the warm-up");
    if (options.iterationTimes && !isGraph(config)) return timedIterations(config, placement, sizing, perIteration);
    Graphs graphs;
    if (isGraph(config)) {
      capture(graphs, config, placement, sizing, iterations);
      launch(graphs);  // the first launch uploads the graph
      waitAll(iterations, "the first graph launch");
    }
    const int timedRanks = isGraph(config) && options.capture == GraphCapture::Joined ? 1 : ranks;
    for (int rank = 0; rank < timedRanks; ++rank) {
      PEERLINK_CUDA_CHECK(cudaEventRecord(starts[rank].get(), streams[rank].get()));
    }
    if (isGraph(config)) {
      launch(graphs);
    } else {
      issue(config, placement, sizing, iterations);
    }
    for (int rank = 0; rank < timedRanks; ++rank) {
      PEERLINK_CUDA_CHECK(cudaEventRecord(stops[rank].get(), streams[rank].get()));
    }
    waitAll(iterations, "the timed iterations");
    double slowestMs = 0;
    for (int rank = 0; rank < timedRanks; ++rank) {
      float ms = 0;
      PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, starts[rank].get(), stops[rank].get()));
      slowestMs = std::max(slowestMs, static_cast<double>(ms));
    }
    return slowestMs * 1000.0 / iterations;
  }
};

CollSession::CollSession(const Params& params, const CollBenchOptions& options, CollRun& run)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.params = params;
  s.options = options;
  int available = 0;
  const cudaError_t status = cudaGetDeviceCount(&available);
  if (status != cudaSuccess || available == 0) {
    cudaGetLastError();
    throw Error(ErrorCode::NoDevice, status != cudaSuccess
                                         ? "no CUDA GPU: cudaGetDeviceCount returned " + cudaErrorText(status)
                                         : std::string("no CUDA GPU: cudaGetDeviceCount returned 0"));
  }
  s.ranks = options.gpus == 0 ? available : options.gpus;
  if (s.ranks > available) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-g {}: this process sees {} GPU(s)", s.ranks, available));
  }
  if ((options.collective == Collective::Broadcast || options.collective == Collective::Reduce) &&
      options.root >= s.ranks) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-r {}: there are {} ranks", options.root, s.ranks));
  }
  std::size_t maxBytes = 256;
  for (std::size_t bytes : options.sizes) {
    maxBytes = std::max(maxBytes, collSizing(options.collective, bytes, options.type, s.ranks).bytes);
  }
  run.ranks = s.ranks;
  for (int rank = 0; rank < s.ranks; ++rank) {
    s.devices.push_back(rank);
    cudaDeviceProp properties{};
    PEERLINK_CUDA_CHECK(cudaGetDeviceProperties(&properties, rank));
    run.deviceNames.emplace_back(properties.name);
    run.deviceBusIds.push_back(
        fmt::format("{:04x}:{:02x}:{:02x}.0", properties.pciDomainID, properties.pciBusID, properties.pciDeviceID));
    s.streams.emplace_back(rank);
    s.starts.emplace_back(rank);
    s.stops.emplace_back(rank);
    s.joins.emplace_back(rank, cudaEventDisableTiming);
    s.sendBuffers.emplace_back(rank, maxBytes);
    s.recvBuffers.emplace_back(rank, maxBytes);
    s.plain.send.push_back(s.sendBuffers.back().data());
    s.plain.recv.push_back(s.recvBuffers.back().data());
  }
  run.devices = s.devices;

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
      s.communicator = std::make_unique<Communicator>(s.devices, params);
      run.creationMilliseconds =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      setAll(false, true, "");
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
        session->init();
        run.nccl.initMilliseconds =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
    result.status = CollMeasurement::Status::Ok;
    const double seconds = result.timeUs * 1e-6;
    result.algbwGBps = seconds > 0 ? static_cast<double>(sizing.bandwidthBytes) / seconds / 1e9 : 0;
    result.busbwGBps = result.algbwGBps * busBandwidthFactor(s.options.collective, s.ranks);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::Timeout) throw;
    result.status = CollMeasurement::Status::Failed;
    result.reason = error.what();
  }
  return result;
}

}  // namespace peerlink::coll
