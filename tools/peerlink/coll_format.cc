#include "coll_format.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll_nodes_format.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;
using coll::CollRow;
using coll::CollRun;
using coll::Placement;

// nccl-tests' header, verbatim (trailing spaces included), so its readers read ours.
constexpr const char* kHeader =
    "#                                                              out-of-place                       in-place        "
    "  \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
    "#wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)    "
    "     \n";

int index(CollConfig config) {
  return static_cast<int>(config);
}

std::string placementCells(const CollMeasurement& m) {
  if (m.status == CollMeasurement::Status::NotRun)
    return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "N/A", "N/A", "N/A", "N/A");
  if (m.status == CollMeasurement::Status::Failed)
    return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "FAILED", "-", "-", "-");
  const std::string wrong = m.wrong < 0 ? std::string("N/A") : std::to_string(m.wrong);
  return fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>6}", formatNcclTestsTime(m.timeUs), m.algbwGBps, m.busbwGBps,
                     wrong);
}

std::string optionalNumber(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("N/A");
}

std::string configTable(const CollRun& run, CollConfig config) {
  const coll::CollConfigStatus& status = run.configs[index(config)];
  std::string out =
      fmt::format("#\n# == {}: {}\n", coll::collConfigName(config), coll::collConfigDescription(config, run.processes));
  if (!status.available) return out + fmt::format("#    not run: {}\n", status.reason);
  out += kHeader;
  std::int64_t wrong = 0;
  double busbwSum = 0;
  int busbwCount = 0;
  // Failures grouped by reason, in the order they first happened: a configuration that cannot run
  // fails the same way at every size.
  std::vector<std::pair<std::string, std::vector<std::string>>> failures;
  std::vector<std::pair<std::string, std::vector<std::string>>> notRun;
  for (const CollRow& row : run.rows) {
    out += formatCollRow(run, row, config) + "\n";
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      const CollMeasurement& m = row.at(placement)[index(config)];
      if (m.wrong > 0) wrong += m.wrong;
      if (m.ok()) {
        busbwSum += m.busbwGBps;
        ++busbwCount;
      }
      // Failures, and sizes not run for a reason of their own (a call too large to capture), grouped by reason.
      const bool failed = m.status == CollMeasurement::Status::Failed;
      if (failed || (m.status == CollMeasurement::Status::NotRun && !m.reason.empty())) {
        auto& groups = failed ? failures : notRun;
        const std::string where =
            fmt::format("{} B {}", row.bytes, placement == Placement::InPlace ? "in-place" : "out-of-place");
        auto found =
            std::find_if(groups.begin(), groups.end(), [&](const auto& group) { return group.first == m.reason; });
        if (found == groups.end()) {
          groups.push_back({m.reason, {where}});
        } else {
          found->second.push_back(where);
        }
      }
    }
  }
  for (const auto& [reason, places] : failures) {
    out += places.size() == 1 ? fmt::format("# FAILED {}: {}\n", places.front(), reason)
                              : fmt::format("# FAILED {} times ({} ... {}): {}\n", places.size(), places.front(),
                                            places.back(), reason);
  }
  for (const auto& [reason, places] : notRun) {
    out += places.size() == 1 ? fmt::format("# not run {}: {}\n", places.front(), reason)
                              : fmt::format("# not run {} times ({} ... {}): {}\n", places.size(), places.front(),
                                            places.back(), reason);
  }
  out += fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 && failures.empty() ? "OK" : "FAILED");
  out += fmt::format("# Avg bus bandwidth    : {:g} \n", busbwCount > 0 ? busbwSum / busbwCount : 0.0);
  return out;
}

