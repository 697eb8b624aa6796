// `peerlink doctor` output: the per-pair verdict matrix and the findings with their fixes for people, one
// self-describing JSON document for machines, and the exit code (docs/doctor-verdicts.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

/// The verdict matrix titled `GPU(row) -> GPU(column)` (OK, DEGRADED, BROKEN, N/A for unsupported, each
/// non-OK cell tagged [n] with its reasons listed below), then every finding grouped by code, most severe
/// first, with its fix; then the overall verdict and exit code.
std::string formatDoctorText(const Topology& topology, const DoctorReport& report);

/// Findings grouped by severity, code and fix, most severe first: problems list each summary, notes one
/// with a count; "\n<title>: none\n" when there are none.
std::string findingsText(const std::vector<Finding>& findings, const std::string& title);

/// {code, severity, summary, fix, gpus}, as the doctor's JSON writes every finding.
nlohmann::json findingToJson(const Finding& finding);

/// Schema "peerlink.doctor", version 1: overall, exit_code, pairs (verdict, reasons, bus ids, link,
/// expected GB/s), findings, the probe results behind them (every statistic as numbers) and the topology.
/// The command adds its "generated_by" block.
nlohmann::json doctorToJson(const Topology& topology, const DoctorReport& report,
                            const std::vector<ProbeResult>& probes = {});

/// A document written by doctorToJson, read back.
struct SavedDoctorRun {
  DoctorReport report;
  std::vector<ProbeResult> probes;
};
/// Throws Error(InvalidInput) naming the first problem (wrong schema or version, missing field).
SavedDoctorRun doctorFromJson(const nlohmann::json& document);

/// 0 when every pair is OK or UNSUPPORTED, kExitDegraded (4) when the worst is DEGRADED, kExitBroken (5)
/// when anything is BROKEN.
int doctorExitCode(const DoctorReport& report);

/// 0 for OK and UNSUPPORTED, kExitDegraded (4) for DEGRADED, kExitBroken (5) for BROKEN.
int verdictExitCode(Verdict verdict);

}  // namespace peerlink::cli
