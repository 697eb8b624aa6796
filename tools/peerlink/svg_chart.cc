#include "svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "size_parse.hpp"

namespace peerlink::cli {
namespace {

constexpr const char* kSvgRoot =
    "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
    "font-size=\"12\"";
constexpr const char* kFailedFill = "#d62728";
constexpr const char* kFlagStroke = "#ff7f0e";
// Tableau 10: distinguishable, and readable on white.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

struct Rgb {
  double r, g, b;
};

// White to dark blue through a mid blue ("Blues"), so equal cells look equal and a slow pair stands out.
std::string rampColor(double t) {
  static const Rgb stops[] = {{247, 251, 255}, {107, 174, 214}, {8, 48, 107}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const int segment = t < 0.5 ? 0 : 1;
  const double u = (t - 0.5 * segment) / 0.5;
  const Rgb& a = stops[segment];
  const Rgb& b = stops[segment + 1];
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(a.r + (b.r - a.r) * u)),
                     static_cast<int>(std::lround(a.g + (b.g - a.g) * u)),
                     static_cast<int>(std::lround(a.b + (b.b - a.b) * u)));
}

std::string textElement(double x, double y, const std::string& text, const std::string& attributes = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>", x, y, attributes.empty() ? "" : " ", attributes,
                     escapeHtml(text));
}

std::string heatCell(const HeatCell& cell, double x, double y, double w, double h, double scaleMax) {
  std::string fill = "#fafafa";
  std::string ink = "#333333";
  if (cell.kind == HeatCell::Kind::Value) {
    const double t = scaleMax > 0 ? cell.value / scaleMax : 0;
    fill = rampColor(t);
    ink = t > 0.55 ? "#ffffff" : "#111111";
  } else if (cell.kind == HeatCell::Kind::Failed) {
    fill = kFailedFill;
    ink = "#ffffff";
  } else if (cell.kind == HeatCell::Kind::Self) {
    fill = "#e4e4e4";
    ink = "#777777";
  }
  std::string out = "<g>";
  if (!cell.tooltip.empty()) out += "<title>" + escapeHtml(cell.tooltip) + "</title>";
  out +=
      fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#ffffff\"/>",
                  x, y, w, h, fill);
  if (cell.flagged) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"3\"/>",
        x + 2.5, y + 2.5, w - 5, h - 5, kFlagStroke);
  }
  const std::string weight = cell.kind == HeatCell::Kind::Failed ? " font-weight=\"bold\"" : "";
  const double textY = cell.note.empty() ? y + h / 2 + 4 : y + h / 2 - 1;
  out += textElement(x + w / 2, textY, cell.text, fmt::format("text-anchor=\"middle\" fill=\"{}\"{}", ink, weight));
  if (!cell.note.empty()) {
    out += textElement(x + w / 2, y + h / 2 + 13, cell.note,
                       fmt::format("text-anchor=\"middle\" font-size=\"10\" fill=\"{}\"{}", ink,
                                   cell.flagged ? " font-weight=\"bold\"" : ""));
  }
  return out + "</g>";
}

// Where the x axis is labelled: every measured size when there are few, else every k-th power of two.
std::vector<double> sizeTicks(const std::vector<std::size_t>& sizes, double lo, double hi) {
  std::vector<double> ticks;
  if (sizes.size() <= 8) {
    for (std::size_t bytes : sizes) ticks.push_back(static_cast<double>(bytes));
    return ticks;
  }
  const int first = static_cast<int>(std::ceil(lo - 1e-9));
  const int last = static_cast<int>(std::floor(hi + 1e-9));
  const int step = std::max(1, (last - first + 7) / 8);
  for (int k = first; k <= last; k += step) ticks.push_back(std::ldexp(1.0, k));
  return ticks;
}

std::vector<double> logTicks(double minValue, double maxValue) {
  const int first = static_cast<int>(std::floor(std::log10(minValue)));
  int last = static_cast<int>(std::ceil(std::log10(maxValue)));
  if (last == first) ++last;
  std::vector<double> ticks;
  for (int k = first; k <= last; ++k) {
    const double decade = std::pow(10.0, k);
    ticks.push_back(decade);
    if (last - first <= 2 && k < last) {
      ticks.push_back(2 * decade);
      ticks.push_back(5 * decade);
    }
  }
  return ticks;
}

}  // namespace

