#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "bench_csv.hpp"
#include "bench_format.hpp"
#include "bench_html.hpp"
#include "bench_json_read.hpp"
#include "commands.hpp"
#include "core/json_io.hpp"
#include "exit_codes.hpp"
#include "matrix_format.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/error.hpp"
#include "progress_line.hpp"
#include "run_metadata.hpp"
#include "size_parse.hpp"

namespace peerlink::cli {
namespace {

std::string listText() {
  std::vector<std::vector<std::string>> rows;
  for (const BenchCaseInfo& info : benchCases()) rows.push_back({info.name, info.description});
  return formatTable({"test case", "what it measures"}, rows);
}

BenchOptions toBenchOptions(const BenchCommandOptions& options) {
  BenchOptions bench;
  bench.names = options.names;
  bench.prefixes = options.prefixes;
  bench.minBytes = parseSize(options.minBytes, "-b");
  bench.maxBytes = options.maxBytes.empty() ? bench.minBytes : parseSize(options.maxBytes, "-e");
  bench.factor = options.factor;
  bench.iterations = options.iterations;
  bench.warmup = options.warmup;
  bench.verify = !options.noVerify;
  bench.devices = options.devices;
  if (bench.iterations < 1) throw Error(ErrorCode::InvalidUsage, "-n must be at least 1");
  if (bench.warmup < 0) throw Error(ErrorCode::InvalidUsage, "-w must not be negative");
  sweepSizes(bench.minBytes, bench.maxBytes, bench.factor);  // rejects bad sweeps before any GPU work
  selectBenchCases(bench);                                   // rejects unknown names likewise
  return bench;
}

// Output files are written after the measurements, which take minutes: a mistyped folder must fail first.
void checkOutputPaths(const BenchCommandOptions& options) {
  int toStdout = 0;
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--json", &options.jsonPath}, {"--csv", &options.csvPath}, {"--html", &options.htmlPath}};
  for (const auto& [flag, path] : outputs) {
    if (path->empty()) continue;
    if (*path == "-") ++toStdout;
    checkOutputPath(flag, *path);
  }
  if (toStdout > 1) throw Error(ErrorCode::InvalidUsage, "only one of --json, --csv and --html can be '-' (stdout)");
}

// CSV, HTML and the text of a run, measured now or loaded with --from-json; the text gives way to a
// file written to stdout.
void writeReports(const BenchCommandOptions& options, const Topology& topology,
                  const std::vector<BenchCaseResult>& results, const nlohmann::json& generatedBy, Context& context) {
  if (!options.csvPath.empty()) writeOutputFile(options.csvPath, benchToCsv(results), context.out);
  if (!options.htmlPath.empty()) {
    writeOutputFile(options.htmlPath, benchToHtml(topology, results, generatedBy), context.out);
  }
  if (options.jsonPath != "-" && options.csvPath != "-" && options.htmlPath != "-") {
    context.out << formatBenchText(topology, results);
  }
}

int benchVerdict(const BenchCommandOptions& options, const std::vector<BenchCaseResult>& results, Context& context) {
  int failed = 0;
  int belowFloor = 0;
  for (const BenchCaseResult& result : results) {
    for (const BenchCell& cell : result.cells) {
      if (cell.failed()) ++failed;
      if (!cell.failed() && result.metric == BenchMetric::Bandwidth && options.minBandwidth > 0 &&
          cell.gbps < options.minBandwidth) {
        ++belowFloor;
      }
    }
  }
  if (failed > 0) {
    context.err << fmt::format("peerlink: {} cell(s) FAILED (wrong data or errors; see above)\n", failed);
    return kExitBroken;
  }
  if (belowFloor > 0) {
    context.err << fmt::format("peerlink: {} cell(s) below --min-bw {} GB/s\n", belowFloor, options.minBandwidth);
    return kExitDegraded;
  }
  return kExitOk;
}

}  // namespace

CLI::App* addBenchCommand(CLI::App& app, BenchCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "bench", "Measure bandwidth and latency of every route between GPUs, verified, as GPU x GPU matrices");
  command->add_flag("-l,--list", options.list, "List the test cases and exit");
  command->add_option("-t,--test", options.names, "Run this test case (repeatable)");
  command->add_option("-p,--prefix", options.prefixes, "Run the test cases whose name starts with this (repeatable)");
  command->add_option("-b,--minbytes", options.minBytes, "Smallest size, e.g. 8, 64K, 256M, 1G (default 256M)");
  command->add_option("-e,--maxbytes", options.maxBytes, "Largest size (default: the smallest)");
  command->add_option("-f,--stepfactor", options.factor, "Each size is the previous times this (default 2)");
  command->add_option("-n,--iters", options.iterations,
                      "Timed iterations per cell; the median is reported (default 20)");
  command->add_option("-w,--warmup_iters", options.warmup, "Untimed iterations first (default 5)");
  command->add_flag("--no-verify", options.noVerify, "Skip verifying the copied data");
  command->add_option("-d,--devices", options.devices, "GPUs to use, e.g. -d 0,1 (default: all)")->delimiter(',');
  command->add_option("--json", options.jsonPath, "Write every result as JSON to this file ('-' for stdout)")
      ->transform(outputPathOption());
  command->add_option("--csv", options.csvPath, "Write one CSV row per cell to this file ('-' for stdout)")
      ->transform(outputPathOption());
  command
      ->add_option("--html", options.htmlPath,
                   "Write a self-contained HTML report (heat maps, size charts) to this file ('-' for stdout)")
      ->transform(outputPathOption());
  command->add_option("--min-bw", options.minBandwidth, "Fail (exit 4) when a bandwidth cell is below this many GB/s")
      ->check(finiteNonNegative());
  CLI::Option* fromJson =
      command
          ->add_option("--from-json", options.fromJsonPath,
                       "Render a run saved with --json (text, --csv, --html) instead of measuring ('-': stdin)")
          ->check(inputPathOption());
  for (const char* measuring : {"--test", "--prefix", "--minbytes", "--maxbytes", "--stepfactor", "--iters",
                                "--warmup_iters", "--no-verify", "--devices", "--json"}) {
    fromJson->excludes(command->get_option(measuring));
  }
  return command;
}

