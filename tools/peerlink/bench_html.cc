#include "bench_html.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "bench_html_case.hpp"
#include "html_page.hpp"
#include "size_parse.hpp"
#include "svg_chart.hpp"

namespace peerlink::cli {
namespace {

using report::cellsBySize;
using report::CellsBySize;
using report::efficiency;
using report::hasModel;
using report::headlineSize;
using report::isLatency;
using report::medianSeries;
using report::numberText;
using report::percent;
using report::Spread;
using report::unit;
using report::valueSpread;
using report::wantsLogY;
using report::yLabel;

std::string versionText(int version) {
  return version > 0 ? fmt::format("{}.{}", version / 1000, (version % 1000) / 10) : "?";
}

std::string metadataSection(const Topology& topology, const nlohmann::json& generatedBy) {
  std::map<std::string, int> models;
  for (const Gpu& gpu : topology.gpus) ++models[gpu.name.empty() ? "?" : gpu.name];
  std::string gpus;
  for (const auto& [name, count] : models) gpus += (gpus.empty() ? "" : ", ") + fmt::format("{} × {}", count, name);
  MetaRows rows = runMetaRows(generatedBy);
  rows.emplace_back("GPUs", gpus.empty() ? "none" : gpus);
  rows.emplace_back(
      "driver",
      fmt::format("{} (CUDA driver {}, runtime {})", topology.driverVersion.empty() ? "?" : topology.driverVersion,
                  versionText(topology.cudaDriverVersion), versionText(topology.cudaRuntimeVersion)));
  return metaTable(rows);
}

std::string topologySection(const Topology& topology) {
  std::string out =
      "<h2 id=\"topology\">Topology</h2>\n<table><tr><th>GPU</th><th>name</th><th>PCI bus id</th>"
      "<th>NUMA</th><th>CPU affinity</th><th>NVLink</th><th>PCIe</th></tr>";
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    const Gpu& gpu = topology.gpus[i];
    const std::string nvlink =
        gpu.nvlink.activeLinks > 0 ? fmt::format("{} × v{}", gpu.nvlink.activeLinks, gpu.nvlink.version) : "-";
    const std::string pcie = gpu.pcie.gen > 0 ? fmt::format("Gen{} x{}", gpu.pcie.gen, gpu.pcie.width) : "?";
    out += fmt::format(
        "<tr><td>GPU{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", i,
        escapeHtml(gpu.name), escapeHtml(gpu.pciBusId), gpu.numaNode, escapeHtml(gpu.cpuAffinity), nvlink, pcie);
  }
  out += "</table>\n<h3>Links GPU(row) -&gt; GPU(column)</h3>\n<table><tr><th></th>";
  const int n = static_cast<int>(topology.gpus.size());
  for (int column = 0; column < n; ++column) out += fmt::format("<th>GPU{}</th>", column);
  out += "</tr>";
  for (int row = 0; row < n; ++row) {
    out += fmt::format("<tr><th>GPU{}</th>", row);
    for (int column = 0; column < n; ++column) {
      if (row == column) {
        out += "<td class=\"na\">X</td>";
        continue;
      }
      const GpuPair& pair = topology.pair(row, column);
      out += "<td>" + escapeHtml(linkLabel(pair));
      out += pair.expectedGBps > 0 ? fmt::format(" <span class=\"eff\">{:.1f} GB/s</span>", pair.expectedGBps) : "";
      out += pair.canAccessPeer ? "" : " <span class=\"eff\">no P2P</span>";
      out += "</td>";
    }
    out += "</tr>";
  }
  out +=
      "</table>\n<p class=\"legend\">NV# = # NVLinks (directly or through NVSwitch), otherwise the PCIe path "
      "class; GB/s = the link model's figure per direction, which the efficiency percentages below compare "
      "against.</p>\n";
  std::vector<std::string> notes = topology.notes;
  for (const std::string& warning : orderingWarnings(topology)) notes.push_back("warning: " + warning);
  if (!notes.empty()) {
    out += "<ul>";
    for (const std::string& note : notes) out += "<li>" + escapeHtml(note) + "</li>";
    out += "</ul>\n";
  }
  return out;
}

std::string summarySection(const std::vector<BenchCaseResult>& results) {
  std::string out =
      "<h2 id=\"summary\">Summary</h2>\n<table><tr><th>test case</th><th>metric</th><th>sizes</th><th>result</th>"
      "<th>vs link model</th><th>status</th></tr>";
  for (const BenchCaseResult& result : results) {
    out += fmt::format("<tr><td><a href=\"#case-{0}\">{0}</a></td><td>{1}</td>", escapeHtml(result.name),
                       isLatency(result) ? "latency" : "bandwidth");
    if (result.notApplicable) {
      out += "<td></td><td></td><td></td><td class=\"na\">N/A: " + escapeHtml(*result.notApplicable) + "</td></tr>";
      continue;
    }
    const CellsBySize bySize = cellsBySize(result);
    if (bySize.empty()) {
      out += "<td></td><td></td><td></td><td class=\"na\">no cells</td></tr>";
      continue;
    }
    const std::size_t bytes = headlineSize(result);
    const std::vector<const BenchCell*>& cells = bySize.at(bytes);
    const std::string sizes = bySize.size() == 1
                                  ? formatSize(bytes)
                                  : formatSize(bySize.begin()->first) + " – " + formatSize(bySize.rbegin()->first);
    const Spread values = valueSpread(result, cells);
    std::string text = "-";
    if (values.count > 0) {
      text = fmt::format("{} {} at {}", numberText(result, values.median), unit(result), formatSize(bytes));
      if (values.count > 1) {
        text += fmt::format(" (median of {}; {} to {})", values.count, numberText(result, values.min),
                            numberText(result, values.max));
      }
    }
    std::vector<double> fractions;
    for (const BenchCell* cell : cells) {
      if (hasModel(*cell)) fractions.push_back(efficiency(*cell));
    }
    const Spread model = report::spread(fractions);
    const std::string modelCell = model.count == 0
                                      ? "<td></td>"
                                      : fmt::format("<td class=\"num{}\">{}</td>",
                                                    model.median < kLowEfficiency ? " low" : "", percent(model.median));
    int failed = 0;
    for (const BenchCell& cell : result.cells) failed += cell.failed() ? 1 : 0;
    const std::string status =
        failed == 0 ? "<td>OK</td>"
                    : fmt::format("<td class=\"failed\">{} of {} cells FAILED</td>", failed, result.cells.size());
    out += fmt::format("<td>{}</td><td>{}</td>{}{}</tr>", sizes, escapeHtml(text), modelCell, status);
  }
  return out + "</table>\n";
}

std::string overviewCharts(const std::vector<BenchCaseResult>& results) {
  std::string out;
  for (BenchMetric metric : {BenchMetric::Bandwidth, BenchMetric::Latency}) {
    SizeChart chart;
    chart.title = metric == BenchMetric::Latency ? "Latency vs message size (median over pairs)"
                                                 : "Bandwidth vs message size (median over pairs)";
    chart.yLabel = yLabel(metric);
    for (const BenchCaseResult& result : results) {
      if (result.metric != metric || result.notApplicable || cellsBySize(result).size() < 2) continue;
      ChartSeries series = medianSeries(result, result.name, false);
      if (series.bytes.size() >= 2) chart.series.push_back(std::move(series));
    }
    if (chart.series.empty()) continue;
    chart.logY = wantsLogY(metric, chart.series);
    out += renderSizeChart(chart) + "\n";
  }
  return out.empty() ? out : "<h2 id=\"charts\">Cases compared</h2>\n<div class=\"maps\">" + out + "</div>\n";
}

}  // namespace

std::string benchToHtml(const Topology& topology, const std::vector<BenchCaseResult>& results,
                        const nlohmann::json& generatedBy) {
  const std::string host = metaText(generatedBy, "host") != "?" ? metaText(generatedBy, "host") : topology.host;
  std::string out = htmlPageStart("peerlink bench: " + host + " " + metaText(generatedBy, "date"));
  out += fmt::format("<h1>peerlink bench on {}</h1>\n", escapeHtml(host));
  out += metadataSection(topology, generatedBy);
  out += topologySection(topology);
  out += summarySection(results);
  out += overviewCharts(results);
  for (const BenchCaseResult& result : results) out += report::caseSection(topology, result);
  return out + htmlPageEnd(generatedBy);
}

}  // namespace peerlink::cli
