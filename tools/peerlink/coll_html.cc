// The HTML report of a `peerlink coll` run (coll_html.hpp).
#include "coll_html.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll_format.hpp"
#include "coll_json_read.hpp"
#include "html_page.hpp"
#include "size_parse.hpp"
#include "svg_chart.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;
using coll::CollRow;
using coll::CollRun;
using coll::Placement;

std::size_t index(CollConfig config) {
  return static_cast<std::size_t>(config);
}

// Where a run's sections sit in the page: alone, its sections are <h2> with plain ids; one of several, they
// are <h3> (the run's own heading is the <h2>) with ids prefixed by the run's.
struct Level {
  std::string idPrefix;
  const char* section = "h2";
  const char* subsection = "h3";

  std::string heading(const char* tag, const std::string& id, const std::string& text,
                      const char* cssClass = nullptr) const {
    const std::string idAttribute = id.empty() ? "" : fmt::format(" id=\"{}{}\"", idPrefix, id);
    const std::string classAttribute = cssClass == nullptr ? "" : fmt::format(" class=\"{}\"", cssClass);
    return fmt::format("<{0}{1}{2}>{3}</{0}>\n", tag, idAttribute, classAttribute, escapeHtml(text));
  }
};

const char* configLabel(CollConfig config) {
  switch (config) {
    case CollConfig::Peerlink: return "peerlink eager";
    case CollConfig::PeerlinkGraph: return "peerlink graph";
    case CollConfig::Nccl: return "NCCL";
    case CollConfig::NcclGraph: return "NCCL graph";
    case CollConfig::NcclSymmetric: return "NCCL symmetric + graph";
  }
  return "?";
}

// The best NCCL configuration's column: which of NCCL's three it was.
const char* ncclShortLabel(CollConfig config) {
  switch (config) {
    case CollConfig::Nccl: return "plain";
    case CollConfig::NcclGraph: return "graph";
    case CollConfig::NcclSymmetric: return "symmetric";
    default: return configLabel(config);
  }
}

const char* placementLabel(Placement placement) {
  return placement == Placement::InPlace ? "in place" : "out of place";
}

std::vector<Placement> placementsOf(const CollRun& run) {
  if (coll::hasInPlace(run.options.collective)) return {Placement::OutOfPlace, Placement::InPlace};
  return {Placement::OutOfPlace};
}

std::vector<CollConfig> availableConfigs(const CollRun& run) {
  std::vector<CollConfig> configs;
  for (CollConfig config : coll::kCollConfigs) {
    if (run.configs[index(config)].available) configs.push_back(config);
  }
  return configs;
}

// "ring (ce_ring_all_reduce)" of describeChoice's "ring (ce_ring_all_reduce): 128 MiB per rank ...".
std::string choiceHead(const std::string& choice) {
  return choice.substr(0, choice.find(':'));
}

std::string runTitle(const CollRun& run) {
  const coll::CollBenchOptions& o = run.options;
  std::string what = ncclTestsTypeName(o.type);
  if (reduces(o.collective)) what += std::string(" ") + reduceOpName(o.op);
  if (o.collective == Collective::Broadcast || o.collective == Collective::Reduce) {
    what += fmt::format(", root {}", o.root);
  }
  return fmt::format("peerlink coll: {} ({}), {} GPUs", collectiveName(o.collective), what, run.ranks);
}

std::string metadataSection(const CollRun& run, const nlohmann::json& generatedBy) {
  MetaRows rows = runMetaRows(generatedBy);
  std::vector<std::string> gpus;
  for (std::size_t rank = 0; rank < run.devices.size(); ++rank) {
    gpus.push_back(fmt::format("rank {}: GPU {} {} [{}]", rank, run.devices[rank],
                               rank < run.deviceNames.size() ? run.deviceNames[rank] : "?",
                               rank < run.deviceBusIds.size() ? run.deviceBusIds[rank] : "?"));
  }
  rows.emplace_back("GPUs", gpus.empty() ? "none" : fmt::format("{}", fmt::join(gpus, "; ")));
  rows.emplace_back("NCCL", run.nccl.loaded ? fmt::format("{} ({})", run.nccl.version, run.nccl.path)
                                            : fmt::format("not loaded ({})", run.nccl.reason));
  if (!run.nccl.nvls.empty()) rows.emplace_back("NVLink SHARP", run.nccl.nvls);
  std::vector<std::string> creation;
  if (run.creationMilliseconds > 0) creation.push_back(fmt::format("peerlink {:.1f} ms", run.creationMilliseconds));
  if (run.nccl.initMilliseconds > 0) {
    creation.push_back(fmt::format("{} {:.1f} ms", coll::ncclCreationCall(run.processes), run.nccl.initMilliseconds));
  }
  if (!creation.empty()) {
    rows.emplace_back("communicators created in",
                      fmt::format("{} (the GPUs' contexts existed before)", fmt::join(creation, ", ")));
  }
  const coll::CollBenchOptions& o = run.options;
  rows.emplace_back(
      "measured",
      fmt::format("{} timed iterations after {} warm-up per size and configuration; {}; graphs captured {}",
                  o.iterations, o.warmup,
                  o.check ? "every configuration's result checked on the host" : "results not checked (-c 0)",
                  o.capture == coll::GraphCapture::Joined ? "joined (one graph for all ranks)"
                                                          : "per rank (one graph per GPU)"));
  return metaTable(rows);
}

