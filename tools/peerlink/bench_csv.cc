#include "bench_csv.hpp"

#include <fmt/format.h>

namespace peerlink::cli {
namespace {

const char* metricName(BenchMetric metric) {
  return metric == BenchMetric::Latency ? "latency_us" : "bandwidth_gbps";
}

std::string statusName(const BenchCell& cell) {
  if (!cell.error.empty()) return "ERROR";
  return cell.wrongBytes != 0 ? "FAILED" : "OK";
}

std::string joinRow(const std::vector<std::string>& fields) {
  std::string row;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) row += ',';
    row += csvField(fields[i]);
  }
  return row + "\n";
}

}  // namespace

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c;
    if (c == '"') quoted += '"';
  }
  return quoted + "\"";
}

std::string benchToCsv(const std::vector<BenchCaseResult>& results) {
  std::string out =
      joinRow({"case", "metric", "src", "dst", "via", "bytes", "median_us", "min_us", "max_us", "p99_us", "gbps",
               "expected_gbps", "efficiency", "verified", "wrong_bytes", "status", "error", "route"});
  for (const BenchCaseResult& result : results) {
    if (result.notApplicable) {
      out += joinRow({result.name, metricName(result.metric), "", "", "", "", "", "", "", "", "", "", "", "", "", "N/A",
                      *result.notApplicable, ""});
      continue;
    }
    for (const BenchCell& cell : result.cells) {
      out += joinRow({result.name, metricName(result.metric), fmt::format("{}", cell.src), fmt::format("{}", cell.dst),
                      fmt::format("{}", cell.via), fmt::format("{}", cell.bytes), fmt::format("{}", cell.medianUs),
                      fmt::format("{}", cell.minUs), fmt::format("{}", cell.maxUs), fmt::format("{}", cell.p99Us),
                      fmt::format("{}", cell.gbps), fmt::format("{}", cell.expectedGBps),
                      cell.expectedGBps > 0 ? fmt::format("{}", cell.gbps / cell.expectedGBps) : "",
                      cell.verified ? "true" : "false", fmt::format("{}", cell.wrongBytes), statusName(cell),
                      cell.error, cell.route});
    }
  }
  return out;
}

}  // namespace peerlink::cli
