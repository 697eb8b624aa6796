#include "doctor/doctor_verdict.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "doctor/shortage_checks.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

constexpr const char* kP2pOffFix =
    "until the cause is fixed, keep P2P off this pair (PEERLINK_P2P_DISABLE=1, and NCCL_P2P_DISABLE=1 for NCCL)";

std::string pairName(int src, int dst) {
  return fmt::format("GPU {} -> GPU {}", src, dst);
}

bool isReadMethod(const std::string& method) {
  return method.size() > 5 && method.compare(method.size() - 5, 5, "_read") == 0;
}

Finding pairFinding(std::string code, Verdict severity, std::string summary, std::string fix, int src, int dst) {
  return Finding{std::move(code), severity, std::move(summary), std::move(fix), {src, dst}, ""};
}

// cuMem sharing needs POSIX-fd export on the exporting GPU and import on the other: without it the CUMEM
// route cannot exist, so a cumem probe that did not run is expected, not a failure.
bool methodInapplicable(const Topology& topology, const GpuPair& pair, const std::string& method) {
  if (method != "cumem") return false;
  const Gpu& src = topology.gpus[static_cast<std::size_t>(pair.src)];
  const Gpu& dst = topology.gpus[static_cast<std::size_t>(pair.dst)];
  return !(src.handles.posixFd && dst.handles.posixFd);
}

void judgeRanProbe(const GpuPair& pair, const ProbeResult& probe, const VerdictThresholds& thresholds,
                   std::vector<Finding>& out) {
  const std::string who = fmt::format("{} {}", pairName(probe.src, probe.dst), probe.method);
  if (probe.timedOut) {
    out.push_back(pairFinding(
        probe.method + "_timeout", Verdict::Broken,
        fmt::format("{}: no completion before the deadline (PEERLINK_TIMEOUT_MS){}: a write was dropped or a GPU "
                    "stopped making progress",
                    who, probe.error.empty() ? "" : " (" + probe.error + ")"),
        std::string("check the platform findings (ACS, IOMMU) and dmesg for Xid/AER errors; if the GPUs were busy "
                    "with other work, rerun with a longer PEERLINK_TIMEOUT_MS and --no-cache; ") +
            kP2pOffFix,
        probe.src, probe.dst));
  }
  if (probe.wrongBytes > 0) {
    // A peer write that never landed leaves the destination's poison; a peer read that is dropped returns all
    // zeros or all ones (a PCIe completion with Unsupported Request / master abort): what PCIe ACS redirect or
    // an IOMMU without a mapping for the peer's BAR does. Any other wrong value is corruption.
    const bool dropped = probe.lostBytes >= probe.wrongBytes;
    const char* access = isReadMethod(probe.method) ? "reads" : "writes";
    if (dropped) {
      out.push_back(pairFinding(
          probe.method + "_dropped", Verdict::Broken,
          fmt::format("{}: {} bytes wrong, none of them written: the {} never landed (the signature of PCIe ACS "
                      "redirect or an IOMMU blocking peer traffic)",
                      who, probe.wrongBytes, access),
          std::string("find the cause among the platform findings (ACS on the bridges between the GPUs, the IOMMU "
                      "mode, e.g. iommu=pt on the kernel command line); ") +
              kP2pOffFix,
          probe.src, probe.dst));
    } else {
      out.push_back(pairFinding(
          probe.method + "_corrupted", Verdict::Broken,
          fmt::format("{}: {} bytes wrong ({} of them never written): data arrives corrupted", who, probe.wrongBytes,
                      probe.lostBytes),
          std::string("check `nvidia-smi -q` for ECC/Xid errors and dmesg for PCIe AER errors, and report it with "
                      "`peerlink doctor --json`; ") +
              kP2pOffFix,
          probe.src, probe.dst));
    }
  }
  if (probe.timedOut || probe.wrongBytes > 0) return;
  // gbps == 0: not measured (--quick, or a method that only checks data); only a measurement can be slow.
  if (probe.gbps > 0 && pair.expectedGBps > 0 && probe.gbps < thresholds.degradedBelow * pair.expectedGBps) {
    out.push_back(pairFinding(
        probe.method + "_slow", Verdict::Degraded,
        fmt::format("{}: {:.1f} GB/s, {:.0f}% of the {:.1f} GB/s the links promise ({}); below {:.0f}%", who,
                    probe.gbps, 100.0 * probe.gbps / pair.expectedGBps, pair.expectedGBps,
                    pair.bandwidthBasis.empty() ? linkLabel(pair) : pair.bandwidthBasis,
                    100.0 * thresholds.degradedBelow),
        "check for links trained down (`nvidia-smi -q -d PCIE`, `nvidia-smi nvlink -s`), other work on the GPUs, "
        "and the platform findings (IOMMU translation, P2P redirected through the root complex)",
        probe.src, probe.dst));
  }
}

