// `peerlink doctor`: verifyPeers on this machine's GPUs, printed as a verdict matrix with findings and
// fixes, then GPUDirect RDMA readiness, or written as JSON; the exit code says OK (0), DEGRADED (4) or
// BROKEN (5) for the pairs. `--rdma` checks GPUDirect RDMA readiness only, with an exit code of its own.
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "core/json_io.hpp"
#include "core/text.hpp"
#include "doctor_format.hpp"
#include "doctor_rdma_format.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/error.hpp"
#include "peerlink/rdma_readiness.hpp"
#include "progress_line.hpp"
#include "run_metadata.hpp"

namespace peerlink::cli {

CLI::App* addDoctorCommand(CLI::App& app, DoctorOptions& options) {
  CLI::App* command =
      app.add_subcommand("doctor", "A functional verdict for every directed GPU pair, with the cause and the fix");
  command->add_flag("--quick", options.quick,
                    "Capabilities and the functional probe only: no platform checks, no bandwidth (for start-up)");
  command->add_option("--json", options.jsonPath, "Write the report as JSON to this file ('-' for stdout)")
      ->transform(outputPathOption());
  command->add_flag("--no-cache", options.noCache,
                    "Probe every pair again and leave the verdict cache alone (same as PEERLINK_DOCTOR_CACHE=off)");
  command->add_option("-d,--devices", options.devices, "Only these GPUs (CUDA ordinals, e.g. -d 0 1)")->delimiter(',');
  // Kept (hidden) so that it is refused with the reason rather than as an unknown option.
  command->add_option("--topo-file", options.topoFile)->check(inputPathOption())->group("");
  command->add_option("--timeout-ms", options.timeoutMs, "Deadline of every probe wait, in milliseconds")
      ->check(CLI::Range(1, 3600000))
      ->capture_default_str();
  command->add_option("--helper-visible-devices", options.helperVisibleDevices,
                      "CUDA_VISIBLE_DEVICES of the probe's second process, as launchers that give each process "
                      "only some GPUs set it");
  command->add_flag("--no-cross-process", options.noCrossProcess, "Skip the cross-process methods (ipc, cumem)");
  CLI::Option* rdma = command->add_flag(
      "--rdma", options.rdma,
      "GPUDirect RDMA readiness only: RDMA NICs and links, each GPU's nearest NIC, GPU memory registration "
      "(nvidia_peermem / DMA-BUF), ACS, the MPI's CUDA awareness; no probes, runs without GPUs");
  for (const char* other : {"--quick", "--no-cache", "--devices", "--helper-visible-devices", "--no-cross-process"}) {
    rdma->excludes(other);
  }
  // Reads a fake machine (tests/fixtures/doctor/<name>) instead of this one: tests and the examples in docs.
  command->add_option("--platform-root", options.platformRoot)->check(CLI::ExistingDirectory)->group("");
  return command;
}

namespace {

RdmaReadinessOptions rdmaOptions(const DoctorOptions& options) {
  return options.platformRoot.empty() ? RdmaReadinessOptions{} : rdmaOptionsUnder(options.platformRoot);
}

// `--rdma`: the machine's GPUs when there are any (for the GPU-NIC paths), else none; a fake machine's
// topology file with --platform-root.
int runRdmaOnly(const DoctorOptions& options, const std::string& topoFile, Context& context) {
  Topology topology;
  std::string noGpu;
  if (!topoFile.empty()) {
    topology =
        loadTopologyFile(options.topoFile.empty() ? context.params.getString("PEERLINK_TOPO_FILE") : options.topoFile);
  } else {
    try {
      topology = discoverTopology(context.params);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::NoDevice) throw;
      topology.source = "no GPU";
      noGpu = error.what();
    }
  }
  const RdmaReadiness readiness = checkRdmaReadiness(topology, rdmaOptions(options));
  const int exitCode = verdictExitCode(readiness.overall);
  if (!options.jsonPath.empty()) {
    nlohmann::json document = {{"schema", "peerlink.rdma"}, {"version", 1}, {"exit_code", exitCode}};
    document["rdma"] = rdmaToJson(topology, readiness);
    document["topology_source"] = topology.source;
    document["generated_by"] = runMetadata(context.commandLine);
    writeOutputFile(options.jsonPath, jsonText(document) + "\n", context.out);
    if (options.jsonPath == "-") return exitCode;
  }
  const int n = static_cast<int>(topology.gpus.size());
  context.out << fmt::format("peerlink doctor --rdma: {} GPU{} ({})\n", n, n == 1 ? "" : "s",
                             noGpu.empty() ? topology.source : printable(noGpu, 300));
  context.out << formatRdmaText(topology, readiness, true);
  if (readiness.applicable) {
    context.out << fmt::format("\nGPUDirect RDMA readiness: {} (exit {})\n", verdictName(readiness.overall), exitCode);
  }
  return exitCode;
}

}  // namespace

