// The benchmark cases: stable names, one-line descriptions (they double as `peerlink bench -l`), and
// when each cannot run. Names never change once published: scripts and committed results refer to them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

std::optional<std::string> needsTwoGpus(const BenchContext& context) {
  if (context.devices.size() < 2) return fmt::format("needs 2 GPUs, {} in use", context.devices.size());
  return std::nullopt;
}

std::optional<std::string> needsThreeGpus(const BenchContext& context) {
  if (context.devices.size() < 3) return fmt::format("needs 3 GPUs (a relay), {} in use", context.devices.size());
  return std::nullopt;
}

std::optional<std::string> always(const BenchContext&) {
  return std::nullopt;
}

std::optional<std::string> needsHelperProcess(const BenchContext& context) {
  if (auto missing = needsTwoGpus(context)) return missing;
  if (context.options.helperExecutable.empty()) {
    return std::string("needs a second process: run it from the peerlink CLI (BenchOptions::helperExecutable)");
  }
  return std::nullopt;
}

std::optional<std::string> needsCumemHandles(const BenchContext& context) {
  if (auto missing = needsHelperProcess(context)) return missing;
  for (int device : context.devices) {
    const MemoryHandles& handles = context.topology.gpus[static_cast<std::size_t>(device)].handles;
    if (!handles.vmm || !handles.posixFd) {
      return fmt::format("GPU {} has no cuMem POSIX-fd handles (vmm {}, posix_fd {})", device, handles.vmm ? 1 : 0,
                         handles.posixFd ? 1 : 0);
    }
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::size_t>& latencySizes() {
  static const std::vector<std::size_t> sizes = {8, 64, 512, 4096, 65536};
  return sizes;
}

const std::vector<BenchCaseSpec>& benchCaseSpecs() {
  using M = BenchMetric;
  static const std::vector<BenchCaseSpec> specs = {
      {{"d2d_write_ce", "GPU(row) -> GPU(column), copy engine, the source pushes (DIRECT)", M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) {
         runOneWayCase(c, r, RouteMode::Direct, Engine::CopyEngine, Direction::Write);
       }},
      {{"d2d_read_ce", "GPU(row) -> GPU(column), copy engine, the destination pulls (DIRECT)", M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) {
         runOneWayCase(c, r, RouteMode::Direct, Engine::CopyEngine, Direction::Read);
       }},
      {{"d2d_write_sm", "GPU(row) -> GPU(column), peerlink's copy kernel on the source (DIRECT)", M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) {
         runOneWayCase(c, r, RouteMode::Direct, Engine::Sm, Direction::Write);
       }},
      {{"d2d_read_sm", "GPU(row) -> GPU(column), peerlink's copy kernel on the destination (DIRECT)", M::Bandwidth,
        true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) {
         runOneWayCase(c, r, RouteMode::Direct, Engine::Sm, Direction::Read);
       }},
      {{"d2d_bidir_ce",
        "GPU(row) <-> GPU(column) both ways at once, copy engines, each source pushing; total of both directions",
        M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) { runBothWaysCase(c, r, Engine::CopyEngine, Direction::Write); }},
      {{"d2d_bidir_sm",
        "GPU(row) <-> GPU(column) both ways at once, copy kernels on each source pushing; total of both directions",
        M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) { runBothWaysCase(c, r, Engine::Sm, Direction::Write); }},
      {{"d2d_bidir_read_ce",
        "GPU(row) <-> GPU(column) both ways at once, copy engines, each destination pulling; total of both directions",
        M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) { runBothWaysCase(c, r, Engine::CopyEngine, Direction::Read); }},
      {{"d2d_bidir_read_sm",
        "GPU(row) <-> GPU(column) both ways at once, copy kernels on each destination pulling; total of both "
        "directions",
        M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) { runBothWaysCase(c, r, Engine::Sm, Direction::Read); }},
      {{"d2d_all_pairs_ce",
        "every GPU(row) -> GPU(column) pair at once, copy engines, started together; each cell is its pair's bytes "
        "over "
        "the time it took, the aggregate is every byte over the time the last pair took",
        M::Bandwidth, true},
       needsTwoGpus,
       runAllPairsCase},
      {{"d2d_managed_sm",
        "GPU(row) -> GPU(column) from managed memory preferred on the row GPU and advised accessed-by the column GPU, "
        "read by a copy kernel there",
        M::Bandwidth, true},
       needsTwoGpus,
       runManagedCase},
      {{"d2d_staged", "GPU(row) -> GPU(column) through pinned host memory, chunked, both hops overlapped (STAGED)",
        M::Bandwidth, true},
       needsTwoGpus,
       [](BenchContext& c, BenchCaseResult& r) {
         runOneWayCase(c, r, RouteMode::Staged, Engine::CopyEngine, Direction::Write);
       }},
      {{"d2d_relay",
        "GPU(row) -> GPU(column) through each third GPU: a kernel on it reads the source and writes the destination "
        "(RELAY, SM)",
        M::Bandwidth, true},
       needsThreeGpus,
       [](BenchContext& c, BenchCaseResult& r) { runRelayCase(c, r, Engine::Sm); }},
      {{"d2d_relay_split",
        "GPU(row) -> GPU(column) relayed through every other GPU at once, each relaying a share with a kernel "
        "(RELAY, SM, split)",
        M::Bandwidth, true},
       needsThreeGpus,
       runSplitRelayCase},
      {{"d2d_relay_ce",
        "GPU(row) -> GPU(column) through each third GPU: two pipelined copy-engine hops through a staging buffer on it "
        "(RELAY, CE)",
        M::Bandwidth, true},
       needsThreeGpus,
       [](BenchContext& c, BenchCaseResult& r) { runRelayCase(c, r, Engine::CopyEngine); }},
      {{"d2d_ipc_ce",
        "GPU(row) -> GPU(column) into a buffer another process exported as a legacy CUDA IPC handle, copy engine; "
        "with the setup cost",
        M::Bandwidth, true},
       needsHelperProcess,
       [](BenchContext& c, BenchCaseResult& r) { runCrossProcessCase(c, r, false); }},
      {{"d2d_cumem_ce",
        "GPU(row) -> GPU(column) into a cuMem buffer another process exported as a POSIX fd, copy engine; with "
        "the setup cost",
        M::Bandwidth, true},
       needsCumemHandles,
       [](BenchContext& c, BenchCaseResult& r) { runCrossProcessCase(c, r, true); }},
      {{"setup_costs",
        "what getting GPU(row) -> GPU(column) ready costs: enabling peer access, exporting an IPC handle, the first "
        "copy of a fresh buffer against the steady one (ms; the bandwidth is the steady copy's)",
        M::Bandwidth, true},
       needsTwoGpus,
       runSetupCostsCase},
      {{"h2d_ce", "pinned host memory -> each GPU, copy engine", M::Bandwidth, true},
       always,
       [](BenchContext& c, BenchCaseResult& r) { runHostCase(c, r, true); }},
      {{"d2h_ce", "each GPU -> pinned host memory, copy engine", M::Bandwidth, true},
       always,
       [](BenchContext& c, BenchCaseResult& r) { runHostCase(c, r, false); }},
      {{"latency_put_ll",
        "one-way latency GPU(row) -> GPU(column), LL put-with-signal: data and flag in the same 8-byte stores, the "
        "peer's kernels poll them (ping-pong, 8 B to 64 KiB)",
        M::Latency, true},
       needsTwoGpus,
       runLlLatencyCase},
      {{"latency_put_signal",
        "one-way latency GPU(row) -> GPU(column): a kernel stores the payload, fences, then stores a flag the peer's "
        "kernel polls (ping-pong, 8 B to 64 KiB)",
        M::Latency, true},
       needsTwoGpus,
       runPutSignalLatencyCase},
      {{"latency_ce", "cost of one cudaMemcpyPeerAsync GPU(row) -> GPU(column), back to back on one stream", M::Latency,
        true},
       needsTwoGpus,
       runCopyEngineLatencyCase},
  };
  return specs;
}

std::vector<BenchCaseInfo> benchCases() {
  std::vector<BenchCaseInfo> infos;
  for (const BenchCaseSpec& spec : benchCaseSpecs()) infos.push_back(spec.info);
  return infos;
}

std::vector<BenchCaseInfo> selectBenchCases(const BenchOptions& options) {
  const std::vector<BenchCaseInfo> all = benchCases();
  auto known = [&](const std::string& name) {
    return std::any_of(all.begin(), all.end(), [&](const BenchCaseInfo& info) { return info.name == name; });
  };
  for (const std::string& name : options.names) {
    if (!known(name)) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("unknown test case '{}' (`peerlink bench -l` lists them)", name));
    }
  }
  for (const std::string& prefix : options.prefixes) {
    const bool matches =
        std::any_of(all.begin(), all.end(), [&](const BenchCaseInfo& info) { return info.name.rfind(prefix, 0) == 0; });
    if (!matches) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("no test case starts with '{}' (`peerlink bench -l`)", prefix));
    }
  }
  std::vector<BenchCaseInfo> selected;
  for (const BenchCaseInfo& info : all) {
    const bool byName = std::find(options.names.begin(), options.names.end(), info.name) != options.names.end();
    const bool byPrefix = std::any_of(options.prefixes.begin(), options.prefixes.end(),
                                      [&](const std::string& prefix) { return info.name.rfind(prefix, 0) == 0; });
    const bool byDefault = options.names.empty() && options.prefixes.empty() && info.inDefaultSet;
    if (byName || byPrefix || byDefault) selected.push_back(info);
  }
  return selected;
}

