// `peerlink plan` (plan_command.hpp).
#include "plan_command.hpp"

#include <cmath>

#include <fmt/format.h>

#include "coll/comm_setup.hpp"
#include "coll_bench/coll_bench.hpp"
#include "exit_codes.hpp"
#include "kernels/coll_kernels.cuh"
#include "output_file.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"
#include "plan/accuracy.hpp"
#include "plan/fit.hpp"
#include "plan/processes.hpp"
#include "plan_format.hpp"
#include "plan_runs.hpp"
#include "run_metadata.hpp"
#include "size_parse.hpp"
#include "topology/discovery_cache.hpp"

namespace peerlink::cli {
namespace {

using nlohmann::json;

// More rows than any sweep a person reads: a factor barely above 1 would otherwise loop for minutes.
constexpr std::size_t kMaxSizes = 4096;

struct LoadedModel {
  plan::CostModel model;
  std::string origin;
};

LoadedModel modelOf(const PlanCommandOptions& options) {
  if (options.modelPath.empty()) return {plan::builtInCostModel(), "built in (src/plan/model.json)"};
  return {plan::loadCostModel(options.modelPath), options.modelPath};
}

Collective collectiveOf(const std::string& name) {
  const std::optional<Collective> collective = parseCollective(name);
  if (!collective) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-o {}: not a collective (all_reduce, broadcast, reduce, "
                                                     "all_gather, reduce_scatter, all_to_all, send_recv)",
                                                     name));
  }
  return *collective;
}

DataType dataTypeOf(const std::string& name) {
  const std::optional<DataType> type = parseDataType(name);
  if (!type) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-d {}: not a data type (float, double, half, bfloat16, int8, "
                                                     "uint8, int32, uint32, int64, uint64, or f32, f64, f16, ...)",
                                                     name));
  }
  return *type;
}

plan::Network networkOf(const PlanCommandOptions& options) {
  plan::Network network;
  network.nodes = options.nodes;
  network.nicGbps = options.nicGbps;
  network.nicLatencyUs = options.nicLatencyUs;
  network.nicsPerNode = options.nicsPerNode;
  const std::optional<plan::NetworkPath> path = plan::parseNetworkPath(options.netPath);
  if (!path) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--net-path {}: say gpudirect (the NICs reach GPU memory: GPUDirect RDMA, the default) or "
                            "staged (MPI moves pinned host memory: every piece copied from the GPU and back)",
                            options.netPath));
  }
  network.path = *path;
  if (options.nodes <= 1 && options.netPathGiven) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--net-path {} describes the phases across nodes: give --nodes N (2 or more) too",
                            options.netPath));
  }
  if (options.nodes > 1 && (!options.nicGbpsGiven || !options.nicLatencyGiven)) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--nodes {} needs the network between the nodes: --nic-gbps B (one NIC's Gb/s) and "
                            "--nic-latency-us L (one message's latency)",
                            options.nodes));
  }
  if (options.nodes <= 1 && (options.nicGbpsGiven || options.nicLatencyGiven || options.nicsPerNode != 0)) {
    throw Error(ErrorCode::InvalidUsage,
                "--nic-gbps, --nic-latency-us and --nics-per-node describe the network between nodes: give --nodes "
                "N (2 or more) too");
  }
  plan::validateNetwork(network);
  return network;
}

plan::ProcessMode modeOf(const PlanCommandOptions& options, int ranks, const Params& params) {
  if (options.processes != "one" && options.processes != "per-gpu") {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--processes {}: say one (one process drives every GPU) or per-gpu", options.processes));
  }
  const bool perGpu = options.processes == "per-gpu";
  if (options.registerBuffers && !perGpu) {
    throw Error(ErrorCode::InvalidUsage, "--register: buffers matter only across processes: give --processes per-gpu");
  }
  if (perGpu && options.nodes > 1) {
    throw Error(ErrorCode::InvalidUsage,
                "--processes per-gpu predicts one node's processes; across nodes the model has no such cost (give one "
                "or the other)");
  }
  return {perGpu ? ranks : 1,
          options.registerBuffers,
          plan::serialStagingOf(params),
          plan::stageOwnPartsOf(params),
          coll::stagingWindowBytes(params),
          plan::arenaRingModeOf(params),
          plan::arenaRingShapeOf(params)};
}