ChartSeries ratioSeries(const CollRun& run, Placement placement, CollConfig config) {
  ChartSeries series;
  series.label =
      fmt::format("{}, {}", config == CollConfig::PeerlinkGraph ? "graph" : "eager", placementLabel(placement));
  for (const CollRow& row : run.rows) {
    if (row.bytes == 0) continue;  // nccl-tests' all-gather rounds 8 B on 4 ranks down to 0: no point on a log axis
    if (const std::optional<double> ratio = coll::ratioToBestNccl(row, placement, config)) {
      series.bytes.push_back(row.bytes);
      series.values.push_back(*ratio);
    }
  }
  return series;
}

// The line at 1 that the ratios are read against.
ChartSeries parity(std::size_t fromBytes, std::size_t toBytes) {
  ChartSeries line;
  line.label = "NCCL's best (1)";
  line.bytes = {fromBytes, toBytes};
  line.values = {1.0, 1.0};
  return line;
}

// "8 B (0.751), 16 B (0.752)" for the points of `series` below 1; "none" without any.
std::string sizesBelowOne(const ChartSeries& series) {
  std::vector<std::string> below;
  for (std::size_t i = 0; i < series.values.size(); ++i) {
    if (series.values[i] < 1.0) {
      below.push_back(fmt::format("{} ({:.3f})", formatSize(series.bytes[i]), series.values[i]));
    }
  }
  return below.empty() ? "none" : fmt::format("{}", fmt::join(below, ", "));
}

// A table cell with the series' lowest to highest ratio, marked behind where the lowest is under 1.
std::string ratioRangeCell(const ChartSeries& series) {
  const auto [low, high] = std::minmax_element(series.values.begin(), series.values.end());
  return fmt::format("<td class=\"num {}\">{:.2f} – {:.2f}</td>", *low < 1.0 ? "behind" : "ahead", *low, *high);
}

// The ratio chart and a line per series: its range and the sizes below 1.
std::string againstNcclSection(const CollRun& run, const Level& level) {
  SizeChart chart;
  chart.title = "Best NCCL configuration's time / peerlink's time (above 1: peerlink faster)";
  chart.yLabel = "ratio";
  std::string table =
      "<table><tr><th>peerlink</th><th>sizes</th><th>ratio, lowest to highest</th><th>sizes below 1</th></tr>";
  bool compared = false;
  for (Placement placement : placementsOf(run)) {
    for (CollConfig config : {CollConfig::PeerlinkGraph, CollConfig::Peerlink}) {
      ChartSeries series = ratioSeries(run, placement, config);
      if (series.values.empty()) continue;
      compared = true;
      table += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td>{}<td>{}</td></tr>", escapeHtml(series.label),
                           series.values.size(), ratioRangeCell(series), escapeHtml(sizesBelowOne(series)));
      if (series.values.size() >= 2) chart.series.push_back(std::move(series));
    }
  }
  if (!compared) return "";
  if (!chart.series.empty()) {  // the line peerlink is measured against
    std::size_t smallest = chart.series.front().bytes.front();
    std::size_t largest = chart.series.front().bytes.back();
    for (const ChartSeries& series : chart.series) {
      smallest = std::min(smallest, series.bytes.front());
      largest = std::max(largest, series.bytes.back());
    }
    chart.series.push_back(parity(smallest, largest));
  }
  std::string out = level.heading(level.section, "against-nccl", "Against NCCL's best configuration");
  out +=
      "<p class=\"desc\">At each size and placement, the fastest of the NCCL configurations that ran (plain, "
      "graph, symmetric window + graph), its time divided by peerlink's.</p>\n";
  if (!chart.series.empty()) out += "<div class=\"maps\">" + renderSizeChart(chart) + "</div>\n";
  return out + table + "</table>\n";
}

