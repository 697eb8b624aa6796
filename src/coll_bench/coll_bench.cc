#include "coll_bench/coll_bench.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "coll/comm_setup.hpp"
#include "coll_bench/coll_nodes.hpp"
#include "coll_bench/coll_session.hpp"
#include "core/cpu_affinity.hpp"
#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"
#include "topology/gpu_cpus.hpp"

namespace peerlink::coll {

const char* collConfigName(CollConfig config) noexcept {
  switch (config) {
    case CollConfig::Peerlink: return "peerlink";
    case CollConfig::PeerlinkGraph: return "peerlink_graph";
    case CollConfig::Nccl: return "nccl";
    case CollConfig::NcclGraph: return "nccl_graph";
    case CollConfig::NcclSymmetric: return "nccl_symmetric";
  }
  return "?";
}

std::optional<CollConfig> parseCollConfig(const std::string& name) {
  for (CollConfig config : kCollConfigs) {
    if (name == collConfigName(config)) return config;
  }
  return std::nullopt;
}

const char* collConfigDescription(CollConfig config, int processes) noexcept {
  switch (config) {
    case CollConfig::Peerlink: return "peerlink, eager (one call per rank per iteration)";
    case CollConfig::PeerlinkGraph: return "peerlink, the timed iterations captured in a CUDA graph";
    case CollConfig::Nccl:
      return processes > 1 ? "NCCL, plain (one call per rank per iteration, each process its own)"
                           : "NCCL, plain (ncclGroupStart/End over the ranks per iteration)";
    case CollConfig::NcclGraph: return "NCCL, the timed iterations captured in a CUDA graph (nccl-tests -G)";
    case CollConfig::NcclSymmetric:
      return "NCCL, ncclMemAlloc buffers registered with ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC), "
             "in a CUDA graph (nccl-tests -R 2 -G)";
  }
  return "?";
}

const char* ncclCreationCall(int processes) noexcept {
  return processes > 1 ? "ncclCommInitRank" : "ncclCommInitAll";
}

bool isNcclConfig(CollConfig config) noexcept {
  return config == CollConfig::Nccl || config == CollConfig::NcclGraph || config == CollConfig::NcclSymmetric;
}

CollSizing collSizing(Collective collective, std::size_t requestedBytes, DataType type, int ranks) {
  const std::size_t size = dataTypeSize(type);
  const auto n = static_cast<std::size_t>(ranks > 0 ? ranks : 1);
  const std::size_t count = requestedBytes / size;
  // nccl-tests: (count / nranks) & -(16 / eltSize): per-rank parts in whole 16-byte units.
  const std::size_t unit = 16 / size;
  const std::size_t part = count / n / unit * unit;
  CollSizing s;
  switch (collective) {
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
      s.count = s.sendCount = s.recvCount = count;
      s.bandwidthBytes = count * size;
      break;
    case Collective::AllGather:
      s.count = s.sendCount = part;
      s.recvCount = part * n;
      s.sendInPlaceOffset = part;
      s.bandwidthBytes = part * size * n;
      break;
    case Collective::ReduceScatter:
      s.count = s.recvCount = part;
      s.sendCount = part * n;
      s.recvInPlaceOffset = part;
      s.bandwidthBytes = part * size * n;
      break;
    case Collective::AllToAll:
      s.count = part;
      s.sendCount = s.recvCount = part * n;
      s.bandwidthBytes = part * size * n;
      break;
  }
  s.bytes = std::max(s.sendCount, s.recvCount) * size;
  return s;
}

double busBandwidthFactor(Collective collective, int ranks) {
  const double n = ranks > 0 ? ranks : 1;
  switch (collective) {
    case Collective::AllReduce: return 2.0 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: return (n - 1) / n;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv: return 1.0;
  }
  return 1.0;
}

bool hasInPlace(Collective collective) noexcept {
  return collective != Collective::AllToAll && collective != Collective::SendRecv;
}

int gpusOf(const CollRun& run) {
  if (run.deviceBusIds.size() != static_cast<std::size_t>(run.ranks)) return run.ranks;
  return static_cast<int>(std::set<std::string>(run.deviceBusIds.begin(), run.deviceBusIds.end()).size());
}

std::optional<CollConfig> bestNccl(const CollRow& row, Placement placement) {
  std::optional<CollConfig> best;
  const auto& measurements = row.at(placement);
  for (CollConfig config : kCollConfigs) {
    const CollMeasurement& m = measurements[static_cast<int>(config)];
    if (!isNcclConfig(config) || !m.ok()) continue;
    if (!best || m.timeUs < measurements[static_cast<int>(*best)].timeUs) best = config;
  }
  return best;
}

std::optional<double> ratioToBestNccl(const CollRow& row, Placement placement, CollConfig config) {
  const std::optional<CollConfig> best = bestNccl(row, placement);
  const CollMeasurement& m = row.at(placement)[static_cast<int>(config)];
  if (!best || !m.ok() || m.timeUs <= 0) return std::nullopt;
  return row.at(placement)[static_cast<int>(*best)].timeUs / m.timeUs;
}

std::optional<double> acrossNodesRatio(const CollRow& row, Placement placement) {
  const CollMeasurement& m = row.at(placement)[static_cast<int>(CollConfig::Peerlink)];
  if (!row.acrossNodes || row.acrossNodes->mpiUs <= 0 || !m.ok() || m.acrossNodesUs <= 0) return std::nullopt;
  return row.acrossNodes->mpiUs / m.acrossNodesUs;
}

void validateCollOptions(const CollBenchOptions& options) {
  if (options.sizes.empty()) throw Error(ErrorCode::InvalidUsage, "no sizes to measure");
  if (options.iterations < 1) throw Error(ErrorCode::InvalidUsage, "-n must be at least 1");
  if (options.warmup < 0) throw Error(ErrorCode::InvalidUsage, "-w must not be negative");
  if (options.gpus < 0) throw Error(ErrorCode::InvalidUsage, "-g must not be negative (0: every GPU)");
  if (options.root < 0) throw Error(ErrorCode::InvalidUsage, "-r must not be negative");
  if (!options.peerlink && !options.nccl) {
    throw Error(ErrorCode::InvalidUsage, "--no-nccl and --nccl-only together leave nothing to measure");
  }
  const bool reducing = options.collective == Collective::AllReduce || options.collective == Collective::Reduce ||
                        options.collective == Collective::ReduceScatter;
  if (reducing && !reduceOpSupported(options.type, options.op)) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("--op {} is not defined for {} (integer division would truncate)",
                                                     reduceOpName(options.op), dataTypeName(options.type)));
  }
}

