// `peerlink coll` output: one table per configuration in nccl-tests' layout (size, count, type, redop,
// root, then time, algbw, busbw and #wrong out of place and in place), a table of peerlink against the best
// NCCL configuration at each size, and the run as one self-describing JSON document ("peerlink.coll").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "coll_bench/coll_bench.hpp"
#include "peerlink/params.hpp"

namespace peerlink::cli {

/// nccl-tests' spelling of a type: "float", "double", "half", "bfloat16", "int8", "uint8", "int32", ...
const char* ncclTestsTypeName(DataType type) noexcept;

/// nccl-tests' time column: 7 wide, 2 decimals below 10 ms, 1 below 100 ms, none above.
std::string formatNcclTestsTime(double us);

/// One row of a configuration's table, as nccl-tests prints it.
std::string formatCollRow(const coll::CollRun& run, const coll::CollRow& row, coll::CollConfig config);

/// The whole text: header (devices, NCCL and NCCL_NVLS_ENABLE), each configuration's table (or why it
/// did not run), failures with their reasons, the comparison with NCCL.
std::string formatCollText(const coll::CollRun& run);

/// The run as JSON: schema "peerlink.coll" version 1, options, parameters, NCCL, configurations, one entry
/// per size with every measurement as numbers and the ratios. The caller adds "generated_by" and "topology".
nlohmann::json collToJson(const coll::CollRun& run, const Params& params);

/// Failed measurements and measurements with wrong elements, over the whole run.
int collFailures(const coll::CollRun& run);

}  // namespace peerlink::cli