std::string comparisonTable(const CollRun& run) {
  const bool peerlink =
      run.configs[index(CollConfig::Peerlink)].available || run.configs[index(CollConfig::PeerlinkGraph)].available;
  const bool nccl = run.configs[index(CollConfig::Nccl)].available;
  if (!peerlink || !nccl) return "";
  std::string out;
  for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
    if (placement == Placement::InPlace && !coll::hasInPlace(run.options.collective)) continue;
    out += fmt::format(
        "#\n# == peerlink vs the best NCCL configuration at each size, {} (ratio = best NCCL time / peerlink "
        "time, ratio g the same for peerlink's graph: above 1 peerlink is faster)\n",
        placement == Placement::InPlace ? "in-place" : "out-of-place");
    out += fmt::format("# {:>10}  {:>9}  {:>9}  {:>9}  {:<14}  {:>6}  {:>7}  {}\n", "size", "peerlink", "pl graph",
                       "best NCCL", "NCCL config", "ratio", "ratio g", "peerlink algorithm");
    out +=
        fmt::format("# {:>10}  {:>9}  {:>9}  {:>9}  {:<14}  {:>6}  {:>7}\n", "(B)", "(us)", "(us)", "(us)", "", "", "");
    for (const CollRow& row : run.rows) {
      const auto& m = row.at(placement);
      const std::optional<CollConfig> best = coll::bestNccl(row, placement);
      auto time = [&](CollConfig config) {
        return m[index(config)].ok() ? formatNcclTestsTime(m[index(config)].timeUs) : std::string("N/A");
      };
      out += fmt::format("  {:>10}  {:>9}  {:>9}  {:>9}  {:<14}  {:>6}  {:>7}  {}\n", row.bytes,
                         time(CollConfig::Peerlink), time(CollConfig::PeerlinkGraph),
                         best ? time(*best) : std::string("N/A"), best ? coll::collConfigName(*best) : "-",
                         optionalNumber(coll::ratioToBestNccl(row, placement, CollConfig::Peerlink), "{:.2f}"),
                         optionalNumber(coll::ratioToBestNccl(row, placement, CollConfig::PeerlinkGraph), "{:.2f}"),
                         row.peerlinkChoice);
    }
  }
  return out;
}

nlohmann::json measurementJson(const CollMeasurement& m) {
  const char* status = m.status == CollMeasurement::Status::Ok       ? "ok"
                       : m.status == CollMeasurement::Status::Failed ? "failed"
                                                                     : "not_run";
  nlohmann::json out = {{"status", status}, {"reason", m.reason}};
  if (m.ok()) {
    out["time_us"] = m.timeUs;
    out["algbw_gbps"] = m.algbwGBps;
    out["busbw_gbps"] = m.busbwGBps;
    if (!m.iterationUs.empty()) out["iteration_us"] = m.iterationUs;
    addAcrossNodesUs(m, out);
  }
  out["wrong"] = m.wrong >= 0 ? nlohmann::json(m.wrong) : nlohmann::json(nullptr);
  return out;
}

// --iteration-times: each eager cell's fastest, median and slowest iteration, and where the slowest fell.
std::string iterationTable(const CollRun& run) {
  std::string lines;
  for (const CollRow& row : run.rows) {
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      for (CollConfig config : coll::kCollConfigs) {
        const CollMeasurement& m = row.at(placement)[index(config)];
        if (!m.ok() || m.iterationUs.empty()) continue;
        std::vector<double> sorted = m.iterationUs;
        std::sort(sorted.begin(), sorted.end());
        const auto slowest = std::max_element(m.iterationUs.begin(), m.iterationUs.end()) - m.iterationUs.begin();
        lines +=
            fmt::format("{:>12}  {:<14}  {:<12}  {:>10.2f}  {:>10.2f}  {:>10.2f}  {:>9}\n", row.bytes,
                        coll::collConfigName(config), placement == Placement::InPlace ? "in-place" : "out-of-place",
                        sorted.front(), sorted[sorted.size() / 2], sorted.back(), slowest + 1);
      }
    }
  }
  if (lines.empty()) return "";
  return "#\n# == every eager iteration timed on its own (--iteration-times): the fastest, median and slowest "
         "iteration per cell, us\n" +
         fmt::format("# {:>10}  {:<14}  {:<12}  {:>10}  {:>10}  {:>10}  {:>9}\n", "size", "config", "placement",
                     "fastest", "median", "slowest", "slowest #") +
         lines;
}

