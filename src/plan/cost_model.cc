#include "plan/cost_model.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::plan {

// src/plan/model.json, written into a source file by the build (CMakeLists.txt, peerlink_plan).
extern const char* const kBuiltInModelJson;

namespace {

using nlohmann::json;

constexpr const char* kSchema = "peerlink.plan_model";
constexpr int kVersion = 1;

// `key` of `object` as a finite number above 0 (or, `zeroAllowed`, at least 0).
double number(const json& object, const char* key, const std::string& where, bool zeroAllowed = false) {
  const json& value = object.at(key);
  if (!value.is_number()) throw Error(ErrorCode::InvalidInput, fmt::format("{}: {} is not a number", where, key));
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < 0 || (x == 0 && !zeroAllowed)) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: {} = {} is not a {} number", where, key, x,
                                                     zeroAllowed ? "non-negative" : "positive"));
  }
  return x;
}

KernelCost costFromJson(const json& entry, const std::string& where) {
  KernelCost cost;
  cost.launchUs = number(entry, "launch_us", where, true);
  cost.efficiency = number(entry, "efficiency", where);
  if (cost.efficiency > 1.5) {
    throw Error(ErrorCode::InvalidInput,
                fmt::format("{}: efficiency {} is more than 1.5x the link model's bandwidth", where, cost.efficiency));
  }
  cost.cells = entry.value("cells", 0);
  cost.source = entry.value("source", std::string("prior"));
  return cost;
}

Kernel kernelNamed(const std::string& name) {
  for (const KernelInfo& info : kernelRegistry()) {
    if (name == info.name) return info.kernel;
  }
  throw Error(ErrorCode::InvalidInput, fmt::format("unknown kernel \"{}\"", name));
}

}  // namespace

double CostModel::memoryBandwidthOf(const std::string& gpuName) const {
  const auto found = memoryGBps.find(gpuName);
  return found != memoryGBps.end() ? found->second : defaultMemoryGBps;
}

namespace {

const KernelCost& costFor(const KernelCosts& all, Collective collective) {
  const auto found = all.byCollective.find(collective);
  return found != all.byCollective.end() ? found->second : all.all;
}

}  // namespace

const KernelCost& CostModel::cost(HostPath path, Collective collective) const {
  return costFor(costs(path), collective);
}

const KernelCost& CostModel::cost(ArenaWay way, Collective collective) const {
  return costFor(costs(way), collective);
}

const KernelCost& CostModel::cost(Kernel kernel, Collective collective) const {
  return costFor(costs(kernel), collective);
}

namespace {

json costJson(const KernelCost& cost) {
  return json{
      {"launch_us", cost.launchUs}, {"efficiency", cost.efficiency}, {"cells", cost.cells}, {"source", cost.source}};
}

// A kernel's or a way through host memory's entry: its costs over every collective, each collective's own beside,
// named under `key`.
json costsJson(const KernelCosts& costs, const char* key, const std::string& name) {
  json entry = costJson(costs.all);
  entry[key] = name;
  json collectives = json::object();
  for (const auto& [collective, cost] : costs.byCollective) collectives[collectiveName(collective)] = costJson(cost);
  entry["collectives"] = collectives;
  return entry;
}

// costsJson's entry read back into `costs`; `what` names it in errors ("kernel two_shot").
void readCosts(const json& entry, const std::string& what, KernelCosts& costs) {
  costs.all = costFromJson(entry, what);
  const json& collectives = entry.value("collectives", json::object());
  for (auto item = collectives.begin(); item != collectives.end(); ++item) {
    const std::optional<Collective> collective = parseCollective(item.key());
    if (!collective)
      throw Error(ErrorCode::InvalidInput, fmt::format("{}: unknown collective \"{}\"", what, item.key()));
    costs.byCollective[*collective] = costFromJson(item.value(), what + " for " + item.key());
  }
}

}  // namespace

json costModelToJson(const CostModel& model) {
  json kernels = json::array();
  for (const KernelInfo& info : kernelRegistry())
    kernels.push_back(costsJson(model.costs(info.kernel), "kernel", info.name));
  json hostPaths = json::array();
  for (std::size_t i = 0; i < kHostPathCount; ++i) {
    const auto path = static_cast<HostPath>(i);
    hostPaths.push_back(costsJson(model.costs(path), "path", hostPathName(path)));
  }
  json arenaWays = json::array();
  for (std::size_t i = 0; i < kArenaWayCount; ++i) {
    const auto way = static_cast<ArenaWay>(i);
    arenaWays.push_back(costsJson(model.costs(way), "way", arenaWayName(way)));
  }
  json memory = json::object();
  for (const auto& [name, gbps] : model.memoryGBps) memory[name] = gbps;
  return {{"schema", kSchema},
          {"version", kVersion},
          {"step_us", model.stepUs},
          {"peer_us", model.peerUs},
          {"process_us", model.processUs},
          {"staging_copy", costJson(model.stagingCopy)},
          {"socket_link_gbps", model.socketLinkGBps},
          {"memory_gbps", memory},
          {"default_memory_gbps", model.defaultMemoryGBps},
          {"kernels", kernels},
          {"host_step_us", model.hostStepUs},
          {"host_process_us", model.hostProcessUs},
          {"host_paths", hostPaths},
          {"arena_slot_us", model.arenaSlotUs},
          {"arena_ways", arenaWays},
          {"net_call_us", model.netCallUs},
          {"net_call_cells", model.netCallCells},
          {"provenance", model.provenance}};
}

