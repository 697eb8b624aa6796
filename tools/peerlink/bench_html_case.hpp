// The HTML report's section for one test case (heat maps, tables, size chart, failures, setup costs),
// and the helpers the report's summary shares with it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "bench_html.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/topology.hpp"
#include "svg_chart.hpp"

namespace peerlink::cli::report {

using CellsBySize = std::map<std::size_t, std::vector<const BenchCell*>>;

bool isLatency(const BenchCaseResult& result);
/// "GB/s" or "µs".
const char* unit(const BenchCaseResult& result);
/// The value a cell is shown by: median latency in µs, or GB/s at the median time.
double valueOf(const BenchCaseResult& result, const BenchCell& cell);
/// As the text output writes values: "393.4" GB/s, "2.45" µs.
std::string numberText(const BenchCaseResult& result, double value);
/// numberText of the cell's value, or "ERROR" / "FAILED".
std::string valueText(const BenchCaseResult& result, const BenchCell& cell);
/// The cell was measured and the link model has a figure for it.
bool hasModel(const BenchCell& cell);
/// Measured over the link model's figure; 0 without hasModel.
double efficiency(const BenchCell& cell);
bool isLow(const BenchCell& cell);
std::string percent(double fraction);
CellsBySize cellsBySize(const BenchCaseResult& result);
/// The size a case is summed up by: the smallest for latency, the largest for bandwidth; 0 without cells.
std::size_t headlineSize(const BenchCaseResult& result);

struct Spread {
  int count = 0;
  double median = 0, min = 0, max = 0;
};
Spread spread(std::vector<double> values);
/// Over the cells that did not fail.
Spread valueSpread(const BenchCaseResult& result, const std::vector<const BenchCell*>& cells);

/// The median over a case's cells at each size, with the min-max band when `band` is set.
ChartSeries medianSeries(const BenchCaseResult& result, const std::string& label, bool band);
/// Whether a chart gets a log y axis: latency values spanning orders of magnitude.
bool wantsLogY(BenchMetric metric, const std::vector<ChartSeries>& series);
std::string yLabel(BenchMetric metric);

/// `<section id="case-NAME">`: name, description, then N/A with the reason, or the cells.
std::string caseSection(const Topology& topology, const BenchCaseResult& result);

}  // namespace peerlink::cli::report