CollWorld singleProcessWorld(const CollBenchOptions& options) {
  int available = 0;
  const cudaError_t status = cudaGetDeviceCount(&available);
  if (status != cudaSuccess || available == 0) {
    cudaGetLastError();
    throw Error(ErrorCode::NoDevice, status != cudaSuccess
                                         ? "no CUDA GPU: cudaGetDeviceCount returned " + cudaErrorText(status)
                                         : std::string("no CUDA GPU: cudaGetDeviceCount returned 0"));
  }
  const int ranks = options.gpus == 0 ? available : options.gpus;
  if (ranks > available) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-g {}: this process sees {} GPU(s)", ranks, available));
  }
  return CollWorld::singleProcess(ranks);
}

CollWorld launchedWorld(const LaunchEnvironment& launch, const Params& params) {
  int visible = 0;
  const cudaError_t status = cudaGetDeviceCount(&visible);
  if (status != cudaSuccess || visible == 0) {
    cudaGetLastError();
    throw Error(ErrorCode::NoDevice, fmt::format("no CUDA GPU in the process of rank {} ({})", launch.rank,
                                                 status != cudaSuccess ? cudaErrorText(status) : "none visible"));
  }
  int device = 0;
  // PEERLINK_COLL_SHARE_GPUS (testing): more ranks on a machine than GPUs share them, local rank modulo the GPUs.
  const bool share = params.getBool("PEERLINK_COLL_SHARE_GPUS");
  if (visible > 1 && share && launch.localRank) {
    device = *launch.localRank % visible;
  } else if (visible > 1) {
    if (!launch.localRank || *launch.localRank >= visible) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("rank {} ({}) sees {} GPUs and {}: set CUDA_VISIBLE_DEVICES per process, or launch one "
                              "process per GPU with a launcher that gives the local rank",
                              launch.rank, launch.source, visible,
                              launch.localRank ? fmt::format("local rank {}", *launch.localRank)
                                               : std::string("no local rank")));
    }
    device = *launch.localRank;
  }
  // The process is peerlink's own: its main thread, and the threads it starts (which inherit its mask), run near the
  // rank's GPU unless the launcher bound it already (mpirun's --bind-to, a cgroup).
  bindCurrentThreadNearGpu(params, localCpusOfDevice(device, params),
                           fmt::format("main thread of peerlink coll's rank {} (GPU {})", launch.rank, device));
  LaunchBootstrapOptions options;
  options.bootstrap = BootstrapOptions::fromParams(params);
  return CollWorld::launched(connectLaunchBootstrap(launch, params, options), device, params);
}