std::vector<std::size_t> sweepSizes(std::size_t minBytes, std::size_t maxBytes, double factor) {
  if (minBytes == 0) throw Error(ErrorCode::InvalidUsage, "the smallest size (-b) must be at least 1 byte");
  if (minBytes > maxBytes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("the smallest size (-b {}) is larger than the largest (-e {})", minBytes, maxBytes));
  }
  if (maxBytes > kMaxSweepBytes) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("the largest size (-e {}) is more than the {} bytes (1 TiB) a "
                                                     "sweep may reach",
                                                     maxBytes, kMaxSweepBytes));
  }
  if (minBytes == maxBytes) return {minBytes};
  if (!(factor > 1.0) || !std::isfinite(factor)) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("the size factor (-f {}) must be a number greater than 1", factor));
  }
  // Counted before anything is built: a factor barely above 1 would otherwise make millions of sizes.
  const double steps =
      std::floor(std::log(static_cast<double>(maxBytes) / static_cast<double>(minBytes)) / std::log(factor) + 1e-9);
  if (steps + 1 > static_cast<double>(kMaxSweepSizes)) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("-b {} to -e {} by -f {} makes {:.0f} sizes, more than the {} a sweep may have: use a "
                            "larger factor or a narrower range",
                            minBytes, maxBytes, factor, steps + 1, kMaxSweepSizes));
  }
  std::vector<std::size_t> sizes;
  double size = static_cast<double>(minBytes);
  while (size <= static_cast<double>(maxBytes) * (1 + 1e-12)) {
    // Sizes under 2^40 round exactly; a small factor can round two steps to one size, measured once.
    const auto rounded = static_cast<std::size_t>(std::llround(size));
    if (sizes.empty() || rounded > sizes.back()) sizes.push_back(std::min(rounded, maxBytes));
    size *= factor;
  }
  return sizes;
}

}  // namespace peerlink
