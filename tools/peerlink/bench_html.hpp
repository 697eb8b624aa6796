// `peerlink bench --html`: one self-contained HTML file (inline CSS and SVG, no scripts, nothing fetched)
// with the run's metadata, the topology's link matrix, and per test case heat maps, size charts and tables.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_format.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

/// The report. `generatedBy` is runMetadata()'s object (tool, version, git_commit, date, host, command);
/// missing keys show as "?". Per case: N/A with the reason; GPU x GPU cases one heat map (<svg
/// class="heatmap">) per size; relay and host cases a table; a value-vs-size chart (<svg class="chart">)
/// for every case with several sizes, and one per metric comparing the cases; failures and
/// cross-process setup costs as lists and tables.
std::string benchToHtml(const Topology& topology, const std::vector<BenchCaseResult>& results,
                        const nlohmann::json& generatedBy);

}  // namespace peerlink::cli
