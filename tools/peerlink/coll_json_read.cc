#include "coll_json_read.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "peerlink/bench.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"
#include "saved_json_read.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;
using nlohmann::json;

// The most ranks a saved run may have (far beyond the 8 of one machine's communicator, for multi-node
// runs), and timed iterations a measurement may list.
constexpr int kMaxSavedRanks = 4096;
constexpr std::size_t kMaxIterationTimes = std::size_t{1} << 20;
constexpr std::size_t kMaxSearchedPaths = 256;
constexpr int kMaxInt = std::numeric_limits<int>::max();

template <typename T>
T parsed(const std::optional<T>& value, const JsonNode& node, const char* what) {
  if (!value) node.fail(fmt::format("unknown {} {}", what, jsonExcerpt(node.value())));
  return *value;
}

std::string optionalText(const JsonNode& entry, const char* key) {
  const std::optional<JsonNode> node = entry.member(key);
  return node ? node->text() : std::string();
}

std::vector<std::string> optionalTexts(const JsonNode& entry, const char* key, std::size_t maxElements) {
  std::vector<std::string> texts;
  if (const std::optional<JsonNode> list = entry.member(key)) {
    for (const JsonNode& element : list->elements(maxElements)) texts.push_back(element.text());
  }
  return texts;
}

bool optionalBool(const JsonNode& entry, const char* key, bool fallback) {
  const std::optional<JsonNode> node = entry.member(key);
  return node ? node->boolean() : fallback;
}

double optionalTime(const JsonNode& entry, const char* key) {
  const std::optional<JsonNode> node = entry.member(key);
  return node ? node->number(0, kMaxSavedTime) : 0.0;
}

CollMeasurement measurementFromJson(const JsonNode& entry) {
  entry.expectObject();
  CollMeasurement m;
  const JsonNode statusNode = entry.required("status");
  const std::string status = statusNode.name();
  if (status == "ok") {
    m.status = CollMeasurement::Status::Ok;
    m.timeUs = entry.required("time_us").number(0, kMaxSavedTime);
    m.algbwGBps = entry.required("algbw_gbps").number(0, kMaxSavedGBps);
    m.busbwGBps = entry.required("busbw_gbps").number(0, kMaxSavedGBps);
    if (const std::optional<JsonNode> times = entry.member("iteration_us")) {
      for (const JsonNode& time : times->elements(kMaxIterationTimes))
        m.iterationUs.push_back(time.number(0, kMaxSavedTime));
    }
    m.acrossNodesUs = optionalTime(entry, "across_nodes_us");
  } else if (status == "failed") {
    m.status = CollMeasurement::Status::Failed;
  } else if (status != "not_run") {
    statusNode.fail(
        fmt::format("unknown measurement status {} (ok, failed or not_run)", jsonExcerpt(statusNode.value())));
  }
  m.reason = optionalText(entry, "reason");
  const std::optional<JsonNode> wrong = entry.member("wrong");
  m.wrong = wrong && !wrong->isNull() ? wrong->integer(-1, std::numeric_limits<std::int64_t>::max()) : -1;
  return m;
}

coll::CollBenchOptions optionsFromJson(const JsonNode& entry, int ranks) {
  entry.expectObject();
  coll::CollBenchOptions o;
  const JsonNode collective = entry.required("collective");
  const JsonNode type = entry.required("datatype");
  const JsonNode op = entry.required("op");
  o.collective = parsed(parseCollective(collective.name()), collective, "collective");
  o.type = parsed(parseDataType(type.name()), type, "datatype");
  o.op = parsed(parseReduceOp(op.name()), op, "op");
  o.root = entry.required("root").smallInteger(0, ranks - 1);
  for (const JsonNode& size : entry.required("sizes").elements(kMaxSweepSizes)) {
    o.sizes.push_back(size.unsignedInteger(kMaxSweepBytes));
  }
  o.iterations = entry.required("iterations").smallInteger(1, kMaxInt);
  o.warmup = entry.required("warmup").smallInteger(0, kMaxInt);
  o.check = entry.required("check").boolean();
  if (const std::optional<JsonNode> gpus = entry.member("gpus")) o.gpus = gpus->smallInteger(0, kMaxSavedRanks);
  o.peerlink = optionalBool(entry, "peerlink", true);
  o.nccl = optionalBool(entry, "nccl", true);
  if (const std::optional<JsonNode> capture = entry.member("capture")) {
    const std::string name = capture->name();
    if (name != "joined" && name != "per-rank") capture->fail("expected \"joined\" or \"per-rank\"");
    o.capture = name == "per-rank" ? coll::GraphCapture::PerRank : coll::GraphCapture::Joined;
  }
  o.iterationTimes = optionalBool(entry, "iteration_times", false);
  return o;
}

coll::NcclStatus ncclFromJson(const JsonNode& entry) {
  entry.expectObject();
  coll::NcclStatus nccl;
  nccl.loaded = entry.required("loaded").boolean();
  nccl.path = optionalText(entry, "path");
  nccl.version = optionalText(entry, "version");
  if (const std::optional<JsonNode> code = entry.member("version_code"))
    nccl.versionCode = code->smallInteger(0, kMaxInt);
  nccl.reason = optionalText(entry, "reason");
  nccl.nvls = optionalText(entry, "nvls");
  nccl.searched = optionalTexts(entry, "searched", kMaxSearchedPaths);
  nccl.initMilliseconds = optionalTime(entry, "init_ms");  // older files have neither time
  return nccl;
}

