#include "bench_html_case.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "size_parse.hpp"

namespace peerlink::cli::report {
namespace {

std::string endName(int gpu) {
  return gpu < 0 ? "host" : fmt::format("GPU{}", gpu);
}

std::string transferText(const BenchCell& cell) {
  return endName(cell.src) + " -> " + endName(cell.dst) + (cell.via >= 0 ? " via " + endName(cell.via) : "");
}

bool isMatrixCase(const BenchCaseResult& result) {
  return std::all_of(result.cells.begin(), result.cells.end(),
                     [](const BenchCell& cell) { return cell.src >= 0 && cell.dst >= 0 && cell.via < 0; });
}

bool isRelayCase(const BenchCaseResult& result) {
  return std::all_of(result.cells.begin(), result.cells.end(), [](const BenchCell& cell) { return cell.via >= 0; });
}

// The text output decides this by name too; the cells of a both-ways case hold each pair once.
bool isBothWays(const BenchCaseResult& result) {
  return result.name.find("bidir") != std::string::npos;
}

std::string tooltip(const BenchCaseResult& result, const BenchCell& cell) {
  std::string text = fmt::format("{}, {}: ", transferText(cell), formatSize(cell.bytes));
  if (!cell.error.empty()) return text + "ERROR: " + cell.error;
  if (cell.wrongBytes != 0) return text + fmt::format("FAILED: {} wrong bytes after the copy", cell.wrongBytes);
  text += fmt::format("{} {}; median {:.2f} µs (min {:.2f}, max {:.2f}, p99 {:.2f})", valueText(result, cell),
                      unit(result), cell.medianUs, cell.minUs, cell.maxUs, cell.p99Us);
  if (hasModel(cell))
    text += fmt::format("; link model {:.1f} GB/s ({})", cell.expectedGBps, percent(efficiency(cell)));
  text += cell.verified ? "; verified" : "; not verified";
  if (!cell.route.empty()) text += "; route " + cell.route;
  return text;
}

// Only the largest size is held against the link model: smaller messages are bound by latency, not the link.
bool judged(const BenchCell& cell, std::size_t largestBytes) {
  return cell.bytes == largestBytes && hasModel(cell);
}

HeatCell heatCell(const BenchCaseResult& result, const BenchCell& cell, std::size_t largestBytes) {
  HeatCell heat;
  heat.kind = cell.failed() ? HeatCell::Kind::Failed : HeatCell::Kind::Value;
  heat.value = valueOf(result, cell);
  heat.text = valueText(result, cell);
  heat.note = judged(cell, largestBytes) ? percent(efficiency(cell)) : "";
  heat.flagged = judged(cell, largestBytes) && isLow(cell);
  heat.tooltip = tooltip(result, cell);
  return heat;
}

std::map<std::size_t, std::string> heatMaps(const Topology& topology, const BenchCaseResult& result,
                                            const CellsBySize& bySize) {
  int n = static_cast<int>(topology.gpus.size());
  for (const BenchCell& cell : result.cells) n = std::max({n, cell.src + 1, cell.dst + 1});
  std::vector<std::string> labels;
  for (int i = 0; i < n; ++i) labels.push_back(endName(i));
  const bool bothWays = isBothWays(result);
  std::map<std::size_t, std::string> out;
  for (const auto& [bytes, cells] : bySize) {
    HeatMap map;
    map.title = formatSize(bytes);
    map.subtitle = fmt::format("GPU(row) {} GPU(column), {}", bothWays ? "<->" : "->",
                               isLatency(result) ? "µs (median, one way)" : "GB/s");
    map.labels = labels;
    map.cells.assign(static_cast<std::size_t>(n), std::vector<HeatCell>(static_cast<std::size_t>(n)));
    for (int row = 0; row < n; ++row) {
      for (int column = 0; column < n; ++column) {
        map.cells[row][column] = row == column ? HeatCell{HeatCell::Kind::Self, 0, "X", "", false, "the same GPU"}
                                               : HeatCell{HeatCell::Kind::Missing, 0, "N/A", "", false, "not measured"};
      }
    }
    for (const BenchCell* cell : cells) {
      const HeatCell heat = heatCell(result, *cell, bySize.rbegin()->first);
      map.cells[cell->src][cell->dst] = heat;
      if (bothWays && map.cells[cell->dst][cell->src].kind == HeatCell::Kind::Missing) {
        map.cells[cell->dst][cell->src] = heat;
      }
      if (!cell->failed()) map.scaleMax = std::max(map.scaleMax, heat.value);
    }
    out[bytes] = renderHeatMap(map);
  }
  return out;
}

std::string legendItem(const std::string& swatch, const std::string& text) {
  return "<span class=\"item\">" + (swatch.empty() ? "" : "<span class=\"sw " + swatch + "\"></span> ") + text +
         "</span>";
}

std::string heatLegend(const BenchCaseResult& result, std::size_t largestBytes) {
  const auto& cells = result.cells;
  std::string out = "<p class=\"legend\">" + legendItem("ramp", "colour: 0 to the largest value of each map");
  if (std::any_of(cells.begin(), cells.end(), [](const BenchCell& cell) { return cell.failed(); })) {
    out += legendItem("red", "FAILED (wrong data) / ERROR (not measured; reasons below)");
  }
  if (std::any_of(cells.begin(), cells.end(), [&](const BenchCell& cell) { return judged(cell, largestBytes); })) {
    out += legendItem("", cellsBySize(result).size() > 1 ? "<b>%</b> = measured / link model, at the largest size"
                                                         : "<b>%</b> = measured / link model");
  }
  if (std::any_of(cells.begin(), cells.end(),
                  [&](const BenchCell& cell) { return judged(cell, largestBytes) && isLow(cell); })) {
    out += legendItem("flag", "below " + percent(kLowEfficiency) + " of the link model");
  }
  out += legendItem("self", "X = the same GPU");
  return out + legendItem("", "hover a cell for its statistics and route") + "</p>\n";
}

std::string tableCell(const BenchCaseResult& result, const BenchCell& cell, std::size_t largestBytes) {
  const bool withModel = judged(cell, largestBytes);
  const std::string style = cell.failed() ? " failed" : withModel && isLow(cell) ? " low" : "";
  return fmt::format("<td class=\"num{}\" title=\"{}\">{}{}</td>", style, escapeHtml(tooltip(result, cell)),
                     valueText(result, cell),
                     withModel ? " <span class=\"eff\">" + percent(efficiency(cell)) + "</span>" : "");
}

// Transfers down, sizes across.
std::string transferTable(const BenchCaseResult& result, const CellsBySize& bySize) {
  using Key = std::tuple<int, int, int>;
  std::vector<Key> transfers;
  std::map<Key, std::map<std::size_t, const BenchCell*>> grid;
  std::map<Key, double> model;
  for (const BenchCell& cell : result.cells) {
    const Key key{cell.src, cell.dst, cell.via};
    if (grid.count(key) == 0) transfers.push_back(key);
    grid[key][cell.bytes] = &cell;
    if (cell.expectedGBps > 0) model[key] = cell.expectedGBps;
  }
  std::string out = fmt::format("<table><tr><th>transfer ({})</th>", unit(result));
  for (const auto& entry : bySize) out += "<th>" + formatSize(entry.first) + "</th>";
  out += model.empty() ? "</tr>" : "<th>link model (GB/s)</th></tr>";
  for (const Key& key : transfers) {
    out += "<tr><td>" + escapeHtml(transferText(*grid[key].begin()->second)) + "</td>";
    for (const auto& entry : bySize) {
      const auto found = grid[key].find(entry.first);
      out += found == grid[key].end() ? "<td class=\"na\">N/A</td>"
                                      : tableCell(result, *found->second, bySize.rbegin()->first);
    }
    if (!model.empty())
      out += model.count(key) ? fmt::format("<td class=\"num\">{:.1f}</td>", model[key]) : "<td></td>";
    out += "</tr>";
  }
  return out + "</table>\n";
}

// One size of a relay case: pairs down, the GPU in between across, so n GPUs give n(n-1) rows, not n(n-1)(n-2).
std::string relayTable(const BenchCaseResult& result, std::size_t bytes, const std::vector<const BenchCell*>& cells) {
  std::vector<std::pair<int, int>> pairs;
  std::set<int> vias;
  std::map<std::tuple<int, int, int>, const BenchCell*> byKey;
  for (const BenchCell* cell : cells) {
    if (std::find(pairs.begin(), pairs.end(), std::make_pair(cell->src, cell->dst)) == pairs.end()) {
      pairs.emplace_back(cell->src, cell->dst);
    }
    vias.insert(cell->via);
    byKey[{cell->src, cell->dst, cell->via}] = cell;
  }
  std::string out = fmt::format("<table><tr><th>{}, {}</th>", formatSize(bytes), unit(result));
  for (int via : vias) out += "<th>via " + endName(via) + "</th>";
  out += "</tr>";
  for (const auto& [src, dst] : pairs) {
    out += "<tr><td>" + endName(src) + " -&gt; " + endName(dst) + "</td>";
    for (int via : vias) {
      const auto found = byKey.find({src, dst, via});
      out += found == byKey.end() ? "<td class=\"na\">-</td>" : tableCell(result, *found->second, bytes);
    }
    out += "</tr>";
  }
  return out + "</table>\n";
}

std::string setupTable(const BenchCaseResult& result) {
  // The phases the cells report, in the order a setup runs where known, "total" last.
  std::vector<std::string> phases;
  for (const char* known :
       {"export", "handshake", "import", "map", "enable_peer_access", "ipc_get_handle", "first_copy", "steady_copy"}) {
    for (const BenchCell& cell : result.cells) {
      if (cell.setupMs.count(known) != 0) {
        phases.emplace_back(known);
        break;
      }
    }
  }
  for (const BenchCell& cell : result.cells) {
    for (const auto& entry : cell.setupMs) {
      if (entry.first != "total" && std::find(phases.begin(), phases.end(), entry.first) == phases.end()) {
        phases.push_back(entry.first);
      }
    }
  }
  phases.emplace_back("total");
  std::string rows;
  for (const BenchCell& cell : result.cells) {
    if (cell.setupMs.empty()) continue;
    rows += fmt::format("<tr><td>{}</td><td>{}</td>", escapeHtml(transferText(cell)), formatSize(cell.bytes));
    for (const std::string& phase : phases) {
      const auto found = cell.setupMs.find(phase);
      rows += found == cell.setupMs.end() ? "<td></td>" : fmt::format("<td class=\"num\">{:.3f}</td>", found->second);
    }
    rows += cell.failed() ? "<td class=\"failed\">" + valueText(result, cell) + "</td></tr>" : "<td>OK</td></tr>";
  }
  if (rows.empty()) return "";
  std::string out = "<h3>Cross-process setup (ms)</h3>\n<table><tr><th>transfer</th><th>size</th>";
  for (const std::string& phase : phases) out += "<th>" + escapeHtml(phase) + "</th>";
  return out + "<th>copy</th></tr>" + rows + "</table>\n";
}

std::string problemList(const BenchCaseResult& result) {
  std::string out;
  for (const BenchCell& cell : result.cells) {
    if (!cell.error.empty()) {
      out += fmt::format("<li><b>ERROR</b> {}, {}: {}</li>", escapeHtml(transferText(cell)), formatSize(cell.bytes),
                         escapeHtml(cell.error));
    } else if (cell.wrongBytes != 0) {
      out += fmt::format("<li><b>FAILED</b> {}, {}: {} wrong bytes after the copy</li>", escapeHtml(transferText(cell)),
                         formatSize(cell.bytes), cell.wrongBytes);
    }
  }
  return out.empty() ? out : "<ul class=\"problems\">" + out + "</ul>\n";
}

// A sweep's heat maps beyond this many start folded, all but the headline size's.
constexpr std::size_t kOpenHeatMaps = 6;

std::string caseChart(const BenchCaseResult& result, const CellsBySize& bySize) {
  SizeChart chart;
  chart.title = fmt::format("{}: {} vs message size", result.name, unit(result));
  chart.yLabel = yLabel(result.metric);
  const std::size_t cells = bySize.rbegin()->second.size();
  ChartSeries series = medianSeries(
      result, cells > 1 ? fmt::format("median of {}", cells) : transferText(*bySize.begin()->second.front()), true);
  series.bandLabel = "min to max";
  if (series.bytes.empty()) return "";
  chart.series.push_back(std::move(series));
  chart.logY = wantsLogY(result.metric, chart.series);
  return renderSizeChart(chart);
}

}  // namespace

bool isLatency(const BenchCaseResult& result) {
  return result.metric == BenchMetric::Latency;
}

const char* unit(const BenchCaseResult& result) {
  return isLatency(result) ? "µs" : "GB/s";
}

double valueOf(const BenchCaseResult& result, const BenchCell& cell) {
  return isLatency(result) ? cell.medianUs : cell.gbps;
}

std::string numberText(const BenchCaseResult& result, double value) {
  // As the text output writes them, but tiny values keep three significant digits instead of showing 0.0.
  if (value > 0 && value < 1) return shortNumber(value, 3);
  return isLatency(result) ? fmt::format("{:.2f}", value) : fmt::format("{:.1f}", value);
}

std::string valueText(const BenchCaseResult& result, const BenchCell& cell) {
  if (!cell.error.empty()) return "ERROR";
  if (cell.wrongBytes != 0) return "FAILED";
  return numberText(result, valueOf(result, cell));
}

bool hasModel(const BenchCell& cell) {
  return !cell.failed() && cell.expectedGBps > 0;
}

double efficiency(const BenchCell& cell) {
  return hasModel(cell) ? cell.gbps / cell.expectedGBps : 0;
}

bool isLow(const BenchCell& cell) {
  return hasModel(cell) && efficiency(cell) < kLowEfficiency;
}

std::string percent(double fraction) {
  return fmt::format("{:.0f}%", fraction * 100);
}

std::size_t headlineSize(const BenchCaseResult& result) {
  std::size_t bytes = 0;
  for (const BenchCell& cell : result.cells) {
    if (bytes == 0 || (isLatency(result) ? cell.bytes < bytes : cell.bytes > bytes)) bytes = cell.bytes;
  }
  return bytes;
}

CellsBySize cellsBySize(const BenchCaseResult& result) {
  CellsBySize bySize;
  for (const BenchCell& cell : result.cells) bySize[cell.bytes].push_back(&cell);
  return bySize;
}

Spread spread(std::vector<double> values) {
  Spread out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  out.count = static_cast<int>(n);
  out.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  out.min = values.front();
  out.max = values.back();
  return out;
}

Spread valueSpread(const BenchCaseResult& result, const std::vector<const BenchCell*>& cells) {
  std::vector<double> values;
  for (const BenchCell* cell : cells) {
    if (!cell->failed()) values.push_back(valueOf(result, *cell));
  }
  return spread(values);
}

ChartSeries medianSeries(const BenchCaseResult& result, const std::string& label, bool band) {
  ChartSeries series;
  series.label = label;
  bool spreads = false;
  for (const auto& [bytes, cells] : cellsBySize(result)) {
    const Spread values = valueSpread(result, cells);
    if (values.count == 0) continue;
    series.bytes.push_back(bytes);
    series.values.push_back(values.median);
    series.low.push_back(values.min);
    series.high.push_back(values.max);
    spreads = spreads || values.max > values.min;
  }
  if (!band || !spreads) {
    series.low.clear();
    series.high.clear();
  }
  return series;
}

bool wantsLogY(BenchMetric metric, const std::vector<ChartSeries>& series) {
  // Bandwidth reads best on a linear axis (where it saturates); latency spans decades over a sweep.
  if (metric == BenchMetric::Bandwidth) return false;
  double lo = 0, hi = 0;
  for (const ChartSeries& one : series) {
    for (double value : one.values) {
      if (value > 0 && (lo == 0 || value < lo)) lo = value;
      hi = std::max(hi, value);
    }
  }
  return lo > 0 && hi / lo > 30;
}

std::string yLabel(BenchMetric metric) {
  return metric == BenchMetric::Latency ? "latency, one way (µs)" : "bandwidth (GB/s)";
}

std::string caseSection(const Topology& topology, const BenchCaseResult& result) {
  std::string out = fmt::format("<section id=\"case-{0}\">\n<h2>{0}</h2>\n<p class=\"desc\">{1}</p>\n",
                                escapeHtml(result.name), escapeHtml(result.description));
  if (result.notApplicable) {
    return out + "<p class=\"na\">N/A: " + escapeHtml(*result.notApplicable) + "</p>\n</section>\n";
  }
  for (const auto& [name, value] : result.summary) {
    out += fmt::format("<p class=\"desc\">{}: {:.1f}</p>\n", escapeHtml(name), value);
  }
  const CellsBySize bySize = cellsBySize(result);
  if (bySize.empty()) return out + "<p class=\"na\">no cells were measured</p>\n</section>\n";
  const std::string chart = bySize.size() >= 2 ? caseChart(result, bySize) : "";
  if (isMatrixCase(result)) {
    std::map<std::size_t, std::string> maps = heatMaps(topology, result, bySize);
    if (maps.size() <= kOpenHeatMaps) {
      out += "<div class=\"maps\">";
      for (const auto& entry : maps) out += entry.second;
      out += chart + "</div>\n";
    } else {
      // Open: the headline size and every size with a failure; folded: the rest.
      std::set<std::size_t> open = {headlineSize(result)};
      for (const BenchCell& cell : result.cells) {
        if (cell.failed()) open.insert(cell.bytes);
      }
      out += "<div class=\"maps\">";
      for (std::size_t bytes : open) out += maps[bytes];
      out += chart + "</div>\n";
      out += fmt::format("<details><summary>Heat maps of the other {} sizes</summary><div class=\"maps\">",
                         maps.size() - open.size());
      for (const auto& entry : maps) out += open.count(entry.first) ? "" : entry.second;
      out += "</div></details>\n";
    }
    out += heatLegend(result, bySize.rbegin()->first);
  } else if (isRelayCase(result) && bySize.size() == 1) {
    out += relayTable(result, bySize.begin()->first, bySize.begin()->second) + chart;
  } else {
    out += "<div class=\"maps\">" + transferTable(result, bySize) + chart + "</div>\n";
  }
  out += problemList(result);
  out += setupTable(result);
  return out + "</section>\n";
}

}  // namespace peerlink::cli::report