// A cross-process probe stopped by a known configuration cause: the data path itself was not shown broken,
// but sharing memory between processes does not work as this system is set up.
std::optional<Finding> knownCauseFinding(const ProbeResult& probe, int src, int dst) {
  if (probe.errorCause == "peer_hidden") {
    return pairFinding(probe.method + "_peer_hidden", Verdict::Degraded,
                       fmt::format("{} {}: the second process cannot see GPU {} ({}), so it cannot share its "
                                   "memory with this one",
                                   pairName(src, dst), probe.method, dst, probe.error),
                       "make both GPUs visible to every process that shares memory (CUDA_VISIBLE_DEVICES, the "
                       "container's device list); within one process the pair works",
                       src, dst);
  }
  if (probe.errorCause == "open_file_limit") {
    return pairFinding(probe.method + "_open_file_limit", Verdict::Degraded,
                       fmt::format("{} {}: no file descriptor was left to pass the memory handle ({})",
                                   pairName(src, dst), probe.method, probe.error),
                       "raise the open-file limit (`ulimit -n 65536`, LimitNOFILE= in systemd units, --ulimit "
                       "nofile= for containers)",
                       src, dst);
  }
  return std::nullopt;
}

Finding notRunFinding(const ProbeResult* probe, const std::string& method, int src, int dst) {
  if (probe != nullptr) {
    if (std::optional<Finding> known = knownCauseFinding(*probe, src, dst)) return *known;
  }
  const std::string why = probe == nullptr       ? "no result was reported"
                          : probe->error.empty() ? "it could not run"
                                                 : "it could not run: " + probe->error;
  const bool crossProcess = method == "ipc" || method == "cumem";
  return pairFinding(method + "_not_run", Verdict::Broken,
                     fmt::format("{} {}: {}; a pair that was not tested is not OK", pairName(src, dst), method, why),
                     crossProcess
                         ? "fix what stopped the second process (see the platform findings on namespaces, /dev/shm, "
                           "open-file limit, ptrace scope), then rerun `peerlink doctor --no-cache`"
                         : "fix the error above, then rerun `peerlink doctor --no-cache`",
                     src, dst);
}

// A finding naming exactly two GPUs is about that pair (both directions); one naming one GPU (or more than
// two) concerns every pair that GPU is part of.
bool concernsPair(const Finding& finding, int src, int dst) {
  const auto names = [&](int gpu) {
    return std::find(finding.gpus.begin(), finding.gpus.end(), gpu) != finding.gpus.end();
  };
  if (finding.gpus.size() == 2) return names(src) && names(dst);
  return names(src) || names(dst);
}

void sortBySeverity(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return verdictRank(a.severity) > verdictRank(b.severity);
  });
}

// The pair's reasons: codes of the findings behind its verdict, most severe first, each once.
std::vector<std::string> reasonCodes(std::vector<Finding> findings) {
  sortBySeverity(findings);
  std::vector<std::string> codes;
  for (const Finding& finding : findings) {
    if (std::find(codes.begin(), codes.end(), finding.code) == codes.end()) codes.push_back(finding.code);
  }
  return codes;
}

Finding cumemUnavailable(int src, int dst) {
  return pairFinding("cumem_unavailable", Verdict::Ok,
                     fmt::format("{} cumem: the GPUs' driver cannot export cuMem allocations as POSIX file "
                                 "descriptors, so other processes share memory through legacy CUDA IPC only",
                                 pairName(src, dst)),
                     "nothing is wrong with the data path (IPC works); a driver and GPU with POSIX-fd handles "
                     "(cudaDevAttrHandleTypePosixFileDescriptorSupported) enable CUMEM",
                     src, dst);
}

