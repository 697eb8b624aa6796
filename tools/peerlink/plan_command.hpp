// `peerlink plan`: predicted collective times for this machine, a saved topology, or N nodes of it joined by NICs,
// from the plans peerlink runs scored over the links (src/plan/); --fit refits the model to saved runs, --check
// compares it with them (docs/plan.md).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace peerlink::cli {

struct PlanCommandOptions {
  std::string collective = "all_reduce";  ///< -o
  std::string minBytes = "8";             ///< -b
  std::string maxBytes = "1G";            ///< -e
  double factor = 2;                      ///< -f
  int gpus = 0;                           ///< -g: GPUs 0..g-1 of the topology (0: all)
  std::string datatype = "float";         ///< -d
  int root = 0;                           ///< -r
  std::string topoFile;                   ///< --topo-file
  int nodes = 1;                          ///< --nodes
  double nicGbps = 0;                     ///< --nic-gbps
  double nicLatencyUs = 0;                ///< --nic-latency-us
  bool nicGbpsGiven = false;              ///< --nic-gbps was given
  bool nicLatencyGiven = false;           ///< --nic-latency-us was given
  int nicsPerNode = 0;                    ///< --nics-per-node (0: one per GPU)
  std::string netPath = "gpudirect";      ///< --net-path: gpudirect (GPUDirect RDMA) or staged (MPI's staged path)
  bool netPathGiven = false;              ///< --net-path was given
  std::string processes = "one";          ///< --processes: one (drives every GPU) or per-gpu
  bool registerBuffers = false;           ///< --register: with --processes per-gpu, buffers registered as windows
  std::string modelPath;                  ///< --model: a model file instead of the built-in one
  std::string jsonPath;                   ///< --json
  std::vector<std::string> fitRuns;       ///< --fit: saved `peerlink coll --json` runs to fit the model to
  std::string writePath;                  ///< --write: where --fit writes the model
  std::vector<std::string> checkRuns;     ///< --check: saved runs to compare the model with
  double maxMedianError = 0;              ///< --max-median-error: --check fails above it (0: never)
};

CLI::App* addPlanCommand(CLI::App& app, PlanCommandOptions& options);
int runPlanCommand(const PlanCommandOptions& options, Context& context);

}  // namespace peerlink::cli