std::string escapeHtml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> niceTicks(double max, int maxTicks) {
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  maxTicks = std::max(maxTicks, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(max / maxTicks)));
  double step = 10 * magnitude;
  for (double multiple : {1.0, 2.0, 5.0}) {
    if (max / (multiple * magnitude) <= maxTicks) {
      step = multiple * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    ticks.push_back(i * step);
    if (i * step >= max * (1 - 1e-9)) break;
  }
  return ticks;
}

std::string shortNumber(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

std::string renderHeatMap(const HeatMap& map) {
  constexpr double kLabelWidth = 54, kCellWidth = 68, kCellHeight = 42, kTitleHeight = 42, kHeaderHeight = 22;
  const int n = static_cast<int>(map.labels.size());
  const double width = std::max(kLabelWidth + n * kCellWidth + 6, 300.0);
  const double height = kTitleHeight + kHeaderHeight + n * kCellHeight + 6;
  std::string out = fmt::format(
      "<svg class=\"heatmap\" {} width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "role=\"img\" aria-label=\"{}\">",
      kSvgRoot, width, height, width, height, escapeHtml(map.title + ", " + map.subtitle));
  out += textElement(2, 15, map.title, "font-size=\"14\" font-weight=\"bold\"");
  out += textElement(2, 33, map.subtitle, "fill=\"#444444\"");
  for (int column = 0; column < n; ++column) {
    out += textElement(kLabelWidth + (column + 0.5) * kCellWidth, kTitleHeight + 15,
                       map.labels[static_cast<std::size_t>(column)], "text-anchor=\"middle\" font-weight=\"bold\"");
  }
  for (int row = 0; row < n; ++row) {
    const double y = kTitleHeight + kHeaderHeight + row * kCellHeight;
    out += textElement(kLabelWidth - 8, y + kCellHeight / 2 + 4, map.labels[static_cast<std::size_t>(row)],
                       "text-anchor=\"end\" font-weight=\"bold\"");
    for (int column = 0; column < n; ++column) {
      const std::size_t r = static_cast<std::size_t>(row);
      const std::size_t c = static_cast<std::size_t>(column);
      const HeatCell missing{};
      const HeatCell& cell = r < map.cells.size() && c < map.cells[r].size() ? map.cells[r][c] : missing;
      out += heatCell(cell, kLabelWidth + column * kCellWidth, y, kCellWidth, kCellHeight, map.scaleMax);
    }
  }
  return out + "</svg>";
}

std::string renderSizeChart(const SizeChart& chart) {
  constexpr double kWidth = 780, kHeight = 360, kLeft = 74, kRight = 200, kTop = 40, kBottom = 58;
  const double plotWidth = kWidth - kLeft - kRight;
  const double plotHeight = kHeight - kTop - kBottom;
  std::vector<std::size_t> sizes;
  double minValue = std::numeric_limits<double>::infinity();
  double maxValue = 0;
  for (const ChartSeries& series : chart.series) {
    sizes.insert(sizes.end(), series.bytes.begin(), series.bytes.end());
    for (const std::vector<double>* values : {&series.values, &series.low, &series.high}) {
      for (double value : *values) {
        if (value > 0) minValue = std::min(minValue, value);
        maxValue = std::max(maxValue, value);
      }
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  double lo = sizes.empty() ? 0 : std::log2(static_cast<double>(std::max<std::size_t>(sizes.front(), 1)));
  double hi = sizes.empty() ? 1 : std::log2(static_cast<double>(std::max<std::size_t>(sizes.back(), 1)));
  if (hi - lo < 1e-9) {
    lo -= 1;
    hi += 1;
  }
  const bool logY = chart.logY && maxValue > 0 && std::isfinite(minValue);
  const std::vector<double> yTicks = logY ? logTicks(minValue, maxValue) : niceTicks(maxValue, 6);
  const double yLo = logY ? std::log10(yTicks.front()) : 0;
  const double yHi = logY ? std::log10(yTicks.back()) : yTicks.back();
  // A size of 0 (a series may carry one) sits on the axis's left end, as 1 byte would, not at log2(0).
  auto xOf = [&](double bytes) { return kLeft + plotWidth * (std::log2(std::max(bytes, 1.0)) - lo) / (hi - lo); };
  auto yOf = [&](double value) {
    const double v = logY ? std::log10(std::max(value, yTicks.front())) : value;
    return kTop + plotHeight * (1 - (v - yLo) / (yHi - yLo));
  };

  std::string out = fmt::format(
      "<svg class=\"chart\" {} width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "role=\"img\" aria-label=\"{}\">",
      kSvgRoot, kWidth, kHeight, kWidth, kHeight, escapeHtml(chart.title));
  out += textElement(kLeft, 20, chart.title, "font-size=\"14\" font-weight=\"bold\"");
  for (double tick : yTicks) {
    const double y = yOf(tick);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e6e6e6\"/>", kLeft, y,
                       kLeft + plotWidth, y);
    out += textElement(kLeft - 6, y + 4, shortNumber(tick), "text-anchor=\"end\" fill=\"#333333\"");
  }
  for (double tick : sizeTicks(sizes, lo, hi)) {
    const double x = xOf(tick);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e6e6e6\"/>", x, kTop, x,
                       kTop + plotHeight + 5);
    out += textElement(x, kTop + plotHeight + 18, formatSize(static_cast<std::size_t>(tick)),
                       "text-anchor=\"middle\" fill=\"#333333\"");
  }
  out += fmt::format("<path d=\"M{0:.1f} {1:.1f} V{2:.1f} H{3:.1f}\" fill=\"none\" stroke=\"#333333\"/>", kLeft, kTop,
                     kTop + plotHeight, kLeft + plotWidth);
  out += textElement(kLeft + plotWidth / 2, kHeight - 12, "message size (log2 scale)", "text-anchor=\"middle\"");
  out += textElement(18, kTop + plotHeight / 2, chart.yLabel + (logY ? ", log scale" : ""),
                     fmt::format("text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1f})\"", kTop + plotHeight / 2));

  int legendRow = 0;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& series = chart.series[i];
    const std::string color = kPalette[i % 10];
    const std::string dash = i >= 10 ? " stroke-dasharray=\"6 3\"" : "";
    const std::size_t count = std::min(series.bytes.size(), series.values.size());
    if (series.low.size() >= count && series.high.size() >= count && count > 0) {
      std::string points;
      for (std::size_t k = 0; k < count; ++k) {
        points += fmt::format("{:.1f},{:.1f} ", xOf(static_cast<double>(series.bytes[k])), yOf(series.high[k]));
      }
      for (std::size_t k = count; k-- > 0;) {
        points += fmt::format("{:.1f},{:.1f} ", xOf(static_cast<double>(series.bytes[k])), yOf(series.low[k]));
      }
      out += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>", points, color);
    }
    std::string line;
    for (std::size_t k = 0; k < count; ++k) {
      line += fmt::format("{:.1f},{:.1f} ", xOf(static_cast<double>(series.bytes[k])), yOf(series.values[k]));
    }
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>", line, color, dash);
    for (std::size_t k = 0; k < count; ++k) {
      std::string tip =
          fmt::format("{} at {}: {}", series.label, formatSize(series.bytes[k]), shortNumber(series.values[k], 4));
      if (series.low.size() > k && series.high.size() > k) {
        tip += fmt::format(" (range {} to {})", shortNumber(series.low[k], 4), shortNumber(series.high[k], 4));
      }
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>",
                         xOf(static_cast<double>(series.bytes[k])), yOf(series.values[k]), color, escapeHtml(tip));
    }
    const double legendY = kTop + 8 + 20 * static_cast<double>(legendRow++);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>",
        kWidth - kRight + 16, legendY, kWidth - kRight + 40, color, dash);
    out += textElement(kWidth - kRight + 46, legendY + 4, series.label);
    if (!series.low.empty() && !series.bandLabel.empty()) {
      const double bandY = kTop + 8 + 20 * static_cast<double>(legendRow++);
      out +=
          fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"24\" height=\"12\" fill=\"{}\" fill-opacity=\"0.18\"/>",
                      kWidth - kRight + 16, bandY - 6, color);
      out += textElement(kWidth - kRight + 46, bandY + 4, series.bandLabel);
    }
  }
  return out + "</svg>";
}

}  // namespace peerlink::cli
