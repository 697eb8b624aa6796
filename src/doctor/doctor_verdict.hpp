// Doctor verdicts as a pure function of plain data: the topology, the platform findings and the functional
// probe results. The rules, in the order they are applied, are documented in docs/doctor-verdicts.md and
// at decideVerdicts below; every rule is exercised by tests/cpu/test_doctor_verdict.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// Every probe method of a full functional probe, in the order findings list them.
const std::vector<std::string>& probeMethods();

struct VerdictThresholds {
  /// A method whose measured bandwidth is below this fraction of the topology's expectedGBps is DEGRADED
  /// ("<method>_slow"). Healthy links reach 0.75-0.85 of the link model (docs/performance.md).
  double degradedBelow = 0.5;
  /// Methods that must have run on every pair with P2P for it to be OK; a missing one fails closed like a
  /// probe that did not run. A caller that deliberately probes less (e.g. no second process) says so here.
  std::vector<std::string> requiredMethods = probeMethods();
};

/// One pair's verdict with the findings behind it: what the rules raised for this pair (probe findings'
/// gpus are {src, dst}) and the platform findings that explain it. What the verdict cache stores.
struct PairDecision {
  PairVerdict verdict;
  std::vector<Finding> findings;  ///< raised by the rules below for this pair
  std::vector<Finding> platform;  ///< platform findings among the verdict's reasons
};

/// Decides every directed pair's verdict, in these steps (docs/doctor-verdicts.md):
///  1. Each probe for the pair that ran: wrong bytes -> BROKEN "<method>_dropped" when every wrong byte
///     never landed (lostBytes: the ACS/IOMMU signature), else
///     "<method>_corrupted"; a passed deadline -> BROKEN "<method>_timeout"; measured bandwidth (gbps > 0;
///     0 means not measured, as in --quick) below degradedBelow x expectedGBps -> DEGRADED "<method>_slow".
///  2. No cudaDeviceCanAccessPeer: UNSUPPORTED "p2p_not_reported", unless step 1 found wrong data or a hang.
///     Probes that did not run are expected there and are not failures.
///  3. A required method that did not run (ran = false, or no result at all) fails closed: BROKEN
///     "<method>_not_run", unless the topology says it cannot work: cumem without POSIX-fd handles on both
///     GPUs -> DEGRADED "cumem_unavailable".
///  4. Platform findings naming the pair (Finding::gpus holds src or dst): a Degraded one raises the pair to
///     at least DEGRADED; a Broken one never overrides passing probes -- the pair becomes DEGRADED
///     "<code>_but_probe_passed" -- and on a pair the probes found BROKEN it joins the reasons. On
///     UNSUPPORTED pairs they only join the reasons. Ok- and Unsupported-severity findings change no verdict.
///  5. Overall: the worst pair verdict, UNSUPPORTED pairs counting as OK, and BROKEN when a platform-wide
///     finding (no gpus) is Broken.
/// Throws Error(InvalidUsage) for a probe naming a pair the topology does not have.
std::vector<PairDecision> decidePairs(const Topology& topology, const std::vector<Finding>& platformFindings,
                                      const std::vector<ProbeResult>& probes, const VerdictThresholds& thresholds = {});

/// Steps 1-5: the pairs decided as above, assembled with the platform findings.
DoctorReport decideVerdicts(const Topology& topology, const std::vector<Finding>& platformFindings,
                            const std::vector<ProbeResult>& probes, const VerdictThresholds& thresholds = {});

/// The report of pair decisions (decided now or loaded from the cache) and this run's platform findings:
/// pairs in (src, dst) order; findings de-duplicated and sorted most severe first, within one severity the
/// pairs' own findings before the platform's; the overall verdict as in step 5.
DoctorReport assembleReport(const std::vector<PairDecision>& decisions, const std::vector<Finding>& platformFindings);

/// The verdict verdictName spells `name` (exactly); nullopt for anything else.
std::optional<Verdict> parseVerdictName(const std::string& name);

/// Severity rank for sorting, most severe first: Broken 3, Degraded 2, Unsupported 1, Ok 0.
int verdictRank(Verdict verdict) noexcept;

}  // namespace peerlink
