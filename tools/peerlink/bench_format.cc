#include "bench_format.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "matrix_format.hpp"
#include "peerlink/error.hpp"
#include "peerlink/route.hpp"
#include "size_parse.hpp"

namespace peerlink::cli {
namespace {

std::string valueText(const BenchCaseResult& result, const BenchCell& cell) {
  if (!cell.error.empty()) return "ERROR";
  if (cell.wrongBytes != 0) return "FAILED";
  return result.metric == BenchMetric::Latency ? fmt::format("{:.2f}", cell.medianUs)
                                               : fmt::format("{:.1f}", cell.gbps);
}

std::string unitText(const BenchCaseResult& result) {
  return result.metric == BenchMetric::Latency ? "us, median one way" : "GB/s at the median time";
}

std::string formatSizeBlock(const Topology& topology, const BenchCaseResult& result,
                            const std::vector<const BenchCell*>& cells, std::size_t bytes) {
  const bool host =
      std::any_of(cells.begin(), cells.end(), [](const BenchCell* c) { return c->src < 0 || c->dst < 0; });
  const bool relay = std::any_of(cells.begin(), cells.end(), [](const BenchCell* c) { return c->via >= 0; });
  std::string out;
  if (host || relay) {
    std::vector<std::vector<std::string>> rows;
    for (const BenchCell* cell : cells) {
      const std::string from = cell->src < 0 ? "host" : fmt::format("GPU{}", cell->src);
      const std::string to = cell->dst < 0 ? "host" : fmt::format("GPU{}", cell->dst);
      rows.push_back({"  " + from + " -> " + to + (cell->via >= 0 ? fmt::format(" via GPU{}", cell->via) : ""),
                      valueText(result, *cell),
                      cell->expectedGBps > 0 ? fmt::format("{:.1f}", cell->expectedGBps) : "-"});
    }
    out += fmt::format("  {} ({})\n", formatSize(bytes), unitText(result));
    out += formatTable({"  transfer", "measured", "link model"}, rows);
    return out;
  }
  std::map<std::pair<int, int>, const BenchCell*> byPair;
  double sum = 0;
  for (const BenchCell* cell : cells) {
    byPair[{cell->src, cell->dst}] = cell;
    if (!cell->failed()) sum += result.metric == BenchMetric::Bandwidth ? cell->gbps : 0;
  }
  const bool bothWays = result.name.find("bidir") != std::string::npos;
  Matrix matrix{
      fmt::format("  {} ({}) GPU(row) {} GPU(column)", formatSize(bytes), unitText(result), bothWays ? "<->" : "->"),
      static_cast<int>(topology.gpus.size()),
      [&](int row, int column) {
        auto found = byPair.find({row, column});
        if (found == byPair.end()) found = bothWays ? byPair.find({column, row}) : byPair.end();
        return found == byPair.end() ? std::string("N/A") : valueText(result, *found->second);
      },
      {},
      nullptr};
  out += formatMatrix(matrix);
  if (result.metric == BenchMetric::Bandwidth) out += fmt::format("  SUM {} {:.1f}\n", result.name, sum);
  return out;
}

// Measured against the link model's raw figure, per size: the spread, and the cells below the flag line.
std::string efficiencyLine(const std::vector<const BenchCell*>& cells) {
  std::vector<double> efficiencies;
  std::vector<std::string> low;
  for (const BenchCell* cell : cells) {
    if (cell->failed() || cell->expectedGBps <= 0) continue;
    const double efficiency = cell->gbps / cell->expectedGBps;
    efficiencies.push_back(efficiency);
    if (efficiency < kLowEfficiency)
      low.push_back(fmt::format("GPU {} -> GPU {} {:.0f}%", cell->src, cell->dst, efficiency * 100));
  }
  if (efficiencies.empty()) return {};
  std::sort(efficiencies.begin(), efficiencies.end());
  std::string line =
      fmt::format("  vs link model: {:.0f}% median ({:.0f}%..{:.0f}%)", efficiencies[efficiencies.size() / 2] * 100,
                  efficiencies.front() * 100, efficiencies.back() * 100);
  if (!low.empty()) {
    line += fmt::format("; LOW (under {:.0f}%): {}", kLowEfficiency * 100, fmt::join(low, ", "));
  }
  return line + "\n";
}

// Where both were measured: is P2P (the copy engine's DIRECT write) faster than staging through the host?
std::string p2pVersusStaged(const std::vector<BenchCaseResult>& results) {
  const auto find = [&](const std::string& name) -> const BenchCaseResult* {
    for (const BenchCaseResult& result : results) {
      if (result.name == name && !result.notApplicable) return &result;
    }
    return nullptr;
  };
  const BenchCaseResult* direct = find("d2d_write_ce");
  const BenchCaseResult* staged = find("d2d_staged");
  if (direct == nullptr || staged == nullptr) return {};
  std::vector<std::vector<std::string>> rows;
  int slower = 0;
  for (const BenchCell& p2p : direct->cells) {
    for (const BenchCell& host : staged->cells) {
      if (host.src != p2p.src || host.dst != p2p.dst || host.bytes != p2p.bytes || p2p.failed() || host.failed()) {
        continue;
      }
      const bool worse = p2p.gbps < host.gbps;
      slower += worse ? 1 : 0;
      rows.push_back({fmt::format("  GPU{} -> GPU{}", p2p.src, p2p.dst), formatSize(p2p.bytes),
                      fmt::format("{:.1f}", p2p.gbps), fmt::format("{:.1f}", host.gbps),
                      worse ? "P2P SLOWER than staging" : fmt::format("{:.1f}x", p2p.gbps / host.gbps)});
    }
  }
  if (rows.empty()) return {};
  return fmt::format("\nP2P vs STAGED (d2d_write_ce vs d2d_staged): {} of {} pairs faster by P2P\n",
                     rows.size() - static_cast<std::size_t>(slower), rows.size()) +
         formatTable({"  transfer", "size", "P2P GB/s", "STAGED GB/s", "P2P / STAGED"}, rows);
}

}  // namespace

std::string formatBenchText(const Topology& topology, const std::vector<BenchCaseResult>& results) {
  std::string out;
  for (const BenchCaseResult& result : results) {
    out += fmt::format("\n{}: {}\n", result.name, result.description);
    if (result.notApplicable) {
      out += fmt::format("  N/A: {}\n", *result.notApplicable);
      continue;
    }
    std::map<std::size_t, std::vector<const BenchCell*>> bySize;
    for (const BenchCell& cell : result.cells) bySize[cell.bytes].push_back(&cell);
    for (const auto& [bytes, cells] : bySize) {
      out += formatSizeBlock(topology, result, cells, bytes);
      if (result.metric == BenchMetric::Bandwidth) out += efficiencyLine(cells);
    }
    for (const auto& [name, value] : result.summary) out += fmt::format("  {}: {:.1f}\n", name, value);
    for (const BenchCell& cell : result.cells) {
      if (!cell.setupMs.empty() && !cell.failed()) {
        std::vector<std::string> phases;
        for (const auto& [phase, ms] : cell.setupMs) {
          if (phase != "total") phases.push_back(fmt::format("{} {:.3f}", phase, ms));
        }
        const auto total = cell.setupMs.find("total");
        out += fmt::format("  setup GPU {} -> GPU {}: {} ms ({})\n", cell.src, cell.dst,
                           total == cell.setupMs.end() ? std::string("?") : fmt::format("{:.3f}", total->second),
                           fmt::join(phases, ", "));
      }
      if (!cell.error.empty()) out += fmt::format("  ERROR GPU {} -> GPU {}: {}\n", cell.src, cell.dst, cell.error);
      if (cell.wrongBytes != 0) {
        out += fmt::format("  FAILED GPU {} -> GPU {} ({} bytes): {} wrong bytes after the copy\n", cell.src, cell.dst,
                           cell.bytes, cell.wrongBytes);
      }
    }
  }
  return out + p2pVersusStaged(results);
}

nlohmann::json benchToJson(const Topology& topology, const Params& params, const BenchOptions& options,
                           const std::vector<BenchCaseResult>& results) {
  nlohmann::json document;
  document["schema"] = "peerlink.bench";
  document["version"] = 1;
  nlohmann::json parameters = nlohmann::json::array();
  for (const ParamValue& value : params.values()) {
    parameters.push_back(
        {{"name", value.spec->name}, {"value", value.value}, {"source", paramSourceName(value.source)}});
  }
  document["parameters"] = parameters;
  document["options"] = {{"min_bytes", options.minBytes}, {"max_bytes", options.maxBytes},
                         {"factor", options.factor},      {"iterations", options.iterations},
                         {"warmup", options.warmup},      {"verify", options.verify},
                         {"devices", options.devices}};
  nlohmann::json cases = nlohmann::json::array();
  int failed = 0;
  for (const BenchCaseResult& result : results) {
    nlohmann::json entry = {
        {"name", result.name},
        {"description", result.description},
        {"metric", result.metric == BenchMetric::Latency ? "latency_us" : "bandwidth_gbps"},
        {"not_applicable", result.notApplicable ? nlohmann::json(*result.notApplicable) : nlohmann::json(nullptr)}};
    nlohmann::json cells = nlohmann::json::array();
    for (const BenchCell& cell : result.cells) {
      failed += cell.failed() ? 1 : 0;
      cells.push_back({{"src", cell.src},
                       {"dst", cell.dst},
                       {"via", cell.via},
                       {"bytes", cell.bytes},
                       {"median_us", cell.medianUs},
                       {"min_us", cell.minUs},
                       {"max_us", cell.maxUs},
                       {"p99_us", cell.p99Us},
                       {"gbps", cell.gbps},
                       {"expected_gbps", cell.expectedGBps},
                       {"efficiency", cell.expectedGBps > 0 ? cell.gbps / cell.expectedGBps : 0.0},
                       {"route", cell.route},
                       {"verified", cell.verified},
                       {"wrong_bytes", cell.wrongBytes},
                       {"status", cell.failed() ? "FAILED" : "OK"},
                       {"error", cell.error},
                       {"setup_ms", cell.setupMs}});
    }
    entry["cells"] = cells;
    entry["summary"] = result.summary;
    cases.push_back(entry);
  }
  document["cases"] = cases;
  document["failed_cells"] = failed;
  document["topology"] = nlohmann::json::parse(topologyToJson(topology));
  // What peerlink would choose for each pair on its own (a 256 MiB transfer in one process), beside the
  // routes the cases forced.
  nlohmann::json routes = nlohmann::json::array();
  for (const GpuPair& pair : topology.pairs) {
    const RouteRequest request{pair.src, pair.dst, std::size_t{256} << 20, ProcessBoundary::SameProcess};
    try {
      const Route route = selectRoute(topology, params, request);
      routes.push_back({{"src", pair.src},
                        {"dst", pair.dst},
                        {"mode", routeModeName(route.mode)},
                        {"engine", engineName(route.engine)},
                        {"direction", directionName(route.direction)},
                        {"relay_gpu", route.relayGpu},
                        {"route", describeRoute(topology, request, route)}});
    } catch (const Error& error) {
      routes.push_back({{"src", pair.src}, {"dst", pair.dst}, {"error", error.what()}});
    }
  }
  document["routes"] = routes;
  return document;
}

}  // namespace peerlink::cli