bool anyBroken(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Verdict::Broken; });
}

// Step 3: every required method must have run; what did not is a failure unless the topology rules it out.
void requireMethods(const Topology& topology, const GpuPair& pair, const std::vector<const ProbeResult*>& probes,
                    const VerdictThresholds& thresholds, std::vector<Finding>& own) {
  for (const std::string& method : thresholds.requiredMethods) {
    bool anyRan = false;
    std::vector<const ProbeResult*> notRun;
    for (const ProbeResult* probe : probes) {
      if (probe->method != method) continue;
      if (probe->ran || probe->timedOut) {
        anyRan = true;
      } else {
        notRun.push_back(probe);
      }
    }
    if (!anyRan && notRun.empty()) notRun.push_back(nullptr);
    if (notRun.empty()) continue;
    if (methodInapplicable(topology, pair, method)) {
      if (!anyRan) own.push_back(cumemUnavailable(pair.src, pair.dst));
      continue;
    }
    // Every result counts: one that ran does not excuse another that did not.
    for (const ProbeResult* probe : notRun) own.push_back(notRunFinding(probe, method, pair.src, pair.dst));
  }
}

PairDecision decidePair(const Topology& topology, const GpuPair& pair, const std::vector<const ProbeResult*>& probes,
                        const std::vector<Finding>& platformFindings, const VerdictThresholds& thresholds) {
  PairDecision decision;
  PairVerdict& verdict = decision.verdict;
  verdict.src = pair.src;
  verdict.dst = pair.dst;
  std::vector<Finding>& own = decision.findings;
  for (const ProbeResult* probe : probes) {
    if (probe->ran || probe->timedOut) judgeRanProbe(pair, *probe, thresholds, own);
  }
  if (!pair.canAccessPeer && !anyBroken(own)) {
    own.clear();  // a slow figure means nothing where no P2P was promised
    own.push_back(pairFinding(
        "p2p_not_reported", Verdict::Unsupported,
        fmt::format("{}: CUDA reports no peer access (cudaDeviceCanAccessPeer = 0, path {}); traffic goes through "
                    "host memory or a relay GPU",
                    pairName(pair.src, pair.dst), pathClassName(pair.path)),
        "nothing to fix for correctness: the driver does not offer P2P here (consumer GPUs, across CPU sockets, "
        "some VMs); `peerlink topo` shows the path",
        pair.src, pair.dst));
    for (const Finding& finding : platformFindings) {
      if (finding.severity != Verdict::Ok && concernsPair(finding, pair.src, pair.dst)) {
        decision.platform.push_back(finding);
      }
    }
    verdict.verdict = Verdict::Unsupported;
  } else {
    if (pair.canAccessPeer) requireMethods(topology, pair, probes, thresholds, own);
    const bool functionalBroken = anyBroken(own);
    verdict.verdict = Verdict::Ok;
    for (const Finding& finding : platformFindings) {
      if (!concernsPair(finding, pair.src, pair.dst)) continue;
      if (finding.severity == Verdict::Degraded || (finding.severity == Verdict::Broken && functionalBroken)) {
        decision.platform.push_back(finding);
      } else if (finding.severity == Verdict::Broken) {
        // The functional verdict wins: bytes demonstrably arrive intact, so the pair is not BROKEN; the
        // platform's objection stays visible as a caveat (often the reason it is slower than it should be).
        own.push_back(pairFinding(
            finding.code + "_but_probe_passed", Verdict::Degraded,
            fmt::format("{}: every functional probe passed although the platform check {} expects this pair to "
                        "fail: the path works here, often slower (e.g. through the root complex)",
                        pairName(pair.src, pair.dst), finding.code),
            finding.fix, pair.src, pair.dst));
      }
    }
    for (const Finding& finding : own) verdict.verdict = worse(verdict.verdict, finding.severity);
    for (const Finding& finding : decision.platform) verdict.verdict = worse(verdict.verdict, finding.severity);
  }
  std::vector<Finding> behind = own;
  behind.insert(behind.end(), decision.platform.begin(), decision.platform.end());
  verdict.reasons = reasonCodes(std::move(behind));
  return decision;
}

}  // namespace