// The topology's GPUs 0..g-1 as topology indices.
std::vector<int> gpusOf(const Topology& topology, int requested) {
  const int available = static_cast<int>(topology.gpus.size());
  if (available == 0) throw Error(ErrorCode::InvalidInput, topology.source + ": the topology has no GPU");
  if (requested < 0 || requested > available) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-g {}: the topology has {} GPU(s)", requested, available));
  }
  const int count = requested > 0 ? requested : available;
  if (count > kernels::kCollMaxRanks) {
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("the topology has {} GPUs and a communicator has at most {} ranks on one node: choose -g {} "
                    "or fewer",
                    count, kernels::kCollMaxRanks, kernels::kCollMaxRanks));
  }
  std::vector<int> gpus;
  for (int g = 0; g < count; ++g) gpus.push_back(g);
  return gpus;
}

PlanSweep predictSweep(const PlanCommandOptions& options, const Topology& topology, const LoadedModel& loaded,
                       const Params& params) {
  PlanSweep sweep;
  sweep.collective = collectiveOf(options.collective);
  sweep.type = dataTypeOf(options.datatype);
  sweep.network = networkOf(options);
  const std::vector<int> gpus = gpusOf(topology, options.gpus);
  sweep.mode = modeOf(options, static_cast<int>(gpus.size()), params);
  std::vector<int> devices;
  for (const int g : gpus) devices.push_back(topology.gpus[static_cast<std::size_t>(g)].cudaOrdinal);
  // PEERLINK_COLL_HOST_STAGED is read from the environment, as the communicator reads it (and PEERLINK_ALGO here).
  const plan::ChoiceContext context = plan::choiceContextFor(topology, devices, params);
  const plan::Fabric fabric = plan::fabricFor(topology, gpus, loaded.model, context.host.forcedPairs);

  const int ranks = static_cast<int>(gpus.size()) * sweep.network.nodes;
  if (options.root < 0 || options.root >= ranks) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("-r {}: the root is a rank from 0 to {}", options.root, ranks - 1));
  }
  const std::vector<std::size_t> sizes =
      sweepSizes(parseSize(options.minBytes, "-b"), parseSize(options.maxBytes, "-e"), options.factor);
  if (sizes.size() > kMaxSizes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("-b, -e and -f {} make {} sizes: at most {}", options.factor, sizes.size(), kMaxSizes));
  }
  sweep.root = options.root;
  sweep.topology = topology.source;
  sweep.gpuName = topology.gpus.front().name;
  sweep.ranksPerNode = static_cast<int>(gpus.size());
  sweep.nvlinkMesh = context.fabric.nvlinkMesh;
  sweep.throughHost = fabric.throughHost;
  sweep.settings = context.settings;
  sweep.busFactor = coll::busBandwidthFactor(sweep.collective, ranks);
  sweep.modelOrigin = loaded.origin;
  sweep.modelProvenance = loaded.model.provenance;
  for (const std::size_t size : sizes) {
    const coll::CollSizing sizing = coll::collSizing(sweep.collective, size, sweep.type, ranks);
    PlanRow row;
    row.size = sizing.bytes;
    row.count = sizing.count;
    row.bandwidthBytes = sizing.bandwidthBytes;
    // Within a node, the root is the node's rank of the same index (a rooted call's own node).
    const plan::Call call{sweep.collective, sweep.type, sizing.count, false, options.root % sweep.ranksPerNode};
    if (sweep.network.nodes > 1) {
      row.acrossNodes = plan::predictAcrossNodes(call, fabric, context, loaded.model, sweep.network);
    } else {
      row.candidates = plan::candidatesFor(call, fabric, context, loaded.model, sweep.mode);
    }
    sweep.rows.push_back(std::move(row));
  }
  return sweep;
}

