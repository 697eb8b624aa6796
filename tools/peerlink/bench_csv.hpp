// `peerlink bench --csv`: one row per measured cell, for spreadsheets and plotting scripts.
#pragma once

#include <string>
#include <vector>

#include "peerlink/bench.hpp"

namespace peerlink::cli {

/// A header row, then one row per cell: case, metric, src, dst, via (-1: host or none), bytes,
/// median_us, min_us, max_us, p99_us, gbps, expected_gbps, efficiency (empty when the link model has
/// no figure), verified, wrong_bytes, status (OK, FAILED: wrong data, ERROR: not measured), error, route.
/// A case that cannot run here is one row with status N/A, the reason as its error and no numbers.
/// Fields are quoted as RFC 4180 says (commas, quotes, line breaks); lines end with "\n".
std::string benchToCsv(const std::vector<BenchCaseResult>& results);

/// One CSV field, quoted when it holds a comma, a double quote or a line break.
std::string csvField(const std::string& text);

}  // namespace peerlink::cli
