// `peerlink bench` output: text tables for people, one self-describing JSON document for machines.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peerlink/bench.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

/// Below this fraction of the link model's raw figure a bandwidth cell is flagged (LOW in the text, outlined
/// in the HTML report). Healthy links sit well above it: on H200 NVLink the copy engine reaches 82% of the
/// 478 GB/s the 18 links signal, the SM copy kernel 77%.
constexpr double kLowEfficiency = 0.7;

/// Each case: title, then per size a GPU x GPU matrix (GB/s or us) or a list (relay, host), N/A with
/// the reason for cases that cannot run, FAILED cells marked.
std::string formatBenchText(const Topology& topology, const std::vector<BenchCaseResult>& results);

/// The whole run as JSON: topology, parameters, options, every cell's statistics as numbers.
nlohmann::json benchToJson(const Topology& topology, const Params& params, const BenchOptions& options,
                           const std::vector<BenchCaseResult>& results);

}  // namespace peerlink::cli