json fitProvenance(const std::vector<plan::MeasuredRun>& runs, const std::vector<plan::MachineAccuracy>& accuracy,
                   const std::string& commandLine) {
  json files = json::array();
  for (const plan::MeasuredRun& run : runs) {
    json file = {{"file", run.origin}, {"machine", run.machine}, {"commit", run.commit}, {"cells", run.cells.size()}};
    if (run.mode.processes > 1) file["registered"] = run.mode.registered;
    if (run.mode.serialStaging) file["serial_staging"] = true;
    if (run.mode.processes > 1 && !run.mode.registered)
      file["staged_copies"] = run.mode.stageOwnParts ? "PEERS" : "ALL";
    files.push_back(file);
  }
  json fit = json::array();
  for (const plan::MachineAccuracy& m : accuracy) {
    if (m.cells.empty()) continue;
    const plan::CellCheck& worst = m.cells[m.worst];
    fit.push_back({{"machine", m.machine},
                   {"cells", m.cells.size()},
                   {"median_abs_error", m.medianAbsError},
                   {"worst",
                    {{"collective", collectiveName(worst.cell->call.collective)},
                     {"size", worst.cell->size},
                     {"in_place", worst.cell->call.inPlace},
                     {"kernel", ranName(worst)},
                     {"error", worst.error}}}});
    if (m.acrossCells > 0) {
      fit.back()["across_nodes_cells"] = m.acrossCells;
      fit.back()["across_nodes_median_abs_error"] = m.acrossMedianAbsError;
      fit.back()["across_nodes_worst_error"] = *m.cells[m.acrossWorst].acrossError;
    }
  }
  return {{"command", commandLine}, {"runs", files}, {"fit", fit}};
}

int runFit(const PlanCommandOptions& options, const LoadedModel& prior, Context& context) {
  const std::vector<plan::MeasuredRun> runs = loadMeasuredRuns(options.fitRuns, prior.model);
  plan::CostModel fitted = plan::fitCostModel(runs, prior.model);
  const std::vector<plan::MachineAccuracy> accuracy = plan::checkAccuracy(runs, fitted);
  fitted.provenance = fitProvenance(runs, accuracy, context.commandLine);
  writeOutputFile(options.writePath, plan::costModelToJson(fitted).dump(2) + "\n", context.out);
  if (options.writePath == "-") return kExitOk;
  context.out << fmt::format("# peerlink plan --fit: {} run(s), written to {}\n", runs.size(), options.writePath);
  context.out << formatModelText(fitted);
  for (const plan::MachineAccuracy& m : accuracy) {
    if (m.cells.empty()) continue;
    context.out << fmt::format("# {}: {} cells, median |error| {:.1f}%, worst {:+.1f}%\n", m.machine, m.cells.size(),
                               100 * m.medianAbsError, 100 * m.cells[m.worst].error);
    if (m.acrossCells > 0) {
      context.out << fmt::format("#   its phases across nodes: {} cells, median |error| {:.1f}%, worst {:+.1f}%\n",
                                 m.acrossCells, 100 * m.acrossMedianAbsError,
                                 100 * *m.cells[m.acrossWorst].acrossError);
    }
  }
  return kExitOk;
}

int runCheck(const PlanCommandOptions& options, const LoadedModel& loaded, Context& context) {
  if (!std::isfinite(options.maxMedianError) || options.maxMedianError < 0) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--max-median-error {}: give a fraction, e.g. 0.1 for 10%", options.maxMedianError));
  }
  const std::vector<plan::MeasuredRun> runs = loadMeasuredRuns(options.checkRuns, loaded.model);
  const std::vector<plan::MachineAccuracy> machines = plan::checkAccuracy(runs, loaded.model);
  if (!options.jsonPath.empty()) {
    writeOutputFile(options.jsonPath, checkToJson(machines, loaded.origin).dump(2) + "\n", context.out);
  }
  if (options.jsonPath != "-") context.out << formatCheckText(machines, loaded.origin);
  if (options.maxMedianError <= 0) return kExitOk;
  int verdict = kExitOk;
  for (const plan::MachineAccuracy& m : machines) {
    if (m.medianAbsError > options.maxMedianError) {
      context.err << fmt::format("peerlink: {}: median |error| {:.1f}% is above --max-median-error {:g}%\n", m.machine,
                                 100 * m.medianAbsError, 100 * options.maxMedianError);
      verdict = kExitDegraded;
    }
  }
  return verdict;
}

}  // namespace