// Time and busbw per configuration, out of place.
std::string configurationCharts(const CollRun& run, const Level& level) {
  std::string out;
  for (const bool time : {true, false}) {
    SizeChart chart;
    chart.title = time ? "Time per call vs size, out of place" : "Bus bandwidth vs size, out of place";
    chart.yLabel = time ? "time (µs)" : "busbw (GB/s)";
    chart.logY = true;
    for (CollConfig config : availableConfigs(run)) {
      ChartSeries series;
      series.label = configLabel(config);
      for (const CollRow& row : run.rows) {
        const CollMeasurement& m = row.outOfPlace[index(config)];
        const double value = time ? m.timeUs : m.busbwGBps;
        if (row.bytes == 0 || !m.ok() || m.failed() || value <= 0) continue;
        series.bytes.push_back(row.bytes);
        series.values.push_back(value);
      }
      if (series.values.size() >= 2) chart.series.push_back(std::move(series));
    }
    if (!chart.series.empty()) out += renderSizeChart(chart) + "\n";
  }
  if (out.empty()) return out;
  return level.heading(level.section, "charts", "Configurations") + "<div class=\"maps\">" + out + "</div>\n";
}

std::string measurementCells(const CollMeasurement& m) {
  if (m.status == CollMeasurement::Status::NotRun) {
    return fmt::format("<td class=\"na\" colspan=\"2\" title=\"{}\">not run</td>", escapeHtml(m.reason));
  }
  if (m.status == CollMeasurement::Status::Failed) {
    return fmt::format("<td class=\"failed\" colspan=\"2\" title=\"{0}\">FAILED: {0}</td>", escapeHtml(m.reason));
  }
  const std::string busbw = m.wrong > 0 ? fmt::format("<td class=\"failed\">{} wrong</td>", m.wrong)
                                        : fmt::format("<td class=\"num\">{:.2f}</td>", m.busbwGBps);
  return fmt::format("<td class=\"num\">{:.2f}</td>{}", m.timeUs, busbw);
}

std::string ratioCell(const std::optional<double>& ratio) {
  if (!ratio) return "<td></td>";
  return fmt::format("<td class=\"num {}\">{:.2f}</td>", *ratio < 1.0 ? "behind" : "ahead", *ratio);
}

