#include "doctor_format.hpp"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "doctor/doctor_verdict.hpp"
#include "exit_codes.hpp"
#include "matrix_format.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "peerlink.doctor";
constexpr int kSchemaVersion = 1;

// In the text: "N/A" for a pair without P2P (not an error), "NOTE" for a finding that changes no verdict.
std::string cellName(Verdict verdict) {
  return verdict == Verdict::Unsupported ? "N/A" : verdictName(verdict);
}

std::string severityLabel(Verdict severity) {
  return severity == Verdict::Ok ? "NOTE" : cellName(severity);
}

std::string orUnknown(const std::string& text) {
  return text.empty() ? "?" : text;
}

std::string verdictMatrix(const Topology& topology, const DoctorReport& report) {
  const int n = static_cast<int>(topology.gpus.size());
  std::map<std::pair<int, int>, const PairVerdict*> byPair;
  for (const PairVerdict& pair : report.pairs) byPair[{pair.src, pair.dst}] = &pair;
  // Pairs with the same reasons share one tag, so a machine-wide cause reads as one legend line.
  std::vector<std::string> legend;
  std::map<std::string, int> tags;
  bool unchecked = false;
  const auto cell = [&](int row, int column) -> std::string {
    const auto found = byPair.find({row, column});
    if (found == byPair.end()) {
      unchecked = true;
      return "-";
    }
    const PairVerdict& pair = *found->second;
    if (pair.reasons.empty()) return cellName(pair.verdict);
    const std::string reasons = fmt::format("{}", fmt::join(pair.reasons, ", "));
    auto [tag, added] = tags.try_emplace(reasons, static_cast<int>(legend.size()) + 1);
    if (added) legend.push_back(reasons);
    return fmt::format("{}[{}]", cellName(pair.verdict), tag->second);
  };
  std::string out = formatMatrix(Matrix{"Verdict  GPU(row) -> GPU(column)", n, cell, {}, nullptr});
  out +=
      "  OK = every probe moved correct data at the expected speed; DEGRADED = works, but slower or with a caveat\n"
      "  BROKEN = wrong data, a hang, or a probe that could not run; N/A = CUDA offers no P2P here (not an error)\n";
  if (unchecked) out += "  -  = not checked\n";
  if (!legend.empty()) {
    out += "Reasons:\n";
    for (std::size_t i = 0; i < legend.size(); ++i) out += fmt::format("  [{}] {}\n", i + 1, legend[i]);
  }
  return out;
}

}  // namespace

std::string findingsText(const std::vector<Finding>& findings, const std::string& title) {
  if (findings.empty()) return fmt::format("\n{}: none\n", title);
  // Findings are per pair; one heading per code and fix keeps an 8-GPU machine's 56 pairs readable.
  // A consequence of a shortage sits under it (the report's order), marked with its cause.
  using Group = std::tuple<Verdict, std::string, std::string, std::string>;
  std::vector<Group> order;
  std::map<Group, std::vector<const Finding*>> groups;
  for (const Finding& finding : findings) {
    const Group group{finding.severity, finding.code, finding.fix, finding.cause};
    auto& members = groups[group];
    if (members.empty()) order.push_back(group);
    members.push_back(&finding);
  }
  std::string out = fmt::format("\n{}, most severe first:\n", title);
  for (const Group& group : order) {
    const auto& members = groups[group];
    const std::string& cause = std::get<3>(group);
    if (!cause.empty()) out += "  ";
    out += fmt::format("{} {}", severityLabel(std::get<0>(group)), std::get<1>(group));
    if (!cause.empty()) out += fmt::format(" (because of {})", cause);
    out += members.size() > 1 ? fmt::format(" ({} times)\n", members.size()) : "\n";
    // Problems list every pair with its own figures; a pair without P2P or a note reads the same for all.
    const bool problem = std::get<0>(group) == Verdict::Broken || std::get<0>(group) == Verdict::Degraded;
    for (const Finding* finding : members) {
      out += fmt::format("  - {}\n", finding->summary);
      if (!problem && members.size() > 1) {
        out += fmt::format("  - and {} more like it (--json lists them)\n", members.size() - 1);
        break;
      }
    }
    if (!std::get<2>(group).empty()) out += fmt::format("  fix: {}\n", std::get<2>(group));
  }
  return out;
}

json findingToJson(const Finding& finding) {
  return {{"code", finding.code},       {"severity", verdictName(finding.severity)},
          {"summary", finding.summary}, {"fix", finding.fix},
          {"gpus", finding.gpus},       {"cause", finding.cause}};
}

namespace {

Verdict verdictFrom(const json& value, const char* what) {
  const std::optional<Verdict> verdict = parseVerdictName(value.get<std::string>());
  if (!verdict) {
    throw Error(ErrorCode::InvalidInput,
                fmt::format("doctor JSON: {} \"{}\" is not a verdict", what, value.get<std::string>()));
  }
  return *verdict;
}

}  // namespace

std::string formatDoctorText(const Topology& topology, const DoctorReport& report) {
  const int n = static_cast<int>(topology.gpus.size());
  std::string out = fmt::format("peerlink doctor: {} GPU{} on {} ({}); driver {}\n\n", n, n == 1 ? "" : "s",
                                orUnknown(topology.host), topology.source, orUnknown(topology.driverVersion));
  out += verdictMatrix(topology, report);
  out += findingsText(report.findings, "Findings");
  out += fmt::format("\nOverall: {} (exit {})\n", verdictName(report.overall), doctorExitCode(report));
  return out;
}

