#include "cli.hpp"

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "core/text.hpp"
#include "exit_codes.hpp"
#include "peerlink/error.hpp"
#include "peerlink/version.hpp"
#include "plan_command.hpp"
#include "run_metadata.hpp"

namespace peerlink::cli {
namespace {

constexpr const char* kExampleTopology = "examples/topologies/h200x4_vm.json";

// Where the bundled example lives: next to an installed binary, or in the source tree we run from.
std::string exampleTopologyPath() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = exe.parent_path().parent_path() / "share/peerlink" / kExampleTopology;
    if (std::filesystem::exists(installed, error)) return installed.string();
  }
  return kExampleTopology;
}

std::string firstLine(const std::string& text) {
  return printable(text.substr(0, text.find('\n')), 1000);
}

// CLI11 reports a missing subcommand before an unknown one or an unknown option ("A subcommand is required"
// for `peerlink frobnicate` and `peerlink --bogus` alike): what was wrong, named, before CLI11 parses.
std::optional<std::string> commandProblem(CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands([](CLI::App* c) { return !c->get_group().empty(); })) {
    commands.push_back(command->get_name());
  }
  const std::string list = fmt::format("{}", fmt::join(commands, ", "));
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "--version") return std::nullopt;
    if (!arg.empty() && arg[0] == '-') {
      return fmt::format("unknown option '{}' before the command (a command first: {}; run 'peerlink --help')",
                         printable(arg, 100), list);
    }
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      if (command->get_name() == arg) return std::nullopt;
    }
    return fmt::format("unknown command '{}' (one of {}; run 'peerlink --help')", printable(arg, 100), list);
  }
  return fmt::format("no command given (one of {}; run 'peerlink --help')", list);
}

}  // namespace

int exitCodeFor(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidUsage:
    case ErrorCode::InvalidInput: return kExitUsage;
    case ErrorCode::NoDevice: return kExitNoGpu;
    default: return kExitRuntimeError;
  }
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"peerlink: GPU peer-to-peer topology, verdicts and data movement", "peerlink"};
  app.set_version_flag("--version", fmt::format("peerlink {} (commit {})", kVersion, kGitCommit));
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 runtime error, 2 usage or input error, 3 no GPU, 4 degraded, 5 broken.\n"
      "Settings: PEERLINK_* environment variables; `peerlink env` lists them.");
  TopoOptions topoOptions;
  EnvOptions envOptions;
  BenchCommandOptions benchOptions;
  ShareExportOptions shareExportOptions;
  DoctorOptions doctorOptions;
  CollCommandOptions collOptions;
  PlaceOptions placeOptions;
  PlanCommandOptions planOptions;
  NcclPathOptions ncclPathOptions;
  CLI::App* topo = addTopoCommand(app, topoOptions);
  CLI::App* bench = addBenchCommand(app, benchOptions);
  CLI::App* doctor = addDoctorCommand(app, doctorOptions);
  CLI::App* coll = addCollCommand(app, collOptions);
  CLI::App* place = addPlaceCommand(app, placeOptions);
  CLI::App* plan = addPlanCommand(app, planOptions);
  CLI::App* shareExport = addShareExportCommand(app, shareExportOptions);
  CLI::App* env = addEnvCommand(app, envOptions);
  CLI::App* ncclPath = addNcclPathCommand(app, ncclPathOptions);

  if (const std::optional<std::string> problem = commandProblem(app, argc, argv)) {
    err << "peerlink: " << *problem << "\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    out << app.version() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& error) {
    err << "peerlink: " << firstLine(error.what()) << " (run 'peerlink --help')\n";
    return kExitUsage;
  }

  try {
    Context context{Params::fromEnvironment(), out, err, joinCommandLine(argc, argv),
                    std::vector<std::string>(argv, argv + argc)};
    for (const std::string& unknown : context.params.unknownVariables())
      err << "peerlink: warning: " << unknown << "\n";
    if (topo->parsed()) return runTopo(topoOptions, context);
    if (env->parsed()) return runEnv(envOptions, context);
    if (bench->parsed()) return runBenchCommand(benchOptions, context);
    if (doctor->parsed()) return runDoctorCommand(doctorOptions, context);
    if (coll->parsed()) return runCollCommand(collOptions, context);
    if (place->parsed()) return runPlaceCommand(placeOptions, context);
    if (plan->parsed()) return runPlanCommand(planOptions, context);
    if (shareExport->parsed()) return runShareExportCommand(shareExportOptions, context);
    if (ncclPath->parsed()) return runNcclPathCommand(ncclPathOptions, context);
    err << "peerlink: no command given (run 'peerlink --help')\n";
    return kExitUsage;
  } catch (const Error& error) {
    err << "peerlink: " << firstLine(error.what());
    if (error.code() == ErrorCode::NoDevice) {
      err << "; to see what peerlink shows, try: peerlink topo --topo-file " << exampleTopologyPath();
    }
    err << "\n";
    return exitCodeFor(error.code());
  } catch (const std::exception& error) {
    err << "peerlink: internal error: " << firstLine(error.what()) << "\n";
    return kExitRuntimeError;
  }
}

}  // namespace peerlink::cli
