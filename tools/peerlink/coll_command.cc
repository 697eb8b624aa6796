// `peerlink coll`: collectives in nccl-tests' shape, peerlink (eager and CUDA graph) beside NCCL (plain,
// CUDA graph, symmetric registration + graph) in the same run (docs/coll.md).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "coll_bench/coll_bench.hpp"
#include "coll_explain.hpp"
#include "coll_format.hpp"
#include "coll_html.hpp"
#include "coll_json_read.hpp"
#include "commands.hpp"
#include "core/json_io.hpp"
#include "core/text.hpp"
#include "exit_codes.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/error.hpp"
#include "peerlink/launch.hpp"
#include "peerlink/topology.hpp"
#include "progress_line.hpp"
#include "run_metadata.hpp"
#include "size_parse.hpp"
#include "topology/discovery_cache.hpp"

namespace peerlink::cli {
namespace {

coll::CollBenchOptions toBenchOptions(const CollCommandOptions& options, const Params& params) {
  coll::CollBenchOptions bench;
  const std::optional<Collective> collective = parseCollective(options.collective);
  if (!collective) {
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("-o {}: not a collective (all_reduce, broadcast, reduce, all_gather, reduce_scatter, "
                    "all_to_all, send_recv){}",
                    options.collective, parseReduceOp(options.collective) ? "; the reduction operation is --op" : ""));
  }
  const std::optional<DataType> type = parseDataType(options.datatype);
  if (!type) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("-d {}: not a data type (float, double, half, bfloat16, int8, uint8, int32, uint32, "
                            "int64, uint64, or f32, f64, f16, bf16, i8, ...)",
                            options.datatype));
  }
  const std::optional<ReduceOp> op = parseReduceOp(options.op);
  if (!op) throw Error(ErrorCode::InvalidUsage, fmt::format("--op {}: not sum, prod, min, max or avg", options.op));
  if (options.check != 0 && options.check != 1) throw Error(ErrorCode::InvalidUsage, "-c must be 0 or 1");
  if (options.capture != "joined" && options.capture != "per-rank") {
    throw Error(ErrorCode::InvalidUsage, fmt::format("--capture {}: not joined or per-rank", options.capture));
  }
  bench.collective = *collective;
  bench.type = *type;
  bench.op = *op;
  bench.root = options.root;
  bench.sizes = sweepSizes(parseSize(options.minBytes, "-b"), parseSize(options.maxBytes, "-e"), options.factor);
  bench.iterations = options.iterations;
  bench.iterationTimes = options.iterationTimes;
  bench.warmup = options.warmup;
  bench.check = options.check == 1;
  bench.gpus = options.gpus;
  bench.peerlink = !options.ncclOnly;
  bench.nccl = !options.noNccl;
  bench.ncclLibrary = params.getString("PEERLINK_NCCL_LIBRARY");
  bench.capture = options.capture == "per-rank" ? coll::GraphCapture::PerRank : coll::GraphCapture::Joined;
  bench.registerBuffers = options.registerBuffers;
  coll::validateCollOptions(bench);
  return bench;
}

// --procs N as given: N processes of one GPU each.
void checkProcsOption(const CollCommandOptions& options) {
  if (options.procs < 2) throw Error(ErrorCode::InvalidUsage, "--procs: at least 2 processes");
  if (options.gpus != 0) throw Error(ErrorCode::InvalidUsage, "--procs and -g: each process drives one GPU");
}

// --explain: the sweep's choices from the topology (PEERLINK_TOPO_FILE / --topo-file, else this machine's)
// and the PEERLINK_* settings; the GPUs are 0..g-1 of that topology (with --procs N: 0..N-1, one a process, and
// the way each call goes across them).
int runCollExplain(const CollCommandOptions& options, Context& context) {
  const coll::CollBenchOptions bench = toBenchOptions(options, context.params);
  // The communicator's own (kept for the process): the one a communicator would plan with here.
  const Topology topology = discoveredTopology(context.params);  // Error(NoDevice) without a GPU or file: exit 3
  const int gpus = static_cast<int>(topology.gpus.size());
  if (options.gpus > gpus) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("-g {}: the topology has {} GPU(s)", options.gpus, gpus));
  }
  if (options.procs > 0) {
    checkProcsOption(options);
    if (options.procs > gpus) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("--procs {}: the topology has {} GPU(s), one a process", options.procs, gpus));
    }
  } else if (options.registerBuffers) {
    throw Error(ErrorCode::InvalidUsage,
                "--explain --register: registering decides the way across processes only; give --procs N too");
  }
  const int ranks = options.procs > 0 ? options.procs : options.gpus > 0 ? options.gpus : gpus;
  std::vector<int> devices;
  for (int g = 0; g < ranks; ++g) {
    devices.push_back(topology.gpus[static_cast<std::size_t>(g)].cudaOrdinal);
  }
  if (options.root >= ranks) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("-r {}: the root must be one of the {} rank(s), 0..{}", options.root, ranks, ranks - 1));
  }
  const CollExplain explain = explainColl(bench.collective, bench.type, bench.sizes, topology, devices, context.params,
                                          options.procs, options.registerBuffers);
  if (!options.jsonPath.empty())
    writeOutputFile(options.jsonPath, jsonText(collExplainToJson(explain)) + "\n", context.out);
  if (options.jsonPath != "-") context.out << formatCollExplain(explain);
  return kExitOk;
}

