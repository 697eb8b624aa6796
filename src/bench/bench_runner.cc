#include <algorithm>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "core/log.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

std::vector<BenchCaseResult> runBench(const Topology& topology, const Params& params, const BenchOptions& options) {
  const std::vector<BenchCaseInfo> selected = selectBenchCases(options);
  std::vector<int> devices = options.devices;
  const int count = static_cast<int>(topology.gpus.size());
  if (devices.empty()) {
    for (int device = 0; device < count; ++device) devices.push_back(device);
  }
  for (int device : devices) {
    if (device < 0 || device >= count) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("GPU {} does not exist (this process sees GPUs 0..{})", device, count - 1));
    }
  }
  Transport transport(topology, params);
  BenchContext context{topology,  params,  options,
                       transport, devices, sweepSizes(options.minBytes, options.maxBytes, options.factor)};
  std::vector<BenchCaseResult> results;
  for (const BenchCaseInfo& info : selected) {
    const auto spec = std::find_if(benchCaseSpecs().begin(), benchCaseSpecs().end(),
                                   [&](const BenchCaseSpec& s) { return s.info.name == info.name; });
    BenchCaseResult result;
    result.name = info.name;
    result.description = info.description;
    result.metric = info.metric;
    result.notApplicable = spec->unavailable(context);
    if (!result.notApplicable) {
      logInfo(LogSubsys::Bench, "running {}", info.name);
      spec->run(context, result);
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace peerlink