CLI::App* addPlanCommand(CLI::App& app, PlanCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "plan", "Predicted collective times for this machine, a saved topology or N nodes of it (no GPU needed)");
  command->add_option("-o,--collective", options.collective,
                      "all_reduce (default), broadcast, reduce, all_gather, reduce_scatter, all_to_all, send_recv");
  command->add_option("-b,--minbytes", options.minBytes, "Smallest size, nccl-tests' meaning, e.g. 8, 64K (default 8)");
  command->add_option("-e,--maxbytes", options.maxBytes, "Largest size (default 1G)");
  command->add_option("-f,--stepfactor", options.factor, "Each size is the previous times this (default 2)");
  command->add_option("-g,--ngpus", options.gpus, "GPUs 0..g-1 of the topology, per node (default: all)");
  command->add_option("-d,--datatype", options.datatype, "float (default), double, half, bfloat16, int8, ...");
  command->add_option("-r,--root", options.root, "Root rank of broadcast and reduce (default 0)");
  command->add_option("--topo-file", options.topoFile,
                      "A saved topology to predict for (`peerlink topo --json`, examples/topologies/), same as "
                      "PEERLINK_TOPO_FILE; default: this machine");
  command->add_option("--nodes", options.nodes, "Predict for N nodes of this topology joined by NICs (default 1)");
  command->add_option_function<double>(
      "--nic-gbps",
      [&options](double value) {
        options.nicGbps = value;
        options.nicGbpsGiven = true;
      },
      "With --nodes: one NIC's bandwidth per direction in Gb/s (e.g. 400)");
  command->add_option_function<double>(
      "--nic-latency-us",
      [&options](double value) {
        options.nicLatencyUs = value;
        options.nicLatencyGiven = true;
      },
      "With --nodes: one message's latency between nodes in us (e.g. 3)");
  command->add_option("--nics-per-node", options.nicsPerNode, "With --nodes: NICs per node (default: one per GPU)");
  command->add_option_function<std::string>(
      "--net-path",
      [&options](const std::string& value) {
        options.netPath = value;
        options.netPathGiven = true;
      },
      "With --nodes: gpudirect (default: the NICs read and write GPU memory, GPUDirect RDMA) or staged (an MPI that is "
      "not CUDA-aware: each 4 MiB piece copied to pinned host memory and back, as the transport runs it)");
  command->add_option("--processes", options.processes,
                      "one (default: one process drives every GPU) or per-gpu (a process per GPU: each kernel pays "
                      "for the other processes, and calls on unregistered buffers are staged through the windows)");
  command->add_flag(
      "--register", options.registerBuffers,
      "With --processes per-gpu: the buffers are registered as windows (Communicator::registerWindow, `peerlink "
      "coll --register`): "
      "no call is staged");
  command->add_option("--model", options.modelPath, "A model file (--fit writes one) instead of the built-in model");
  command->add_option("--json", options.jsonPath, "Write the predictions (or --check's cells) as JSON ('-': stdout)");
  CLI::Option* fit = command->add_option("--fit", options.fitRuns,
                                         "Fit the model to saved `peerlink coll --json` runs (with --write)");
  CLI::Option* write = command->add_option("--write", options.writePath, "With --fit: the model file to write");
  CLI::Option* check = command->add_option(
      "--check", options.checkRuns,
      "Compare the model with saved `peerlink coll --json` runs, cell by cell (each run's processes "
      "and --register as it recorded them)");
  command
      ->add_option("--max-median-error", options.maxMedianError,
                   "With --check: exit 4 when a machine's median |error| is above this fraction (e.g. 0.1)")
      ->needs(check);
  fit->needs(write);
  write->needs(fit);
  fit->excludes(check);
  for (CLI::Option* mode : {fit, check}) {
    for (const char* predicting :
         {"--collective", "--minbytes", "--maxbytes", "--stepfactor", "--ngpus", "--datatype", "--root", "--topo-file",
          "--nodes", "--nic-gbps", "--nic-latency-us", "--nics-per-node", "--net-path", "--processes", "--register"}) {
      mode->excludes(command->get_option(predicting));
    }
  }
  fit->excludes(command->get_option("--json"));
  return command;
}

int runPlanCommand(const PlanCommandOptions& options, Context& context) {
  const LoadedModel loaded = modelOf(options);
  if (!options.fitRuns.empty()) return runFit(options, loaded, context);
  checkOutputPath("--json", options.jsonPath);
  if (!options.checkRuns.empty()) return runCheck(options, loaded, context);
  if (!options.topoFile.empty()) context.params.set("PEERLINK_TOPO_FILE", options.topoFile);
  const Topology topology = discoveredTopology(context.params);  // Error(NoDevice) without a GPU or file: exit 3
  const PlanSweep sweep = predictSweep(options, topology, loaded, context.params);
  if (!options.jsonPath.empty()) {
    json document = planToJson(sweep);
    document["generated_by"] = runMetadata(context.commandLine);
    writeOutputFile(options.jsonPath, document.dump(2) + "\n", context.out);
  }
  if (options.jsonPath != "-") context.out << formatPlanText(sweep);
  return kExitOk;
}

}  // namespace peerlink::cli