// A run across nodes (coll_nodes_format.hpp); the ratios are recomputed from the times.
coll::CollNodes nodesFromJson(const JsonNode& entry) {
  entry.expectObject();
  coll::CollNodes nodes;
  nodes.nodes = entry.required("nodes").smallInteger(1, kMaxSavedRanks);
  nodes.ranksPerNode = entry.required("ranks_per_node").smallInteger(1, kMaxSavedRanks);
  nodes.mpi = optionalText(entry, "mpi");
  nodes.mpiLibrary = optionalText(entry, "mpi_library");
  nodes.mpiInitializedHere = optionalBool(entry, "mpi_initialized_here", false);
  return nodes;
}

coll::CollAcrossNodes acrossNodesFromJson(const JsonNode& entry) {
  entry.expectObject();
  coll::CollAcrossNodes across;
  across.bytesPerRank = entry.required("bytes_per_rank").unsignedInteger(kMaxSweepBytes);
  across.mpiUs = optionalTime(entry, "mpi_us");
  across.mpiReason = optionalText(entry, "mpi_reason");
  return across;
}

coll::CollRow rowFromJson(const JsonNode& entry) {
  entry.expectObject();
  coll::CollRow row;
  row.bytes = entry.required("bytes").unsignedInteger(kMaxSweepBytes);
  row.count = entry.required("count").unsignedInteger(kMaxSweepBytes);
  row.peerlinkChoice = optionalText(entry, "peerlink_algorithm");
  if (const std::optional<JsonNode> across = entry.member("across_nodes"))
    row.acrossNodes = acrossNodesFromJson(*across);
  for (const char* side : {"out_of_place", "in_place"}) {
    auto& measurements = std::string(side) == "in_place" ? row.inPlace : row.outOfPlace;
    const JsonNode placement = entry.required(side);
    for (CollConfig config : coll::kCollConfigs) {
      measurements[static_cast<int>(config)] = measurementFromJson(placement.required(coll::collConfigName(config)));
    }
  }
  return row;
}

}  // namespace

SavedColl collFromJson(const json& document, const std::string& origin) {
  SavedColl saved;
  coll::CollRun& run = saved.run;
  saved.generatedBy = readSavedRun(document, "coll", origin, [&](const JsonNode& root) {
    const JsonNode version = root.required("version");
    if (version.integer(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()) != 1) {
      version.fail(fmt::format("unsupported version {} (this peerlink reads version 1)", jsonExcerpt(version.value())));
    }
    // The ranks first: the root and the per-rank lists are checked against them.
    run.ranks = root.required("ranks").smallInteger(1, kMaxSavedRanks);
    const auto ranks = static_cast<std::size_t>(run.ranks);
    run.options = optionsFromJson(root.required("options"), run.ranks);
    const JsonNode devices = root.required("devices");
    for (const JsonNode& device : devices.elements(ranks))
      run.devices.push_back(device.smallInteger(0, kMaxSavedRanks));
    if (run.devices.size() != ranks) devices.fail(fmt::format("{} devices for {} ranks", run.devices.size(), ranks));
    run.deviceNames = optionalTexts(root, "device_names", ranks);
    run.deviceBusIds = optionalTexts(root, "device_bus_ids", ranks);
    run.nccl = ncclFromJson(root.required("nccl"));
    run.creationMilliseconds = optionalTime(root, "creation_ms");
    if (const std::optional<JsonNode> processes = root.member("processes")) {
      run.processes = processes->smallInteger(1, run.ranks);  // a process drives one rank or more
    }
    if (const std::optional<JsonNode> nodes = root.member("nodes")) run.nodes = nodesFromJson(*nodes);
    // The settings the run recorded, allowed as the registry allows them.
    if (const std::optional<JsonNode> copies = root.member("staged_copies")) {
      run.stagedCopies = copies->text();
      const std::vector<std::string>& allowed = paramSpec("PEERLINK_COLL_STAGE_COPIES").allowed;
      if (std::find(allowed.begin(), allowed.end(), run.stagedCopies) == allowed.end()) {
        copies->fail(fmt::format("not {}", fmt::join(allowed, " or ")));
      }
    }
    if (const std::optional<JsonNode> window = root.member("staging_window_bytes")) {
      const ParamSpec& spec = paramSpec("PEERLINK_COLL_STAGING_WINDOW");
      run.stagingWindowBytes = static_cast<std::size_t>(window->integer(spec.minValue, spec.maxValue));
    }
    for (const JsonNode& entry : root.required("configurations").elements(coll::kCollConfigCount)) {
      entry.expectObject();
      const JsonNode name = entry.required("name");
      const CollConfig config = parsed(coll::parseCollConfig(name.name()), name, "configuration");
      run.configs[static_cast<int>(config)] = {entry.required("available").boolean(), optionalText(entry, "reason")};
    }
    for (const JsonNode& entry : root.required("rows").elements(kMaxSweepSizes)) run.rows.push_back(rowFromJson(entry));
  });
  return saved;
}

SavedColl loadCollFile(const std::string& path) {
  return collFromJson(readJsonFile(path), path);
}

}  // namespace peerlink::cli
