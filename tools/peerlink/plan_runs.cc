#include "plan_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "coll/comm_setup.hpp"
#include "coll_json_read.hpp"
#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"
#include "plan/processes.hpp"
#include "saved_json_read.hpp"

namespace peerlink::cli {
namespace {

using nlohmann::json;

// What a communicator through host memory records as its choice (coll::describePlannedChoice), and what the
// machine of such a run is called.
constexpr const char* kStagedPlans = "staged plan";
constexpr const char* kThroughHost = ", through host memory";

// More settings than the registry has, with room: a bound on what a saved run's list is read to.
constexpr std::size_t kMaxSavedParameters = 4096;

// Kernels as runs before their renaming recorded them.
const std::map<std::string, std::string> kRenamedKernels = {{"reduce_scatter", "shard_reduce"},
                                                            {"one_shot_direct", "one_shot_reduce"}};

// The way a row through host memory names in its choice's head ("staged plan (host_ring): ..."): `path` where the
// model costs it, `uncosted` its name where it does not (a way this build does not know); neither for a row
// of a run older than the ways' names, whose cells take the way the current code chooses.
struct RecordedWay {
  std::optional<plan::HostPath> path;
  std::string uncosted;
};

RecordedWay recordedWay(const std::string& choice) {
  const std::string head = choice.substr(0, choice.find(':'));
  const std::size_t open = head.find('(');
  const std::size_t close = head.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  const std::string name = head.substr(open + 1, close - open - 1);
  if (const std::optional<plan::HostPath> path = plan::parseHostPath(name)) return {path, ""};
  return {std::nullopt, name};
}

Kernel kernelNamed(std::string name, Collective collective) {
  // Send/recv groups ran in "ll" lines before their kernel had a name of its own.
  if (collective == Collective::SendRecv && name == "ll") name = "p2p_ll";
  const auto renamed = kRenamedKernels.find(name);
  if (renamed != kRenamedKernels.end()) name = renamed->second;
  for (const KernelInfo& info : kernelRegistry()) {
    if (name == info.name) return info.kernel;
  }
  throw Error(ErrorCode::InvalidInput, fmt::format("unknown kernel \"{}\"", name));
}

// What a row of a run across processes names as the way of its calls on unregistered buffers where the arena ring ran
// them (coll::describeArenaRing: "as the arena ring (32 blocks of 512 threads a rank, each through 4 slots of 256 KiB
// ..."): its grid and slot; nullopt where the row names another way (the staging windows) or none.
std::optional<coll::HostRingShape> recordedArenaRing(const std::string& choice) {
  constexpr std::string_view kHead = "as the arena ring (";
  const std::size_t at = choice.find(kHead);
  if (at == std::string::npos) return std::nullopt;
  int blocks = 0;
  int threads = 0;
  int slots = 0;
  int slotKiB = 0;
  const std::string text = choice.substr(at + kHead.size());
  if (std::sscanf(text.c_str(), "%d blocks of %d threads a rank, each through %d slots of %d KiB", &blocks, &threads,
                  &slots, &slotKiB) != 4 ||
      blocks <= 0 || slotKiB <= 0) {
    throw Error(ErrorCode::InvalidInput, fmt::format("a row's arena ring names no shape: \"{}\"", choice));
  }
  return coll::HostRingShape{blocks, static_cast<std::size_t>(slotKiB) << 10};
}

bool isNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// "two_shot (push_reduce): reasons..." as a choice with the kernel's registry facts; nullopt for a text without
// that head (runs before the kernels had names recorded only "one_shot: reasons").
std::optional<CollectiveChoice> recordedChoice(const std::string& text, Collective collective) {
  std::size_t at = 0;
  while (at < text.size() && isNameCharacter(text[at])) ++at;
  const std::string algorithm = text.substr(0, at);
  if (text.compare(at, 2, " (") != 0) return std::nullopt;
  const std::size_t kernelAt = at + 2;
  at = kernelAt;
  while (at < text.size() && isNameCharacter(text[at])) ++at;
  if (at == kernelAt || at >= text.size() || text[at] != ')') return std::nullopt;
  const std::optional<Algorithm> parsed = parseAlgorithm(algorithm);
  if (!parsed) throw Error(ErrorCode::InvalidInput, fmt::format("unknown algorithm \"{}\"", algorithm));
  CollectiveChoice choice;
  choice.algorithm = *parsed;
  choice.kernel = kernelNamed(text.substr(kernelAt, at - kernelAt), collective);
  choice.wanted = choice.kernel;
  const KernelInfo& info = kernelInfo(choice.kernel);
  choice.protocol = info.protocol;
  choice.engine = info.engine;
  choice.flow = info.flow;
  return choice;
}

// The settings the run recorded as set (not defaults). Every error names the file and the field.
Params runParams(const json& document, const std::string& path) {
  std::map<std::string, std::string> set;
  const std::optional<JsonNode> parameters = JsonNode(document, path).member("parameters");
  if (!parameters) return Params::fromMap(set);
  for (const JsonNode& entry : parameters->elements(kMaxSavedParameters)) {
    const std::optional<JsonNode> source = entry.member("source");
    if (source && source->text() != "default") set[entry.required("name").text()] = entry.required("value").text();
  }
  try {
    return Params::fromMap(set);
  } catch (const Error& error) {
    parameters->fail(error.what());  // a value peerlink refuses: the file's fault, not the command line's
  }
}

std::string machineOf(const coll::CollRun& run) {
  const std::string gpu = run.deviceNames.empty() ? "GPU" : run.deviceNames.front();
  const int gpus = coll::gpusOf(run);
  std::string machine = gpus == run.ranks ? fmt::format("{}x {}", run.ranks, gpu)
                                          : fmt::format("{} ranks on {}x {}", run.ranks, gpus, gpu);
  machine += run.processes == 1 ? ", one process" : fmt::format(", {} processes", run.processes);
  if (run.nodes.nodes > 1) machine += fmt::format(", {} nodes", run.nodes.nodes);
  return machine;
}

// The metadata field `key` the run recorded ("generated_by.<key>": the commit, the command line), text when
// present and empty when absent; any other value is an error naming the file and the field.
std::string metadataText(const json& generatedBy, const char* key, const std::string& path) {
  const std::optional<JsonNode> field = JsonNode(generatedBy, path, "generated_by").member(key);
  return field ? field->text() : std::string();
}

// The staging windows a run had: as it recorded them; where it recorded none, as its settings say if it set
// PEERLINK_COLL_STAGING_WINDOW, else 64 MiB (the size before the setting, and before runs recorded it).
std::size_t stagingWindowOf(const coll::CollRun& run, const Params& params) {
  if (run.stagingWindowBytes > 0) return run.stagingWindowBytes;
  for (const ParamValue& value : params.values()) {
    if (value.spec->name == "PEERLINK_COLL_STAGING_WINDOW" && value.source != ParamSource::Default) {
      return coll::stagingWindowBytes(params);
    }
  }
  return std::size_t{64} << 20;
}

// Whether the run's buffers were registered as windows: `peerlink coll --register`, which a run records only in its
// command line.
bool registeredBuffers(const std::string& commandLine) {
  std::istringstream words(commandLine);
  std::string word;
  while (words >> word) {
    if (word == "--register") return true;
  }
  return false;
}

// What a row of a run across nodes names as its choice (coll::describeHierarchical: "hierarchical over 2 nodes x 1
// ranks: in the node ...; across nodes one shot over MPI (staged, through pinned host memory)").
constexpr const char* kHierarchical = "hierarchical over";

// MPI's messages beside each row of a run across nodes, from the run's own figures (across_nodes.mpi_us: MPI's
// exchange of the row's bytes_per_rank, every rank at once): a message's latency is the exchange of the fewest bytes
// measured, a byte's time the rest of the row's exchange over its bytes; a row without an exchange (sizes where not
// every rank sends) takes the byte's time of the measured row nearest in size. Empty where the run measured none.
std::vector<std::optional<plan::MpiLink>> mpiLinksOf(const coll::CollRun& run) {
  std::vector<std::optional<plan::MpiLink>> links(run.rows.size());
  const coll::CollAcrossNodes* fewest = nullptr;
  for (const coll::CollRow& row : run.rows) {
    if (!row.acrossNodes || !(row.acrossNodes->mpiUs > 0) || row.acrossNodes->bytesPerRank == 0) continue;
    if (fewest == nullptr || row.acrossNodes->bytesPerRank < fewest->bytesPerRank) fewest = &*row.acrossNodes;
  }
  if (fewest == nullptr) return links;
  const double latency = fewest->mpiUs;
  std::vector<std::pair<double, double>> measured;  // bytes, us per byte
  for (const coll::CollRow& row : run.rows) {
    if (!row.acrossNodes || !(row.acrossNodes->mpiUs > 0) || row.acrossNodes->bytesPerRank == 0) continue;
    const auto bytes = static_cast<double>(row.acrossNodes->bytesPerRank);
    measured.emplace_back(bytes, std::max(row.acrossNodes->mpiUs - latency, 0.0) / bytes);
  }
  for (std::size_t r = 0; r < run.rows.size(); ++r) {
    const coll::CollRow& row = run.rows[r];
    const double bytes = static_cast<double>(row.acrossNodes ? std::max<std::size_t>(row.acrossNodes->bytesPerRank, 1)
                                                             : std::max<std::size_t>(row.bytes, 1));
    const auto nearest = std::min_element(measured.begin(), measured.end(), [&](const auto& a, const auto& b) {
      return std::fabs(std::log(a.first / bytes)) < std::fabs(std::log(b.first / bytes));
    });
    links[r] = plan::MpiLink{latency, nearest->second};
  }
  return links;
}

// The cells of a run across nodes: each row's eager peerlink time (calls across nodes run eagerly: no graph), its
// phases across nodes, and MPI's figures beside it. Sets `measured.skipped` where the run cannot be predicted.
void readNodesCells(const coll::CollRun& run, plan::MeasuredRun& measured) {
  const std::vector<std::optional<plan::MpiLink>> links = mpiLinksOf(run);
  const coll::CollBenchOptions& options = run.options;
  for (std::size_t r = 0; r < run.rows.size(); ++r) {
    const coll::CollRow& row = run.rows[r];
    if (row.peerlinkChoice.empty() || row.count == 0) continue;
    if (row.peerlinkChoice.rfind(kHierarchical, 0) != 0) {
      measured.skipped = fmt::format("its rows ran \"{}\" across nodes, not the hierarchical plans the check predicts",
                                     row.peerlinkChoice.substr(0, row.peerlinkChoice.find(':')));
      measured.cells.clear();
      return;
    }
    if (row.peerlinkChoice.find("staged") == std::string::npos) {
      measured.skipped = "its calls across nodes went MPI's direct way (CUDA-aware), which the check does not predict";
      measured.cells.clear();
      return;
    }
    if (!links[r]) {
      measured.skipped = "its rows carry no MPI figures (across_nodes.mpi_us): the check has no cost for its messages";
      measured.cells.clear();
      return;
    }
    for (const bool inPlace : {false, true}) {
      const coll::CollMeasurement& m =
          (inPlace ? row.inPlace : row.outOfPlace)[static_cast<int>(coll::CollConfig::Peerlink)];
      if (!m.ok() || m.failed()) continue;
      plan::Measurement cell;
      cell.size = row.bytes;
      cell.call = {options.collective, options.type, row.count, inPlace, options.root};
      cell.ran = plan::choiceFor(cell.call, measured.fabric.ranks(), measured.context);
      cell.timeUs = m.timeUs;
      if (m.acrossNodesUs > 0) cell.acrossNodesUs = m.acrossNodesUs;
      cell.mpi = links[r];
      measured.cells.push_back(cell);
    }
  }
}

}  // namespace

plan::MeasuredRun loadMeasuredRun(const std::string& path, const plan::CostModel& model) {
  return measuredRunFromJson(readJsonFile(path), path, model);
}

plan::MeasuredRun measuredRunFromJson(const json& document, const std::string& path, const plan::CostModel& model) {
  const SavedColl saved = collFromJson(document, path);
  const coll::CollRun& run = saved.run;
  plan::MeasuredRun measured;
  measured.origin = path;
  measured.commit = metadataText(saved.generatedBy, "git_commit", path);
  measured.machine = machineOf(run);
  if (coll::gpusOf(run) != run.ranks) {
    measured.skipped =
        fmt::format("its {} ranks shared {} GPU(s): the model has a GPU per rank", run.ranks, coll::gpusOf(run));
    // One rank a node: each node's part in the node is a local copy, but the nodes' copies to and from pinned memory
    // crossed the one GPU's PCIe link and copy engines, and its processes took turns on the GPU (under CUDA MPS or
    // not, which the run does not record), where the model gives each node its own GPU.
    if (run.nodes.nodes > 1 && run.nodes.ranksPerNode == 1) {
      measured.skipped +=
          "; one rank a node, but the nodes' copies to and from pinned memory shared its PCIe link and "
          "its processes the GPU (under CUDA MPS or time-sliced: the run does not say)";
    }
    return measured;
  }
  try {
    if (!document.contains("topology")) throw Error(ErrorCode::InvalidInput, "the run saved no topology");
    const Topology topology = topologyFromJson(document.at("topology").dump(), path);
    std::vector<int> gpus;
    std::vector<int> ordinals;  // each rank's GPU as the topology's process saw it
    for (std::size_t r = 0; r < run.devices.size(); ++r) {
      // A rank's bus id where the run saved them: a process of a launcher's world numbers its one GPU 0.
      const std::string busId = r < run.deviceBusIds.size() ? run.deviceBusIds[r] : std::string();
      int index = -1;
      for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
        const Gpu& gpu = topology.gpus[g];
        if (busId.empty() ? gpu.cudaOrdinal == run.devices[r] : gpu.pciBusId == busId) index = static_cast<int>(g);
      }
      if (index < 0) {
        throw Error(ErrorCode::InvalidInput, busId.empty()
                                                 ? fmt::format("device {} is not in its topology", run.devices[r])
                                                 : fmt::format("rank {}'s GPU {} is not in its topology", r, busId));
      }
      gpus.push_back(index);
      ordinals.push_back(topology.gpus[static_cast<std::size_t>(index)].cudaOrdinal);
    }
    const Params params = runParams(document, path);
    if (run.nodes.nodes > 1) {
      // One node's ranks (the run's first ranksPerNode: ranks are numbered node by node): the model's node.
      const auto perNode = static_cast<std::size_t>(std::max(run.nodes.ranksPerNode, 1));
      if (gpus.size() > perNode) {
        gpus.resize(perNode);
        ordinals.resize(perNode);
      }
      measured.nodes = run.nodes.nodes;
    }
    const plan::ChoiceContext context = plan::choiceContextFor(topology, ordinals, params);
    measured.context = context;
    measured.fabric = plan::fabricFor(topology, gpus, model, context.host.forcedPairs);
    // Its calls went through host memory (GPUs without peer access, or PEERLINK_COLL_HOST_STAGED): a machine of
    // its own, as its times are.
    if (measured.fabric.throughHost) measured.machine += kThroughHost;
    // A run saved before PEERLINK_COLL_STAGE_COPIES existed (no "staged_copies") copied every byte.
    measured.mode = {run.processes,
                     registeredBuffers(metadataText(saved.generatedBy, "command", path)),
                     plan::serialStagingOf(params),
                     run.stagedCopies == "PEERS",
                     stagingWindowOf(run, params),
                     plan::arenaRingModeOf(params),
                     plan::arenaRingShapeOf(params)};

    if (measured.nodes > 1) {
      readNodesCells(run, measured);
      return measured;
    }
    const coll::CollBenchOptions& options = run.options;
    std::string uncosted;  // a way of the run's rows the model does not cost, whose cells are left out
    for (const coll::CollRow& row : run.rows) {
      if (row.peerlinkChoice.empty() || row.count == 0) continue;
      const bool stagedPlans = row.peerlinkChoice.rfind(kStagedPlans, 0) == 0;
      if (stagedPlans != measured.fabric.throughHost) {
        measured.skipped =
            stagedPlans ? "its rows ran the staged plans through host memory where its topology and settings give "
                          "every pair peer access"
                        : "its rows ran kernels where its topology or settings take some pair through host memory";
        measured.cells.clear();
        break;
      }
      // Through host memory the row names no kernel: the communicator's way is the call's (host_traffic.hpp).
      const std::optional<CollectiveChoice> recorded =
          stagedPlans ? std::optional<CollectiveChoice>(plan::choiceFor(
                            {options.collective, options.type, row.count, false, options.root}, run.ranks, context))
                      : recordedChoice(row.peerlinkChoice, options.collective);
      if (!recorded) {
        const std::string head = row.peerlinkChoice.substr(0, row.peerlinkChoice.find(':'));
        measured.skipped =
            parseAlgorithm(head)
                ? fmt::format("its rows name no kernel (\"{}\"): a run older than the kernels' names", head)
                : fmt::format("its rows ran \"{}\", a path the check does not predict", head);
        measured.cells.clear();
        break;
      }
      const CollectiveChoice& ran = *recorded;
      const RecordedWay way = stagedPlans ? recordedWay(row.peerlinkChoice) : RecordedWay{};
      if (!way.uncosted.empty()) {
        uncosted = way.uncosted;
        continue;
      }
      for (const bool inPlace : {false, true}) {
        const coll::CollMeasurement& m =
            (inPlace ? row.inPlace : row.outOfPlace)[static_cast<int>(coll::CollConfig::PeerlinkGraph)];
        if (!m.ok() || m.failed()) continue;
        plan::Measurement cell;
        cell.size = row.bytes;
        cell.call = {options.collective, options.type, row.count, inPlace, options.root};
        cell.ran = ran;
        cell.hostPath = way.path;
        cell.arenaRing = recordedArenaRing(row.peerlinkChoice);
        if (inPlace && !stagedPlans) {
          plan::Call outOfPlace = cell.call;
          outOfPlace.inPlace = false;
          const CollectiveChoice todayIn = plan::choiceFor(cell.call, run.ranks, context);
          const CollectiveChoice todayOut = plan::choiceFor(outOfPlace, run.ranks, context);
          if (todayIn.kernel != todayOut.kernel || todayIn.algorithm != todayOut.algorithm) cell.ran = todayIn;
        }
        cell.timeUs = m.timeUs;
        measured.cells.push_back(cell);
      }
    }
    if (measured.cells.empty() && measured.skipped.empty() && !uncosted.empty()) {
      measured.skipped =
          fmt::format("its rows went \"{}\" through host memory, a way the model does not cost", uncosted);
    }
  } catch (const Error& error) {
    if (std::string(error.what()).rfind(path, 0) == 0) throw;
    // The code stays: an error that is not the file's (an internal one) is not to be taken for a bad file.
    throw Error(error.code(), fmt::format("{}: {}", path, error.what()));
  }
  return measured;
}

std::vector<plan::MeasuredRun> loadMeasuredRuns(const std::vector<std::string>& paths, const plan::CostModel& model) {
  std::vector<plan::MeasuredRun> runs;
  for (const std::string& path : paths) runs.push_back(loadMeasuredRun(path, model));
  return runs;
}

}  // namespace peerlink::cli