// How long each side's communicators took to create in this run. The CLI allocates its buffers first, so
// every GPU's context exists before either: the times leave out the CUDA driver's contexts.
std::string creationLine(const CollRun& run) {
  std::vector<std::string> parts;
  if (run.creationMilliseconds > 0) parts.push_back(fmt::format("peerlink {:.1f} ms", run.creationMilliseconds));
  if (run.nccl.initMilliseconds > 0) {
    parts.push_back(
        fmt::format("NCCL ({}) {:.1f} ms", coll::ncclCreationCall(run.processes), run.nccl.initMilliseconds));
  }
  if (parts.empty()) return "";
  return fmt::format("# communicators created in: {} (the GPUs' contexts existed before)\n", fmt::join(parts, ", "));
}

}  // namespace

const char* ncclTestsTypeName(DataType type) noexcept {
  switch (type) {
    case DataType::F64: return "double";
    case DataType::F32: return "float";
    case DataType::F16: return "half";
    case DataType::BF16: return "bfloat16";
    case DataType::I32: return "int32";
    case DataType::U32: return "uint32";
    case DataType::I64: return "int64";
    case DataType::U64: return "uint64";
    case DataType::I8: return "int8";
    case DataType::U8: return "uint8";
  }
  return "?";
}

std::string formatNcclTestsTime(double us) {
  if (us < 10000.0) return fmt::format("{:7.2f}", us);
  if (us < 100000.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.0f}", us);
}

std::string formatCollRow(const CollRun& run, const CollRow& row, CollConfig config) {
  const Collective collective = run.options.collective;
  const char* op = reduces(collective) ? reduceOpName(run.options.op) : "none";
  const int root = hasRoot(collective) ? run.options.root : -1;
  return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", row.bytes, row.count, ncclTestsTypeName(run.options.type),
                     op, root) +
         placementCells(row.outOfPlace[index(config)]) + placementCells(row.inPlace[index(config)]);
}

std::string formatCollText(const CollRun& run) {
  const coll::CollBenchOptions& o = run.options;
  const std::size_t minBytes = o.sizes.empty() ? 0 : o.sizes.front();
  const std::size_t maxBytes = o.sizes.empty() ? 0 : o.sizes.back();
  std::string out = fmt::format("# peerlink coll: {} in nccl-tests' layout, with NCCL in the same run\n",
                                collectiveName(o.collective));
  out += fmt::format(
      "# nGpus {} minBytes {} maxBytes {} warmup iters: {} iters: {} validation: {} graph capture: {}\n", run.ranks,
      minBytes, maxBytes, o.warmup, o.iterations, o.check ? 1 : 0,
      o.capture == coll::GraphCapture::Joined ? "joined (one graph for all ranks)" : "per-rank (one graph per GPU)");
  out += run.processes > 1 ? fmt::format("# {} processes, one rank each{}\n", run.processes,
                                         o.registerBuffers ? "; peerlink's buffers registered as windows" : "")
                           : std::string("# one process driving every rank\n");
  out += "#\n# Using devices\n";
  for (std::size_t rank = 0; rank < run.devices.size(); ++rank) {
    out += fmt::format("#  Rank {:>2} device {:>2} [{}] {}\n", rank, run.devices[rank],
                       rank < run.deviceBusIds.size() ? run.deviceBusIds[rank] : "",
                       rank < run.deviceNames.size() ? run.deviceNames[rank] : "");
  }
  if (run.processes > 1 && coll::gpusOf(run) < run.ranks) {
    out +=
        "# ranks in different processes share a GPU: their kernels take turns on it, so these times say nothing of "
        "speed\n";
  }
  if (run.nccl.loaded) {
    out += fmt::format("# NCCL {}: {}\n", run.nccl.version, run.nccl.path);
  } else {
    out += fmt::format("# NCCL: not loaded ({})\n", run.nccl.reason);
  }
  if (!run.nccl.nvls.empty()) out += fmt::format("# {}\n", run.nccl.nvls);
  out += creationLine(run);
  const coll::CollConfigStatus& symmetric = run.configs[index(CollConfig::NcclSymmetric)];
  if (run.nccl.loaded && !symmetric.available) out += fmt::format("# NCCL symmetric: {}\n", symmetric.reason);
  for (CollConfig config : coll::kCollConfigs) out += configTable(run, config);
  out += comparisonTable(run);
  out += formatCollNodesText(run);
  out += iterationTable(run);
  return out;
}

