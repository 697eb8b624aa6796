#include "bench_json_read.hpp"

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "saved_json_read.hpp"

namespace peerlink::cli {
namespace {

using nlohmann::json;

BenchCell cellFromJson(const json& entry) {
  BenchCell cell;
  cell.src = entry.at("src").get<int>();
  cell.dst = entry.at("dst").get<int>();
  cell.via = entry.value("via", -1);
  cell.bytes = entry.at("bytes").get<std::size_t>();
  cell.medianUs = entry.at("median_us").get<double>();
  cell.minUs = entry.value("min_us", 0.0);
  cell.maxUs = entry.value("max_us", 0.0);
  cell.p99Us = entry.value("p99_us", 0.0);
  cell.gbps = entry.at("gbps").get<double>();
  cell.expectedGBps = entry.value("expected_gbps", 0.0);
  cell.route = entry.value("route", std::string());
  cell.verified = entry.value("verified", false);
  cell.wrongBytes = entry.value("wrong_bytes", std::uint64_t{0});
  cell.error = entry.value("error", std::string());
  if (entry.contains("setup_ms") && entry.at("setup_ms").is_object()) {
    for (const auto& [name, value] : entry.at("setup_ms").items()) cell.setupMs[name] = value.get<double>();
  }
  // A cell marked FAILED must stay failed even if a writer left both reasons out.
  if (entry.value("status", std::string("OK")) != "OK" && !cell.failed()) cell.error = "FAILED";
  return cell;
}

BenchCaseResult caseFromJson(const json& entry) {
  BenchCaseResult result;
  result.name = entry.at("name").get<std::string>();
  result.description = entry.value("description", std::string());
  const std::string metric = entry.at("metric").get<std::string>();
  if (metric == "latency_us") {
    result.metric = BenchMetric::Latency;
  } else if (metric != "bandwidth_gbps") {
    throw Error(ErrorCode::InvalidInput, fmt::format("case {}: unknown metric \"{}\"", result.name, metric));
  }
  if (entry.contains("not_applicable") && !entry.at("not_applicable").is_null()) {
    result.notApplicable = entry.at("not_applicable").get<std::string>();
  }
  for (const json& cell : entry.value("cells", json::array())) result.cells.push_back(cellFromJson(cell));
  if (entry.contains("summary")) result.summary = entry.at("summary").get<std::map<std::string, double>>();
  return result;
}

}  // namespace

SavedBench benchFromJson(const json& document, const std::string& origin) {
  SavedBench saved;
  saved.generatedBy = readSavedRun(document, "bench", origin, [&] {
    if (!document.contains("topology")) throw Error(ErrorCode::InvalidInput, "no \"topology\"");
    saved.topology = topologyFromJson(document.at("topology").dump(), origin);
    for (const json& entry : document.at("cases")) saved.results.push_back(caseFromJson(entry));
  });
  return saved;
}

SavedBench loadBenchFile(const std::string& path) {
  return benchFromJson(readJsonFile(path), path);
}

}  // namespace peerlink::cli