CollRun runCollBench(const Params& params, const CollBenchOptions& options, const CollWorld& world) {
  validateCollOptions(options);
  CollRun run;
  run.options = options;
  run.options.progress = nullptr;
  run.processes = world.spansProcesses() ? world.size() : 1;
  if (run.processes > 1) {
    run.stagedCopies = params.getString("PEERLINK_COLL_STAGE_COPIES");
    run.stagingWindowBytes = coll::stagingWindowBytes(params);
  }
  run.nodes = collNodesOf(world);
  CollSession session(params, options, world, run);
  const std::size_t elementSize = dataTypeSize(options.type);
  try {
    const auto [smallest, largest] = std::minmax_element(options.sizes.begin(), options.sizes.end());
    session.warmUp(collSizing(options.collective, *largest, options.type, run.ranks));
    session.warmUp(collSizing(options.collective, *smallest, options.type, run.ranks));
  } catch (...) {
    session.abandon();
    throw;
  }
  for (std::size_t requested : options.sizes) {
    const CollSizing sizing = collSizing(options.collective, requested, options.type, run.ranks);
    CollRow row;
    row.bytes = sizing.bytes;
    row.count = sizing.count;
    row.peerlinkChoice = session.peerlinkChoice(sizing.count * elementSize);  // what the call passes
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      auto& measurements = placement == Placement::InPlace ? row.inPlace : row.outOfPlace;
      for (CollConfig config : kCollConfigs) {
        CollMeasurement& m = measurements[static_cast<int>(config)];
        const CollConfigStatus& status = run.configs[static_cast<int>(config)];
        if (!status.available) {
          m.reason = status.reason;
        } else if (placement == Placement::InPlace && !hasInPlace(options.collective)) {
          m.reason = "no in-place variant";
        } else if (sizing.count == 0) {
          m.reason = "0 elements";
        } else {
          if (options.progress) {
            options.progress(fmt::format("{} {} B {} {}", collectiveName(options.collective), sizing.bytes,
                                         placement == Placement::InPlace ? "in-place" : "out-of-place",
                                         collConfigName(config)));
          }
          try {
            m = session.measure(config, placement, sizing);
          } catch (...) {
            session.abandon();
            throw;
          }
        }
      }
    }
    run.rows.push_back(row);
  }
  try {
    measureAcrossNodes(params, world, run);  // MPI's own exchange on the same path, beside the phases across nodes
  } catch (...) {
    session.abandon();
    throw;
  }
  return run;
}

CollRun runCollBench(const Params& params, const CollBenchOptions& options) {
  validateCollOptions(options);
  return runCollBench(params, options, singleProcessWorld(options));
}

}  // namespace peerlink::coll