const char* verdictName(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::Ok: return "OK";
    case Verdict::Degraded: return "DEGRADED";
    case Verdict::Broken: return "BROKEN";
    case Verdict::Unsupported: return "UNSUPPORTED";
  }
  return "?";
}

std::optional<Verdict> parseVerdictName(const std::string& name) {
  for (Verdict verdict : {Verdict::Ok, Verdict::Degraded, Verdict::Broken, Verdict::Unsupported}) {
    if (name == verdictName(verdict)) return verdict;
  }
  return std::nullopt;
}

int verdictRank(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::Ok: return 0;
    case Verdict::Unsupported: return 1;
    case Verdict::Degraded: return 2;
    case Verdict::Broken: return 3;
  }
  return 3;
}

Verdict worse(Verdict a, Verdict b) noexcept {
  return verdictRank(a) >= verdictRank(b) ? a : b;
}

const std::vector<std::string>& probeMethods() {
  static const std::vector<std::string> methods = {"ce_write", "ce_read", "sm_write",      "sm_read",
                                                   "ipc",      "cumem",   "flag_handshake"};
  return methods;
}

std::vector<PairDecision> decidePairs(const Topology& topology, const std::vector<Finding>& platformFindings,
                                      const std::vector<ProbeResult>& probes, const VerdictThresholds& thresholds) {
  const int n = static_cast<int>(topology.gpus.size());
  std::vector<std::vector<const ProbeResult*>> byPair(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (const ProbeResult& probe : probes) {
    if (probe.src < 0 || probe.dst < 0 || probe.src >= n || probe.dst >= n || probe.src == probe.dst) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("probe {} names GPU {} -> GPU {}, not a pair of this {}-GPU topology", probe.method,
                              probe.src, probe.dst, n));
    }
    byPair[static_cast<std::size_t>(probe.src * n + probe.dst)].push_back(&probe);
  }
  std::vector<PairDecision> decisions;
  for (int src = 0; src < n; ++src) {
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      decisions.push_back(decidePair(topology, topology.pair(src, dst), byPair[static_cast<std::size_t>(src * n + dst)],
                                     platformFindings, thresholds));
    }
  }
  return decisions;
}

DoctorReport decideVerdicts(const Topology& topology, const std::vector<Finding>& platformFindings,
                            const std::vector<ProbeResult>& probes, const VerdictThresholds& thresholds) {
  return assembleReport(decidePairs(topology, platformFindings, probes, thresholds), platformFindings);
}

DoctorReport assembleReport(const std::vector<PairDecision>& decisions, const std::vector<Finding>& platformFindings) {
  DoctorReport report;
  std::set<std::tuple<std::string, int, std::string, std::vector<int>>> seen;
  const auto add = [&](const Finding& finding) {
    if (seen.insert({finding.code, verdictRank(finding.severity), finding.summary, finding.gpus}).second) {
      report.findings.push_back(finding);
    }
  };
  // Within one severity the functional result leads and the platform explains.
  for (const PairDecision& decision : decisions) {
    for (const Finding& finding : decision.findings) add(finding);
  }
  for (const PairDecision& decision : decisions) {
    for (const Finding& finding : decision.platform) add(finding);
  }
  for (const Finding& finding : platformFindings) add(finding);
  sortBySeverity(report.findings);
  orderByCause(report.findings);

  for (const PairDecision& decision : decisions) report.pairs.push_back(decision.verdict);
  std::sort(report.pairs.begin(), report.pairs.end(),
            [](const PairVerdict& a, const PairVerdict& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
  report.overall = Verdict::Ok;
  for (const PairVerdict& pair : report.pairs) {
    if (pair.verdict != Verdict::Unsupported) report.overall = worse(report.overall, pair.verdict);
  }
  // Platform-wide problems (process limits, namespaces) are not exercised by a pair's probe, so a Broken one
  // stands on its own; platform-wide Degraded ones are advice and leave the overall verdict alone.
  for (const Finding& finding : report.findings) {
    if (finding.gpus.empty() && finding.severity == Verdict::Broken) report.overall = Verdict::Broken;
  }
  return report;
}

}  // namespace peerlink