int runBenchCommand(const BenchCommandOptions& options, Context& context) {
  if (options.list) {
    context.out << listText();
    return kExitOk;
  }
  checkOutputPaths(options);
  if (!options.fromJsonPath.empty()) {
    const SavedBench saved = loadBenchFile(options.fromJsonPath);
    writeReports(options, saved.topology, saved.results, saved.generatedBy, context);
    return benchVerdict(options, saved.results, context);
  }
  BenchOptions bench = toBenchOptions(options);
  // Cross-process cases start this same program again as the exporting process.
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) bench.helperExecutable = self.string();
  const ProgressLine progress = stderrProgress("peerlink bench");
  bench.progress = progress.report;
  const Topology topology = discoverTopology(context.params);
  const std::vector<BenchCaseResult> results = runBench(topology, context.params, bench);
  progress.finish();

  const nlohmann::json generatedBy = runMetadata(context.commandLine);
  if (!options.jsonPath.empty()) {
    nlohmann::json document = benchToJson(topology, context.params, bench, results);
    document["generated_by"] = generatedBy;
    writeOutputFile(options.jsonPath, jsonText(document) + "\n", context.out);
  }
  writeReports(options, topology, results, generatedBy, context);
  return benchVerdict(options, results, context);
}

CLI::App* addShareExportCommand(CLI::App& app, ShareExportOptions& options) {
  CLI::App* command =
      app.add_subcommand("_share-export", "internal: the exporting process of cross-process benchmarks");
  command->group("");  // hidden from --help
  CLI::Option* device = command->add_option("--device", options.device);
  command->add_option("--bus-id", options.busId)->excludes(device);
  command->add_option("--bytes", options.bytes)->required();
  command->add_option("--kind", options.kind)->check(CLI::IsMember({"ipc", "cumem"}));
  command->add_option("--seed", options.seed);
  command->add_option("--timeout-ms", options.timeoutMs);
  return command;
}

int runShareExportCommand(const ShareExportOptions& options, Context& context) {
  ShareExporterRequest request;
  request.device = options.device;
  request.busId = options.busId;
  request.bytes = options.bytes;
  request.kind = options.kind == "cumem" ? ShareKind::Cumem : ShareKind::Ipc;
  request.seed = options.seed;
  request.timeout = std::chrono::milliseconds(options.timeoutMs);
  return runShareExporter(request, context.out, context.params);
}

}  // namespace peerlink::cli