// --procs N: this command again as N processes of one rank each (runLocalWorld: torchrun's variables), which
// meet through the launch's bootstrap; their rank 0 prints.
int runCollProcesses(const CollCommandOptions& options, Context& context) {
  checkProcsOption(options);
  if (detectLaunchFromEnvironment().size > 1) {
    throw Error(ErrorCode::InvalidUsage, "--procs under a launcher: the launcher already started the processes");
  }
  std::vector<std::string> arguments = {"/proc/self/exe"};
  for (std::size_t i = 1; i < context.arguments.size(); ++i) {
    const std::string& argument = context.arguments[i];
    if (argument == "--procs") {
      ++i;  // and its value
      continue;
    }
    if (argument.rfind("--procs=", 0) == 0) continue;
    arguments.push_back(argument);
  }
  const int code = runLocalWorld(arguments, options.procs, std::chrono::seconds(30));
  return code;
}

int collVerdict(const coll::CollRun& run, Context& context) {
  const int failures = collFailures(run);
  if (failures > 0) {
    context.err << fmt::format("peerlink: {} measurement(s) FAILED (wrong data or errors; see above)\n", failures);
    return kExitBroken;
  }
  return kExitOk;
}

}  // namespace

CLI::App* addCollCommand(CLI::App& app, CollCommandOptions& options) {
  CLI::App* command =
      app.add_subcommand("coll", "Collective benchmark in nccl-tests' shape, with NCCL's figures in the same run");
  command->add_option("-o,--collective", options.collective,
                      "all_reduce (default), broadcast, reduce, all_gather, reduce_scatter, all_to_all, send_recv "
                      "(nccl-tests' spellings without underscores work too)");
  command->add_option("-b,--minbytes", options.minBytes, "Smallest size, nccl-tests' meaning, e.g. 8, 64K (default 8)");
  command->add_option("-e,--maxbytes", options.maxBytes, "Largest size (default 512M)");
  command->add_option("-f,--stepfactor", options.factor, "Each size is the previous times this (default 2)");
  command->add_option("-g,--ngpus", options.gpus, "Use GPUs 0..g-1 of this process (default: all)");
  command->add_option("--procs", options.procs,
                      "Run as this many processes of one rank (one GPU) each, as torchrun would start them; under "
                      "mpirun, srun or torchrun each process is one rank already");
  command->add_flag("--register", options.registerBuffers,
                    "Register peerlink's send and recv buffers as windows with every rank (across processes its "
                    "kernels then reach the peers' buffers directly instead of staging them)");
  command->add_option("-n,--iters", options.iterations, "Timed iterations (default 20)");
  command->add_option("-w,--warmup_iters", options.warmup, "Untimed iterations first (default 5)");
  command->add_option("-c,--check", options.check, "1: check every configuration's result on the host (default 1)");
  command->add_option("-d,--datatype", options.datatype, "float (default), double, half, bfloat16, int8, uint8, ...");
  command->add_option("--op", options.op, "Reduction: sum (default), prod, min, max, avg");
  command->add_option("-r,--root", options.root, "Root rank of broadcast and reduce (default 0)");
  command->add_flag("--no-nccl", options.noNccl, "Measure peerlink only");
  command->add_flag("--nccl-only", options.ncclOnly, "Measure NCCL only");
  command->add_option("--capture", options.capture,
                      "CUDA graph capture: joined (one graph for all GPUs, default) or per-rank (one per GPU, as "
                      "nccl-tests -G)");
  command->add_flag("--iteration-times", options.iterationTimes,
                    "Time every eager iteration on its own too (an event per rank between iterations) and show each "
                    "cell's fastest, median and slowest iteration; graphs are timed whole");
  command->add_option("--json", options.jsonPath, "Write the run as JSON to this file ('-' for stdout)")
      ->transform(outputPathOption());
  command
      ->add_option("--html", options.htmlPath,
                   "Write the run as one offline HTML report (charts against NCCL, every measurement) to this file "
                   "('-' for stdout); with --from-json, of the saved run")
      ->transform(outputPathOption());
  CLI::Option* explain =
      command->add_flag("--explain", options.explain,
                        "Measure nothing: print the algorithm and kernel peerlink would run at each size, and why");
  command
      ->add_option("--topo-file", options.topoFile,
                   "With --explain: the saved topology to explain for (no GPU needed), same as PEERLINK_TOPO_FILE")
      ->check(inputPathOption())
      ->needs(explain);
  for (const char* measuring : {"--iters", "--warmup_iters", "--check", "--no-nccl", "--nccl-only", "--capture",
                                "--html", "--iteration-times"}) {
    explain->excludes(command->get_option(measuring));
  }
  CLI::Option* fromJson =
      command
          ->add_option("--from-json", options.fromJsonPaths,
                       "Show runs saved with --json instead of measuring (several: one after another, and one --html "
                       "report)")
          ->check(inputPathOption());
  for (const char* measuring : {"--collective", "--minbytes", "--maxbytes", "--stepfactor", "--ngpus", "--iters",
                                "--warmup_iters", "--check", "--datatype", "--op", "--root", "--no-nccl", "--nccl-only",
                                "--capture", "--json", "--explain", "--iteration-times", "--procs", "--register"}) {
    fromJson->excludes(command->get_option(measuring));
  }
  command->get_option("--no-nccl")->excludes(command->get_option("--nccl-only"));
  return command;
}