json doctorToJson(const Topology& topology, const DoctorReport& report, const std::vector<ProbeResult>& probes) {
  const auto busId = [&](int gpu) {
    return gpu >= 0 && static_cast<std::size_t>(gpu) < topology.gpus.size()
               ? topology.gpus[static_cast<std::size_t>(gpu)].pciBusId
               : std::string();
  };
  const auto validPair = [&](int src, int dst) {
    const int n = static_cast<int>(topology.gpus.size());
    return src >= 0 && dst >= 0 && src < n && dst < n && src != dst;
  };
  const auto expected = [&](int src, int dst) {
    return validPair(src, dst) ? topology.pair(src, dst).expectedGBps : 0.0;
  };
  json document;
  document["schema"] = kSchema;
  document["version"] = kSchemaVersion;
  document["overall"] = verdictName(report.overall);
  document["exit_code"] = doctorExitCode(report);
  json pairs = json::array();
  for (const PairVerdict& pair : report.pairs) {
    pairs.push_back(
        {{"src", pair.src},
         {"dst", pair.dst},
         {"src_bus_id", busId(pair.src)},
         {"dst_bus_id", busId(pair.dst)},
         {"verdict", verdictName(pair.verdict)},
         {"reasons", pair.reasons},
         {"link", validPair(pair.src, pair.dst) ? linkLabel(topology.pair(pair.src, pair.dst)) : std::string("?")},
         {"expected_gbps", expected(pair.src, pair.dst)}});
  }
  document["pairs"] = pairs;
  json findings = json::array();
  for (const Finding& finding : report.findings) findings.push_back(findingToJson(finding));
  document["findings"] = findings;
  json probeArray = json::array();
  for (const ProbeResult& probe : probes) {
    const double expectedGBps = expected(probe.src, probe.dst);
    probeArray.push_back(
        {{"src", probe.src},
         {"dst", probe.dst},
         {"method", probe.method},
         {"ran", probe.ran},
         {"timed_out", probe.timedOut},
         {"wrong_bytes", probe.wrongBytes},
         {"lost_bytes", probe.lostBytes},
         {"gbps", probe.gbps},
         {"expected_gbps", expectedGBps},
         {"efficiency", probe.gbps > 0 && expectedGBps > 0 ? json(probe.gbps / expectedGBps) : json(nullptr)},
         {"error", probe.error},
         {"error_cause", probe.errorCause},
         {"seconds", probe.seconds}});
  }
  document["probes"] = probeArray;
  document["topology"] = json::parse(topologyToJson(topology));
  return document;
}

SavedDoctorRun doctorFromJson(const json& document) {
  SavedDoctorRun saved;
  try {
    if (!document.is_object() || document.value("schema", "") != kSchema) {
      throw Error(ErrorCode::InvalidInput, fmt::format("doctor JSON: schema is not \"{}\"", kSchema));
    }
    if (document.at("version").get<int>() != kSchemaVersion) {
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("doctor JSON: version {} is not {}", document.at("version").dump(), kSchemaVersion));
    }
    saved.report.overall = verdictFrom(document.at("overall"), "overall");
    for (const json& entry : document.at("pairs")) {
      saved.report.pairs.push_back(PairVerdict{entry.at("src").get<int>(), entry.at("dst").get<int>(),
                                               verdictFrom(entry.at("verdict"), "verdict"),
                                               entry.at("reasons").get<std::vector<std::string>>()});
    }
    for (const json& entry : document.at("findings")) {
      saved.report.findings.push_back(
          Finding{entry.at("code").get<std::string>(), verdictFrom(entry.at("severity"), "severity"),
                  entry.at("summary").get<std::string>(), entry.at("fix").get<std::string>(),
                  entry.at("gpus").get<std::vector<int>>(), entry.value("cause", std::string())});
    }
    for (const json& entry : document.value("probes", json::array())) {
      ProbeResult probe;
      probe.src = entry.at("src").get<int>();
      probe.dst = entry.at("dst").get<int>();
      probe.method = entry.at("method").get<std::string>();
      probe.ran = entry.at("ran").get<bool>();
      probe.timedOut = entry.at("timed_out").get<bool>();
      probe.wrongBytes = entry.at("wrong_bytes").get<std::uint64_t>();
      probe.lostBytes = entry.at("lost_bytes").get<std::uint64_t>();
      probe.gbps = entry.at("gbps").get<double>();
      probe.error = entry.at("error").get<std::string>();
      probe.errorCause = entry.value("error_cause", "");
      probe.seconds = entry.value("seconds", 0.0);
      saved.probes.push_back(std::move(probe));
    }
  } catch (const json::exception& error) {
    throw Error(ErrorCode::InvalidInput, fmt::format("doctor JSON: {}", error.what()));
  }
  return saved;
}

int doctorExitCode(const DoctorReport& report) {
  return verdictExitCode(report.overall);
}

int verdictExitCode(Verdict verdict) {
  switch (verdict) {
    case Verdict::Broken: return kExitBroken;
    case Verdict::Degraded: return kExitDegraded;
    case Verdict::Ok:
    case Verdict::Unsupported: return kExitOk;
  }
  return kExitBroken;
}

}  // namespace peerlink::cli
