// Benchmarks of every route: a registry of test cases with stable snake_case names, each measured with
// device events after warm-up, verified on the destination GPU, reported with median/min/max/p99.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "peerlink/params.hpp"
#include "peerlink/shared_memory.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// What a run measures and how.
struct BenchOptions {
  std::vector<std::string> names;                 ///< cases by exact name (-t); empty with no prefixes: the defaults
  std::vector<std::string> prefixes;              ///< cases whose name starts with one of these (-p)
  std::size_t minBytes = std::size_t{256} << 20;  ///< -b
  std::size_t maxBytes = std::size_t{256} << 20;  ///< -e
  double factor = 2;                              ///< -f: each size is the previous times this
  int iterations = 20;                            ///< -n: timed iterations per cell (median reported)
  int warmup = 5;                                 ///< -w
  bool verify = true;                             ///< pattern into a poisoned destination, checked on the GPU
  std::vector<int> devices;                       ///< GPUs to use (CUDA ordinals); empty: all
  /// A program that runs `_share-export` (the peerlink CLI passes itself): cross-process cases start it
  /// as the exporting process. Empty: those cases are N/A.
  std::string helperExecutable;
  /// Called before each cell with a short description, for progress lines; may be empty.
  std::function<void(const std::string&)> progress;
};

/// One measured cell: a pair (or one GPU and the host), a size, and the statistics of its samples.
struct BenchCell {
  int src = -1;  ///< -1 for the host
  int dst = -1;  ///< -1 for the host
  int via = -1;  ///< RELAY: the intermediate GPU
  std::size_t bytes = 0;
  double medianUs = 0, minUs = 0, maxUs = 0, p99Us = 0;  ///< per iteration (latency cases: one way)
  double gbps = 0;               ///< bandwidth at the median time (both-ways cases: the sum of the two directions)
  double expectedGBps = 0;       ///< the link model's figure for this pair and direction; 0 unknown
  std::string route;             ///< the route's log line
  bool verified = false;         ///< verification ran
  std::uint64_t wrongBytes = 0;  ///< verification's finding; non-zero marks the cell FAILED
  std::string error;             ///< set when the cell could not be measured (it is FAILED)
  /// Cross-process cells: what setting up the mapping cost, in ms ("export", "handshake", "import",
  /// "map", "total"); empty otherwise.
  std::map<std::string, double> setupMs;
  bool failed() const noexcept { return wrongBytes != 0 || !error.empty(); }
};

enum class BenchMetric { Bandwidth, Latency };

/// A case's outcome: its cells, or why it did not run on this machine.
struct BenchCaseResult {
  std::string name;
  std::string description;
  BenchMetric metric = BenchMetric::Bandwidth;
  std::optional<std::string> notApplicable;  ///< the reason, when the case cannot run here
  std::vector<BenchCell> cells;
  /// Whole-case figures that are not a cell's (e.g. the aggregate of all pairs at once), name -> value;
  /// units are in the name ("aggregate_gbps").
  std::map<std::string, double> summary;
};

/// A registered case: name, one-line description, and whether it is in the default set.
struct BenchCaseInfo {
  std::string name;
  std::string description;
  BenchMetric metric = BenchMetric::Bandwidth;
  bool inDefaultSet = true;
};

/// Every case, in listing order.
std::vector<BenchCaseInfo> benchCases();

/// The cases `options` selects; throws Error(InvalidUsage) naming an unknown case or a prefix that
/// matches nothing.
std::vector<BenchCaseInfo> selectBenchCases(const BenchOptions& options);

/// The most sizes one sweep may have (`peerlink bench` and `peerlink coll`, -b/-e/-f).
inline constexpr std::size_t kMaxSweepSizes = 256;
/// The largest size a sweep may reach: 1 TiB, more than any GPU holds.
inline constexpr std::size_t kMaxSweepBytes = std::size_t{1} << 40;

/// The message sizes of a sweep: minBytes, minBytes*factor, ... up to maxBytes, each rounded to a whole
/// byte and each size once. Throws Error(InvalidUsage) for min == 0, min > max, max > kMaxSweepBytes, a
/// factor that is not a finite number above 1 when min < max, or more than kMaxSweepSizes sizes.
std::vector<std::size_t> sweepSizes(std::size_t minBytes, std::size_t maxBytes, double factor);

/// Runs the selected cases on this machine's GPUs.
std::vector<BenchCaseResult> runBench(const Topology& topology, const Params& params, const BenchOptions& options);

}  // namespace peerlink
