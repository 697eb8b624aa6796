// `peerlink place`: the best partition of this machine's GPUs (or a saved topology's) into groups, with the
// doctor's cached verdicts, printed for people or written as JSON (place_format.hpp).
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "output_file.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/error.hpp"
#include "peerlink/placement.hpp"
#include "place_format.hpp"
#include "run_metadata.hpp"

namespace peerlink::cli {
namespace {

// One to four decimal digits as a number; nothing otherwise.
std::optional<int> groupNumber(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos) return {};
  return std::stoi(text);
}

// {groups, group size} from "AxB"; Error(InvalidUsage) naming the flag otherwise.
std::pair<int, int> parseGroups(const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  const std::optional<int> groups = x == std::string::npos ? std::nullopt : groupNumber(text.substr(0, x));
  const std::optional<int> size = x == std::string::npos ? std::nullopt : groupNumber(text.substr(x + 1));
  if (!groups || !size) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("--groups '{}': expected AxB, A groups of B GPUs (e.g. --groups 2x4)", text));
  }
  if (*groups == 0) throw Error(ErrorCode::InvalidUsage, fmt::format("--groups '{}': at least one group", text));
  return {*groups, *size};
}

}  // namespace

CLI::App* addPlaceCommand(CLI::App& app, PlaceOptions& options) {
  CLI::App* command = app.add_subcommand(
      "place",
      "Which GPUs to group for traffic inside each group (tensor parallel), and the lines that start each rank near "
      "its GPU (CUDA_VISIBLE_DEVICES, numactl)");
  CLI::Option* size =
      command->add_option("-n,--group-size", options.groupSize, "GPUs per group; every GPU is placed (e.g. -n 2)");
  CLI::Option* groups = command->add_option("--groups", options.groups,
                                            "A groups of B GPUs, AxB (e.g. 2x4); fewer GPUs than the machine has "
                                            "places the best of them");
  size->excludes(groups);
  command->add_option("--topo-file", options.topoFile,
                      "Place on a topology file (from `peerlink topo --json`) instead of this machine; same as "
                      "PEERLINK_TOPO_FILE");
  command->add_option("--json", options.jsonPath, "Write the placement as JSON to this file ('-' for stdout)");
  command->footer(
      "Groups are judged by their links (NVLink, then one PCIe switch, several, a host bridge, a NUMA node, the "
      "sockets, no P2P), then bandwidth; pairs `peerlink doctor` found BROKEN are never grouped. docs/place.md.\n");
  return command;
}

int runPlaceCommand(const PlaceOptions& options, Context& context) {
  PlacementRequest request;
  if (!options.groups.empty()) {
    std::tie(request.groups, request.groupSize) = parseGroups(options.groups);
  } else if (options.groupSize) {
    request.groupSize = *options.groupSize;
  } else {
    throw Error(ErrorCode::InvalidUsage,
                "place: give -n K (groups of K GPUs) or --groups AxB (A groups of B GPUs), e.g. peerlink place -n 2");
  }
  checkOutputPath("--json", options.jsonPath);
  if (!options.topoFile.empty()) context.params.set("PEERLINK_TOPO_FILE", options.topoFile);
  const Topology topology = discoverTopology(context.params);
  const CachedVerdicts cached = readCachedVerdicts(topology, context.params);
  if (!cached.pairs.empty()) {
    request.verdicts = cached.pairs;
    request.verdictsFrom = "the cache in " + cached.directory;
  } else {
    request.verdictsFrom = cached.absence;
  }
  const GpuPlacement placement = placeGpus(topology, request);

  if (!options.jsonPath.empty()) {
    nlohmann::json document = placementToJson(topology, placement);
    document["verdicts"]["from"] = request.verdictsFrom;
    document["verdicts"]["directed_pairs_known"] = cached.pairs.size();
    document["generated_by"] = runMetadata(context.commandLine);
    writeOutputFile(options.jsonPath, document.dump(2) + "\n", context.out);
  }
  if (options.jsonPath != "-") context.out << formatPlacementText(topology, placement);
  return placement.refusal.empty() ? kExitOk : kExitBroken;
}

}  // namespace peerlink::cli