std::string placementTable(const CollRun& run, Placement placement, const Level& level) {
  const std::vector<CollConfig> configs = availableConfigs(run);
  const bool peerlinkRan = run.configs[index(CollConfig::Peerlink)].available;
  const bool compared = peerlinkRan && std::any_of(configs.begin(), configs.end(), coll::isNcclConfig);
  std::string out = level.heading(level.section, placement == Placement::InPlace ? "in-place" : "out-of-place",
                                  std::string("Every measurement, ") + placementLabel(placement));
  out += "<table><tr><th rowspan=\"2\">size</th><th rowspan=\"2\">count</th>";
  for (CollConfig config : configs) out += fmt::format("<th colspan=\"2\">{}</th>", configLabel(config));
  if (compared) out += "<th rowspan=\"2\">best NCCL</th><th colspan=\"2\">best NCCL / peerlink</th>";
  if (peerlinkRan) out += "<th rowspan=\"2\">peerlink's choice</th>";
  out += "</tr><tr>";
  for (std::size_t i = 0; i < configs.size(); ++i) out += "<th>µs</th><th>busbw GB/s</th>";
  if (compared) out += "<th>graph</th><th>eager</th>";
  out += "</tr>\n";
  for (const CollRow& row : run.rows) {
    out += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td>", formatSize(row.bytes), row.count);
    for (CollConfig config : configs) out += measurementCells(row.at(placement)[index(config)]);
    if (compared) {
      const std::optional<CollConfig> best = coll::bestNccl(row, placement);
      out += "<td>" + std::string(best ? ncclShortLabel(*best) : "") + "</td>";
      out += ratioCell(coll::ratioToBestNccl(row, placement, CollConfig::PeerlinkGraph));
      out += ratioCell(coll::ratioToBestNccl(row, placement, CollConfig::Peerlink));
    }
    if (peerlinkRan) {
      out += fmt::format("<td title=\"{}\">{}</td>", escapeHtml(row.peerlinkChoice),
                         escapeHtml(choiceHead(row.peerlinkChoice)));
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string problemsSection(const CollRun& run, const Level& level) {
  std::string out;
  std::vector<std::string> notRun;
  for (CollConfig config : coll::kCollConfigs) {
    const coll::CollConfigStatus& status = run.configs[index(config)];
    if (!status.available) notRun.push_back(fmt::format("{}: {}", configLabel(config), status.reason));
  }
  if (!notRun.empty()) {
    out += level.heading(level.subsection, "", "Configurations not run") + "<ul>";
    for (const std::string& line : notRun) out += "<li>" + escapeHtml(line) + "</li>";
    out += "</ul>\n";
  }
  std::vector<std::string> failures;
  for (const CollRow& row : run.rows) {
    for (Placement placement : placementsOf(run)) {
      for (CollConfig config : coll::kCollConfigs) {
        const CollMeasurement& m = row.at(placement)[index(config)];
        if (!m.failed()) continue;
        const std::string what = m.wrong > 0 ? fmt::format("{} elements wrong", m.wrong) : m.reason;
        failures.push_back(
            fmt::format("{}, {}, {}: {}", formatSize(row.bytes), placementLabel(placement), configLabel(config), what));
      }
    }
  }
  if (!failures.empty()) {
    out += level.heading(level.subsection, "", fmt::format("{} measurement(s) FAILED", failures.size()), "failed");
    out += "<ul class=\"problems\">";
    for (const std::string& line : failures) out += "<li>" + escapeHtml(line) + "</li>";
    out += "</ul>\n";
  }
  return out;
}

// One run's page body below its heading.
std::string runSections(const SavedColl& saved, const Level& level) {
  const CollRun& run = saved.run;
  std::string out = metadataSection(run, saved.generatedBy);
  out += problemsSection(run, level);
  out += againstNcclSection(run, level);
  out += configurationCharts(run, level);
  for (Placement placement : placementsOf(run)) out += placementTable(run, placement, level);
  return out;
}

// Several runs: one line each (linked to its section) with peerlink's graph against NCCL's best out of
// place, and those ratios in one chart.
std::string runsSummary(const std::vector<SavedColl>& runs) {
  SizeChart chart;
  chart.title = "Best NCCL configuration's time / peerlink's graph time, out of place";
  chart.yLabel = "ratio";
  std::string table =
      "<table><tr><th>run</th><th>date (UTC)</th><th>git commit</th><th>sizes</th><th>best NCCL / peerlink "
      "graph, lowest to highest</th><th>sizes below 1</th></tr>";
  std::size_t smallest = 0;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const CollRun& run = runs[i].run;
    ChartSeries series = ratioSeries(run, Placement::OutOfPlace, CollConfig::PeerlinkGraph);
    series.label = fmt::format("{} ({})", collectiveName(run.options.collective), i + 1);
    const std::string sizes =
        run.rows.empty() ? "" : formatSize(run.rows.front().bytes) + " – " + formatSize(run.rows.back().bytes);
    std::string ratios = "<td></td><td class=\"na\">NCCL or peerlink not measured</td>";
    if (!series.values.empty()) {
      ratios = ratioRangeCell(series) + "<td>" + escapeHtml(sizesBelowOne(series)) + "</td>";
      smallest = smallest == 0 ? series.bytes.front() : std::min(smallest, series.bytes.front());
      largest = std::max(largest, series.bytes.back());
    }
    table += fmt::format("<tr><td><a href=\"#r{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td>{}</tr>\n", i + 1,
                         escapeHtml(runTitle(run)), escapeHtml(metaText(runs[i].generatedBy, "date")),
                         escapeHtml(metaText(runs[i].generatedBy, "git_commit")), sizes, ratios);
    if (series.values.size() >= 2) chart.series.push_back(std::move(series));
  }
  std::string out = "<h2 id=\"summary\">Summary</h2>\n";
  if (!chart.series.empty()) {
    chart.series.push_back(parity(smallest, largest));
    out += "<div class=\"maps\">" + renderSizeChart(chart) + "</div>\n";
  }
  return out + table + "</table>\n";
}

}  // namespace

std::string collToHtml(const CollRun& run, const nlohmann::json& generatedBy) {
  return collRunsToHtml({SavedColl{run, generatedBy}});
}

std::string collRunsToHtml(const std::vector<SavedColl>& runs) {
  if (runs.size() == 1) {
    const SavedColl& only = runs.front();
    const std::string title = runTitle(only.run);
    std::string out = htmlPageStart(title + " " + metaText(only.generatedBy, "date"));
    out += "<h1>" + escapeHtml(title) + "</h1>\n";
    return out + runSections(only, Level{}) + htmlPageEnd(only.generatedBy);
  }
  const std::string title = fmt::format("peerlink coll: {} runs", runs.size());
  std::string out = htmlPageStart(title) + "<h1>" + escapeHtml(title) + "</h1>\n" + runsSummary(runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out += fmt::format("<h2 id=\"r{}\">{}</h2>\n", i + 1, escapeHtml(runTitle(runs[i].run)));
    out += runSections(runs[i], Level{fmt::format("r{}-", i + 1), "h3", "h4"});
  }
  return out + htmlPageEnd(runs.empty() ? nlohmann::json::object() : runs.front().generatedBy);
}

}  // namespace peerlink::cli