int runDoctorCommand(const DoctorOptions& options, Context& context) {
  // A saved topology is refused rather than half-diagnosed: the verdicts come from moving data between this
  // machine's GPUs, and the findings that explain them from this machine's platform (IOMMU, ACS, VM,
  // limits); neither says anything about the machine a topology file describes. `--rdma --platform-root`
  // reads a fake machine whole, its tree and its topology file.
  std::string topoFile;
  if (!options.topoFile.empty()) {
    topoFile = "--topo-file " + options.topoFile;
  } else if (const std::string& file = context.params.getString("PEERLINK_TOPO_FILE"); !file.empty()) {
    topoFile = "PEERLINK_TOPO_FILE=" + file;
  }
  if (!options.platformRoot.empty() && !options.rdma) {
    throw Error(ErrorCode::InvalidUsage,
                "--platform-root reads a fake machine for --rdma only: the probes move data on this machine");
  }
  if (!options.platformRoot.empty() && topoFile.empty()) {
    throw Error(ErrorCode::InvalidUsage, "--platform-root needs --topo-file: the fake machine's GPUs");
  }
  if (options.rdma && (topoFile.empty() || !options.platformRoot.empty())) {
    return runRdmaOnly(options, topoFile, context);
  }
  if (!topoFile.empty()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("doctor cannot check a saved topology ({}): its verdicts come from moving data between "
                            "this machine's GPUs; run `peerlink doctor` on that machine, or `peerlink topo "
                            "--topo-file FILE` to see the saved topology",
                            printable(topoFile)));
  }
  if (options.noCache) context.params.set("PEERLINK_DOCTOR_CACHE", "off");
  VerifyOptions verify;
  verify.quick = options.quick;
  verify.timeout = std::chrono::milliseconds(options.timeoutMs);
  if (!options.helperVisibleDevices.empty()) verify.helperVisibleDevices = options.helperVisibleDevices;
  if (!options.noCrossProcess) {
    // The cross-process methods start this same program again as the process that owns the memory.
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) verify.helperExecutable = self.string();
  }
  const ProgressLine progress = stderrProgress("peerlink doctor");
  verify.progress = progress.report;
  const VerifyResult result = verifyPeers(options.devices, verify, context.params);
  progress.finish();

  const int exitCode = doctorExitCode(result.report);
  // GPUDirect RDMA readiness concerns traffic between machines, which the probe does not move: it is
  // reported, not folded into the pairs' verdicts or the exit code.
  std::optional<RdmaReadiness> rdma;
  if (!options.quick) rdma = checkRdmaReadiness(result.topology, rdmaOptions(options));
  if (!options.jsonPath.empty()) {
    nlohmann::json document = doctorToJson(result.topology, result.report, result.probes);
    if (rdma) document["rdma"] = rdmaToJson(result.topology, *rdma);
    document["run"] = {{"quick", options.quick},
                       {"seconds", result.seconds},
                       {"cached_pairs", result.cachedPairs},
                       {"cache_directory", result.cacheDirectory},
                       {"timeout_ms", options.timeoutMs},
                       {"cross_process", !verify.helperExecutable.empty()}};
    document["generated_by"] = runMetadata(context.commandLine);
    writeOutputFile(options.jsonPath, jsonText(document) + "\n", context.out);
    if (options.jsonPath == "-") return exitCode;
  }
  context.out << formatDoctorText(result.topology, result.report);
  const int pairs = static_cast<int>(result.report.pairs.size());
  context.out << fmt::format("\n{} pair(s) in {:.2f} s", pairs, result.seconds);
  if (result.cachedPairs > 0) {
    context.out << fmt::format("; {} from the verdict cache in {} (--no-cache probes again)", result.cachedPairs,
                               result.cacheDirectory);
  }
  context.out << "\n";
  if (rdma) context.out << formatRdmaText(result.topology, *rdma, false);
  return exitCode;
}

}  // namespace peerlink::cli
