#include "bench_json_read.hpp"

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "saved_json_read.hpp"
#include "topology/topology_json.hpp"

namespace peerlink::cli {
namespace {

using nlohmann::json;

// A saved run has at most this many cases, cells per case and setup phases per cell (a run of every case,
// the largest sweep and relays through every GPU of the largest topology stays far below).
constexpr std::size_t kMaxCases = 1024;
constexpr std::size_t kMaxCells = std::size_t{1} << 22;
constexpr std::size_t kMaxPhases = 64;

double optionalNumber(const JsonNode& entry, const char* key, double max) {
  const std::optional<JsonNode> node = entry.member(key);
  return node ? node->number(0, max) : 0.0;
}

std::string optionalText(const JsonNode& entry, const char* key) {
  const std::optional<JsonNode> node = entry.member(key);
  return node ? node->text() : std::string();
}

// An end of a transfer: a GPU of the saved topology, or -1 for the host (`allowHost`).
int endpoint(const JsonNode& node, int gpus, bool allowHost) {
  return node.smallInteger(allowHost ? -1 : 0, gpus - 1);
}

BenchCell cellFromJson(const JsonNode& entry, int gpus) {
  entry.expectObject();
  BenchCell cell;
  cell.src = endpoint(entry.required("src"), gpus, true);
  cell.dst = endpoint(entry.required("dst"), gpus, true);
  if (const std::optional<JsonNode> via = entry.member("via")) cell.via = endpoint(*via, gpus, true);
  cell.bytes = entry.required("bytes").unsignedInteger(kMaxSweepBytes);
  if (cell.bytes == 0) entry.required("bytes").fail("0 bytes (a cell moves at least 1)");
  cell.medianUs = entry.required("median_us").number(0, kMaxSavedTime);
  cell.minUs = optionalNumber(entry, "min_us", kMaxSavedTime);
  cell.maxUs = optionalNumber(entry, "max_us", kMaxSavedTime);
  cell.p99Us = optionalNumber(entry, "p99_us", kMaxSavedTime);
  cell.gbps = entry.required("gbps").number(0, kMaxSavedGBps);
  cell.expectedGBps = optionalNumber(entry, "expected_gbps", kMaxSavedGBps);
  cell.route = optionalText(entry, "route");
  if (const std::optional<JsonNode> verified = entry.member("verified")) cell.verified = verified->boolean();
  if (const std::optional<JsonNode> wrong = entry.member("wrong_bytes")) cell.wrongBytes = wrong->unsignedInteger();
  cell.error = optionalText(entry, "error");
  if (const std::optional<JsonNode> setup = entry.member("setup_ms")) {
    for (const auto& [name, value] : setup->members(kMaxPhases)) cell.setupMs[name] = value.number(0, kMaxSavedTime);
  }
  // A cell marked FAILED must stay failed even if a writer left both reasons out.
  const std::optional<JsonNode> status = entry.member("status");
  if (status && status->name() != "OK" && !cell.failed()) cell.error = "FAILED";
  return cell;
}

BenchCaseResult caseFromJson(const JsonNode& entry, int gpus) {
  entry.expectObject();
  BenchCaseResult result;
  result.name = entry.required("name").name();
  result.description = optionalText(entry, "description");
  const JsonNode metric = entry.required("metric");
  const std::string metricName = metric.name();
  if (metricName == "latency_us") {
    result.metric = BenchMetric::Latency;
  } else if (metricName != "bandwidth_gbps") {
    metric.fail(fmt::format("unknown metric {} (bandwidth_gbps or latency_us)", jsonExcerpt(metric.value())));
  }
  const std::optional<JsonNode> notApplicable = entry.member("not_applicable");
  if (notApplicable && !notApplicable->isNull()) result.notApplicable = notApplicable->text();
  if (const std::optional<JsonNode> cells = entry.member("cells")) {
    for (const JsonNode& cell : cells->elements(kMaxCells)) result.cells.push_back(cellFromJson(cell, gpus));
  }
  if (const std::optional<JsonNode> summary = entry.member("summary")) {
    for (const auto& [name, value] : summary->members(kMaxPhases)) {
      result.summary[name] = value.number(-kMaxSavedTime, kMaxSavedTime);
    }
  }
  return result;
}

}  // namespace

SavedBench benchFromJson(const json& document, const std::string& origin) {
  SavedBench saved;
  saved.generatedBy = readSavedRun(document, "bench", origin, [&](const JsonNode& root) {
    saved.topology = topologyFromJsonNode(root.required("topology"), origin);
    const int gpus = static_cast<int>(saved.topology.gpus.size());
    const JsonNode cases = root.required("cases");
    for (const JsonNode& entry : cases.elements(kMaxCases)) saved.results.push_back(caseFromJson(entry, gpus));
    if (saved.results.empty()) cases.fail("no cases (a saved run has at least one)");
  });
  return saved;
}

SavedBench loadBenchFile(const std::string& path) {
  return benchFromJson(readJsonFile(path), path);
}

}  // namespace peerlink::cli