int runCollCommand(const CollCommandOptions& options, Context& context) {
  if (options.jsonPath == "-" && options.htmlPath == "-") {
    throw Error(ErrorCode::InvalidUsage, "only one of --json and --html can be '-' (stdout)");
  }
  checkOutputPath("--html", options.htmlPath);  // the files are written after minutes of measuring
  if (!options.fromJsonPaths.empty()) {
    std::vector<SavedColl> saved;
    for (const std::string& path : options.fromJsonPaths) saved.push_back(loadCollFile(path));
    if (!options.htmlPath.empty()) writeOutputFile(options.htmlPath, collRunsToHtml(saved), context.out);
    int verdict = kExitOk;
    for (std::size_t i = 0; i < saved.size(); ++i) {
      if (options.htmlPath != "-") {
        if (saved.size() > 1)
          context.out << fmt::format("{}# {}\n", i == 0 ? "" : "\n", printable(options.fromJsonPaths[i]));
        context.out << formatCollText(saved[i].run);
      }
      verdict = std::max(verdict, collVerdict(saved[i].run, context));
    }
    return verdict;
  }
  checkOutputPath("--json", options.jsonPath);
  if (!options.topoFile.empty()) context.params.set("PEERLINK_TOPO_FILE", options.topoFile);
  if (options.explain) return runCollExplain(options, context);
  coll::CollBenchOptions bench = toBenchOptions(options, context.params);
  if (options.procs > 0) return runCollProcesses(options, context);
  // Started by a launcher (mpirun, srun, torchrun, --procs): one rank of a world of processes.
  const LaunchEnvironment launch = detectLaunchFromEnvironment();
  if (launch.size > 1 && options.gpus != 0) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("-g {}: under a launcher ({}) each process drives one GPU; leave -g out", options.gpus,
                            launch.source));
  }
  // Ranks on several hosts: launchedWorld starts MPI (libpeerlink_mpi.so), finished below once the run is over.
  coll::CollWorld world =
      launch.size > 1 ? coll::launchedWorld(launch, context.params) : coll::singleProcessWorld(bench);
  const ProgressLine progress = stderrProgress("peerlink coll");
  if (world.leads()) bench.progress = progress.report;
  // Kept for the process (discovery_cache.hpp): the communicator the run creates plans with this one.
  const Topology topology = discoveredTopology(context.params);  // Error(NoDevice) without a GPU: exit 3
  const coll::CollRun run = coll::runCollBench(context.params, bench, world);
  world.finishMpi();  // the run's communicators are gone; MPI_Finalize where peerlink initialized it
  if (world.leads()) progress.finish();
  if (!world.leads()) return kExitOk;  // rank 0's process reports the world's results
  const nlohmann::json generatedBy = runMetadata(context.commandLine);
  if (!options.jsonPath.empty()) {
    nlohmann::json document = collToJson(run, context.params);
    document["generated_by"] = generatedBy;
    document["topology"] = nlohmann::json::parse(topologyToJson(topology));
    writeOutputFile(options.jsonPath, jsonText(document) + "\n", context.out);
  }
  if (!options.htmlPath.empty()) writeOutputFile(options.htmlPath, collToHtml(run, generatedBy), context.out);
  if (options.jsonPath != "-" && options.htmlPath != "-") context.out << formatCollText(run);
  return collVerdict(run, context);
}

}  // namespace peerlink::cli
