// `peerlink coll --html`: one self-contained HTML file (inline CSS and SVG, no scripts, nothing fetched) of
// a collective run, measured or read back with --from-json (or several saved runs in one page): its
// metadata, peerlink against NCCL's best configuration at each size as a chart, time and bus bandwidth per
// configuration as charts, and a table of every measurement per placement.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coll_bench/coll_bench.hpp"
#include "coll_json_read.hpp"

namespace peerlink::cli {

/// The report. `generatedBy` is runMetadata()'s object (missing keys show as "?"). Charts (<svg
/// class="chart">): best NCCL time / peerlink time per size (eager and graph, each placement) where both
/// ran; time and busbw per configuration out of place. Tables: each placement's measurements (not-run cells
/// with their reason, failed cells marked), the best NCCL configuration, the ratios (class "ahead" at 1 or
/// more, "behind" below) and peerlink's kernel choice; configurations that did not run and failures listed.
std::string collToHtml(const coll::CollRun& run, const nlohmann::json& generatedBy);

/// Several runs in one report (`peerlink coll --from-json a.json b.json ... --html`): a summary (one line per
/// run, linked to its section, with peerlink's graph against NCCL's best out of place, and those ratios in
/// one chart), then each run as collToHtml shows it, its ids prefixed "rN-". One run: collToHtml's page.
std::string collRunsToHtml(const std::vector<SavedColl>& runs);

}  // namespace peerlink::cli
