// SVG pieces of the HTML report: a GPU x GPU heat map and a value-vs-message-size line chart. Each is one
// <svg> element with its text escaped, no scripts and no external references, so it renders offline.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace peerlink::cli {

/// Text safe inside HTML/SVG elements and attribute values: & < > " ' as entities.
std::string escapeHtml(const std::string& text);

/// Axis ticks from 0 in steps of 1, 2 or 5 x 10^k: at most about `maxTicks` values, the last >= `max`.
std::vector<double> niceTicks(double max, int maxTicks);

/// A number for axis labels and cells: at most `digits` significant digits, no exponent below 1e9.
std::string shortNumber(double value, int digits = 3);

struct HeatCell {
  enum class Kind { Value, Failed, Missing, Self };
  Kind kind = Kind::Missing;
  double value = 0;      ///< colours a Value cell, relative to HeatMap::scaleMax
  std::string text;      ///< the main line: "393.4", "FAILED", "X"
  std::string note;      ///< a smaller second line, e.g. "82%"; may be empty
  bool flagged = false;  ///< drawn with the warning outline (below 80% of the link model)
  std::string tooltip;   ///< shown on hover (an SVG <title>)
};

struct HeatMap {
  std::string title;                         ///< first line above the grid (the size)
  std::string subtitle;                      ///< second line: direction and unit
  std::vector<std::string> labels;           ///< row and column labels: GPU0..n
  std::vector<std::vector<HeatCell>> cells;  ///< [row][column], labels.size() squared
  double scaleMax = 0;                       ///< the value drawn darkest
};

/// `<svg class="heatmap">`: labelled grid, Value cells shaded white..dark blue by value / scaleMax,
/// Failed cells red, Self grey, Missing pale.
std::string renderHeatMap(const HeatMap& map);

struct ChartSeries {
  std::string label;
  std::vector<std::size_t> bytes;  ///< x, ascending
  std::vector<double> values;      ///< the line
  std::vector<double> low, high;   ///< a shaded band around the line; empty for none
  std::string bandLabel;           ///< the band's legend entry, e.g. "min to max of 12 pairs"
};

struct SizeChart {
  std::string title;
  std::string yLabel;  ///< with the unit, e.g. "bandwidth (GB/s)"
  std::vector<ChartSeries> series;
  bool logY = false;  ///< decades on the y axis (for values spanning orders of magnitude)
};

/// `<svg class="chart">`: value vs message size on a log2 x axis labelled "8 B", "64 KiB", ...,
/// a labelled y axis with ticks, one coloured line per series and a legend.
std::string renderSizeChart(const SizeChart& chart);

}  // namespace peerlink::cli
