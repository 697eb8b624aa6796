// What a benchmark case is inside the library: its public info, when it cannot run, and how it runs.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/bench.hpp"
#include "peerlink/transport.hpp"

namespace peerlink {

/// Everything a case needs while it runs.
struct BenchContext {
  const Topology& topology;
  const Params& params;
  const BenchOptions& options;
  Transport& transport;
  std::vector<int> devices;        ///< the GPUs in use
  std::vector<std::size_t> sizes;  ///< the sweep
  void progress(const std::string& what) const {
    if (options.progress) options.progress(what);
  }
};

struct BenchCaseSpec {
  BenchCaseInfo info;
  /// The reason the case cannot run here, or nullopt.
  std::function<std::optional<std::string>(const BenchContext&)> unavailable;
  std::function<void(BenchContext&, BenchCaseResult&)> run;
};

/// Every case with its implementation (bench_registry.cc).
const std::vector<BenchCaseSpec>& benchCaseSpecs();

// Case bodies (bench_bandwidth.cc, bench_latency.cc).
void runOneWayCase(BenchContext& context, BenchCaseResult& result, RouteMode mode, Engine engine, Direction direction);
void runBothWaysCase(BenchContext& context, BenchCaseResult& result, Engine engine, Direction direction);
void runRelayCase(BenchContext& context, BenchCaseResult& result, Engine engine);
void runSplitRelayCase(BenchContext& context, BenchCaseResult& result);
void runAllPairsCase(BenchContext& context, BenchCaseResult& result);
void runManagedCase(BenchContext& context, BenchCaseResult& result);
void runSetupCostsCase(BenchContext& context, BenchCaseResult& result);
void runHostCase(BenchContext& context, BenchCaseResult& result, bool toDevice);
void runPutSignalLatencyCase(BenchContext& context, BenchCaseResult& result);
void runLlLatencyCase(BenchContext& context, BenchCaseResult& result);
void runCopyEngineLatencyCase(BenchContext& context, BenchCaseResult& result);
void runCrossProcessCase(BenchContext& context, BenchCaseResult& result, bool cumem);

/// Calls fn(src, dst, bytes) for every size of `sizes` and, within it, every ordered pair of distinct GPUs
/// in use, reporting each as progress: the sweep of the per-pair cases.
template <typename Fn>
void forEachPair(const BenchContext& context, const BenchCaseResult& result, const std::vector<std::size_t>& sizes,
                 Fn&& fn) {
  for (std::size_t bytes : sizes) {
    for (int src : context.devices) {
      for (int dst : context.devices) {
        if (src == dst) continue;
        context.progress(fmt::format("{} GPU {} -> GPU {} {} bytes", result.name, src, dst, bytes));
        fn(src, dst, bytes);
      }
    }
  }
}

/// A cell of `bytes` from GPU src to GPU dst, to be measured.
inline BenchCell pairCell(int src, int dst, std::size_t bytes) {
  BenchCell cell;
  cell.src = src;
  cell.dst = dst;
  cell.bytes = bytes;
  return cell;
}

/// The sizes latency cases use: small messages, whatever -b/-e say.
const std::vector<std::size_t>& latencySizes();

}  // namespace peerlink