CostModel costModelFromJson(const json& document, const std::string& origin) {
  try {
    if (!document.is_object() || document.value("schema", std::string()) != kSchema) {
      throw Error(ErrorCode::InvalidInput, fmt::format("not a peerlink plan model (schema is not \"{}\")", kSchema));
    }
    if (document.value("version", 0) != kVersion) {
      throw Error(ErrorCode::InvalidInput, fmt::format("unsupported version {}", document.value("version", 0)));
    }
    CostModel model;
    model.stepUs = number(document, "step_us", "the model", true);
    model.peerUs = document.contains("peer_us") ? number(document, "peer_us", "the model", true) : 0.0;
    model.processUs = document.contains("process_us") ? number(document, "process_us", "the model", true) : 0.0;
    if (document.contains("staging_copy")) {
      model.stagingCopy = costFromJson(document.at("staging_copy"), "staging_copy");
    }
    model.socketLinkGBps = number(document, "socket_link_gbps", "the model");
    model.defaultMemoryGBps = number(document, "default_memory_gbps", "the model");
    const json& memory = document.at("memory_gbps");
    for (auto entry = memory.begin(); entry != memory.end(); ++entry) {
      model.memoryGBps[entry.key()] = number(memory, entry.key().c_str(), "memory_gbps");
    }
    std::array<bool, kKernelCount> seen{};
    for (const json& entry : document.at("kernels")) {
      const std::string name = entry.at("kernel").get<std::string>();
      const Kernel kernel = kernelNamed(name);
      readCosts(entry, "kernel " + name, model.costs(kernel));
      seen[static_cast<std::size_t>(kernel)] = true;
    }
    for (const KernelInfo& info : kernelRegistry()) {
      if (!seen[static_cast<std::size_t>(info.kernel)]) {
        throw Error(ErrorCode::InvalidInput, fmt::format("kernel {} has no entry", info.name));
      }
    }
    if (document.contains("host_step_us")) model.hostStepUs = number(document, "host_step_us", "the model", true);
    model.hostProcessUs =
        document.contains("host_process_us") ? number(document, "host_process_us", "the model", true) : 0.0;
    for (const json& entry : document.value("host_paths", json::array())) {
      const std::string name = entry.at("path").get<std::string>();
      const std::optional<HostPath> path = parseHostPath(name);
      if (!path) throw Error(ErrorCode::InvalidInput, fmt::format("unknown host path \"{}\"", name));
      readCosts(entry, "host path " + name, model.costs(*path));
    }
    if (document.contains("arena_slot_us")) model.arenaSlotUs = number(document, "arena_slot_us", "the model", true);
    for (const json& entry : document.value("arena_ways", json::array())) {
      const std::string name = entry.at("way").get<std::string>();
      const std::optional<ArenaWay> way = parseArenaWay(name);
      if (!way) throw Error(ErrorCode::InvalidInput, fmt::format("unknown arena ring way \"{}\"", name));
      readCosts(entry, "arena ring way " + name, model.costs(*way));
    }
    if (document.contains("net_call_us")) model.netCallUs = number(document, "net_call_us", "the model", true);
    if (document.contains("net_call_cells")) {
      const json& cells = document.at("net_call_cells");
      if (!cells.is_number_integer() || cells.get<long long>() < 0) {
        throw Error(ErrorCode::InvalidInput, "net_call_cells is not a count");
      }
      model.netCallCells = cells.get<int>();
    }
    model.provenance = document.value("provenance", json::object());
    return model;
  } catch (const Error& error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: {}", origin, error.what()));
  } catch (const json::exception& error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: {}", origin, error.what()));
  }
}

CostModel loadCostModel(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::InvalidInput, fmt::format("cannot read the model {}", path));
  std::ostringstream text;
  text << file.rdbuf();
  json document;
  try {
    document = json::parse(text.str());
  } catch (const json::exception& error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("{}: not valid JSON: {}", path, error.what()));
  }
  return costModelFromJson(document, path);
}

const CostModel& builtInCostModel() {
  static const CostModel model = costModelFromJson(json::parse(kBuiltInModelJson), "the built-in model");
  return model;
}

}  // namespace peerlink::plan
