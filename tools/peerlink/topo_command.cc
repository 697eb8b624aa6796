#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/json_io.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "peerlink/topology.hpp"
#include "run_metadata.hpp"
#include "topo_format.hpp"

namespace peerlink::cli {

CLI::App* addTopoCommand(CLI::App& app, TopoOptions& options) {
  CLI::App* command = app.add_subcommand(
      "topo", "Show the GPUs, how each pair is linked (NVLink, PCIe path class), P2P capabilities and NUMA affinity");
  command
      ->add_option("--topo-file", options.topoFile,
                   "Show a topology file (from `peerlink topo --json`; '-': stdin) instead of this machine's; same as "
                   "PEERLINK_TOPO_FILE")
      ->check(inputPathOption());
  command->add_option("--json", options.jsonPath, "Write the topology as JSON to this file ('-' for stdout)")
      ->transform(outputPathOption());
  return command;
}

int runTopo(const TopoOptions& options, Context& context) {
  if (!options.topoFile.empty()) context.params.set("PEERLINK_TOPO_FILE", options.topoFile);
  const Topology topology = discoverTopology(context.params);
  if (!options.jsonPath.empty()) {
    // The topology document plus who made it; readers of topology files ignore the extra key.
    nlohmann::json document = nlohmann::json::parse(topologyToJson(topology));
    document["generated_by"] = runMetadata(context.commandLine);
    writeOutputFile(options.jsonPath, jsonText(document) + "\n", context.out);
  }
  if (options.jsonPath != "-") context.out << formatTopologyText(topology);
  return 0;
}

}  // namespace peerlink::cli
