// `peerlink doctor`: verifyPeers on this machine's GPUs, printed as a verdict matrix with findings and
// fixes, or written as JSON; the exit code says OK (0), DEGRADED (4) or BROKEN (5).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "core/json_io.hpp"
#include "core/text.hpp"
#include "doctor_format.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/error.hpp"
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
  return command;
}

int runDoctorCommand(const DoctorOptions& options, Context& context) {
  // A saved topology is refused rather than half-diagnosed: the verdicts come from moving data between this
  // machine's GPUs, and the findings that explain them from this machine's platform (IOMMU, ACS, VM,
  // limits); neither says anything about the machine a topology file describes.
  std::string topoFile;
  if (!options.topoFile.empty()) {
    topoFile = "--topo-file " + options.topoFile;
  } else if (const std::string& file = context.params.getString("PEERLINK_TOPO_FILE"); !file.empty()) {
    topoFile = "PEERLINK_TOPO_FILE=" + file;
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
  const bool showProgress = isatty(STDERR_FILENO) != 0;
  if (showProgress) {
    verify.progress = [](const std::string& what) { std::fprintf(stderr, "\r\033[K%s", what.c_str()); };
  }
  const VerifyResult result = verifyPeers(options.devices, verify, context.params);
  if (showProgress) std::fprintf(stderr, "\r\033[K");

  const int exitCode = doctorExitCode(result.report);
  if (!options.jsonPath.empty()) {
    nlohmann::json document = doctorToJson(result.topology, result.report, result.probes);
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
  return exitCode;
}

}  // namespace peerlink::cli