nlohmann::json collToJson(const CollRun& run, const Params& params) {
  const coll::CollBenchOptions& o = run.options;
  nlohmann::json document;
  document["schema"] = "peerlink.coll";
  document["version"] = 1;
  document["options"] = {{"collective", collectiveName(o.collective)},
                         {"datatype", dataTypeName(o.type)},
                         {"op", reduceOpName(o.op)},
                         {"root", o.root},
                         {"sizes", o.sizes},
                         {"iterations", o.iterations},
                         {"warmup", o.warmup},
                         {"check", o.check},
                         {"gpus", o.gpus},
                         {"peerlink", o.peerlink},
                         {"nccl", o.nccl},
                         {"capture", o.capture == coll::GraphCapture::Joined ? "joined" : "per-rank"},
                         {"iteration_times", o.iterationTimes}};
  nlohmann::json parameters = nlohmann::json::array();
  for (const ParamValue& value : params.values()) {
    parameters.push_back(
        {{"name", value.spec->name}, {"value", value.value}, {"source", paramSourceName(value.source)}});
  }
  document["parameters"] = parameters;
  document["ranks"] = run.ranks;
  document["processes"] = run.processes;
  if (!run.stagedCopies.empty()) document["staged_copies"] = run.stagedCopies;
  if (run.stagingWindowBytes > 0) document["staging_window_bytes"] = run.stagingWindowBytes;
  if (run.nodes.nodes > 0) document["nodes"] = collNodesToJson(run.nodes);
  document["devices"] = run.devices;
  document["device_names"] = run.deviceNames;
  document["device_bus_ids"] = run.deviceBusIds;
  document["nccl"] = {{"loaded", run.nccl.loaded},     {"path", run.nccl.path},
                      {"version", run.nccl.version},   {"version_code", run.nccl.versionCode},
                      {"reason", run.nccl.reason},     {"nvls", run.nccl.nvls},
                      {"searched", run.nccl.searched}, {"init_ms", run.nccl.initMilliseconds}};
  document["creation_ms"] = run.creationMilliseconds;
  nlohmann::json configs = nlohmann::json::array();
  for (CollConfig config : coll::kCollConfigs) {
    configs.push_back({{"name", coll::collConfigName(config)},
                       {"description", coll::collConfigDescription(config, run.processes)},
                       {"available", run.configs[index(config)].available},
                       {"reason", run.configs[index(config)].reason}});
  }
  document["configurations"] = configs;
  document["bus_factor"] = coll::busBandwidthFactor(o.collective, run.ranks);
  nlohmann::json rows = nlohmann::json::array();
  for (const CollRow& row : run.rows) {
    nlohmann::json entry = {{"bytes", row.bytes}, {"count", row.count}, {"peerlink_algorithm", row.peerlinkChoice}};
    if (row.acrossNodes) entry["across_nodes"] = acrossNodesToJson(row);
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      nlohmann::json side;
      for (CollConfig config : coll::kCollConfigs) {
        side[coll::collConfigName(config)] = measurementJson(row.at(placement)[index(config)]);
      }
      const std::optional<CollConfig> best = coll::bestNccl(row, placement);
      side["best_nccl"] = best ? nlohmann::json(coll::collConfigName(*best)) : nlohmann::json(nullptr);
      for (CollConfig config : {CollConfig::Peerlink, CollConfig::PeerlinkGraph}) {
        const std::optional<double> ratio = coll::ratioToBestNccl(row, placement, config);
        side[std::string("ratio_") + coll::collConfigName(config)] =
            ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr);
      }
      entry[placement == Placement::InPlace ? "in_place" : "out_of_place"] = side;
    }
    rows.push_back(entry);
  }
  document["rows"] = rows;
  document["failures"] = collFailures(run);
  return document;
}

int collFailures(const CollRun& run) {
  int failures = 0;
  for (const CollRow& row : run.rows) {
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      for (const CollMeasurement& m : row.at(placement)) failures += m.failed() ? 1 : 0;
    }
  }
  return failures;
}

}  // namespace peerlink::cli
