// Doctor verdicts from synthetic probe results on topology fixtures, and how the CLI writes them.
#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "doctor/doctor_verdict.hpp"
#include "doctor_format.hpp"
#include "exit_codes.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

void PrintTo(Verdict verdict, std::ostream* out) {
  *out << verdictName(verdict);
}

namespace {

namespace fs = std::filesystem;

Topology load(const std::string& name) {
  return loadTopologyFile((fs::path(PEERLINK_FIXTURES_DIR) / "topologies" / (name + ".json")).string());
}

// What a healthy machine reports: every method ran on every P2P pair, data intact, 80% of the link model
// (the flag handshake measures no bandwidth).
std::vector<ProbeResult> passingProbes(const Topology& topology) {
  std::vector<ProbeResult> probes;
  for (const GpuPair& pair : topology.pairs) {
    if (!pair.canAccessPeer) continue;
    for (const std::string& method : probeMethods()) {
      ProbeResult probe;
      probe.src = pair.src;
      probe.dst = pair.dst;
      probe.method = method;
      probe.ran = true;
      probe.gbps = method == "flag_handshake" ? 0 : 0.8 * pair.expectedGBps;
      probes.push_back(probe);
    }
  }
  return probes;
}

ProbeResult& probeOf(std::vector<ProbeResult>& probes, int src, int dst, const std::string& method) {
  for (ProbeResult& probe : probes) {
    if (probe.src == src && probe.dst == dst && probe.method == method) return probe;
  }
  throw std::runtime_error("no probe " + method);
}

const PairVerdict& pairOf(const DoctorReport& report, int src, int dst) {
  for (const PairVerdict& pair : report.pairs) {
    if (pair.src == src && pair.dst == dst) return pair;
  }
  throw std::runtime_error("no pair");
}

bool hasReason(const PairVerdict& pair, const std::string& code) {
  return std::find(pair.reasons.begin(), pair.reasons.end(), code) != pair.reasons.end();
}

const Finding* findingOf(const DoctorReport& report, const std::string& code) {
  for (const Finding& finding : report.findings) {
    if (finding.code == code) return &finding;
  }
  return nullptr;
}

// Every pair but the listed ones has `verdict`.
void expectOthers(const DoctorReport& report, const std::vector<std::pair<int, int>>& except, Verdict verdict) {
  for (const PairVerdict& pair : report.pairs) {
    if (std::find(except.begin(), except.end(), std::make_pair(pair.src, pair.dst)) != except.end()) continue;
    EXPECT_EQ(pair.verdict, verdict) << pair.src << " -> " << pair.dst;
  }
}

TEST(DoctorVerdict, AllPassIsOkWhereP2pIsOfferedAndUnsupportedElsewhere) {
  for (const char* name : {"h200x4_vm", "dual_socket_pcie", "h100x8_nvswitch"}) {
    SCOPED_TRACE(name);
    const Topology topology = load(name);
    const DoctorReport report = decideVerdicts(topology, {}, passingProbes(topology));
    ASSERT_EQ(report.pairs.size(), topology.pairs.size());
    for (const PairVerdict& pair : report.pairs) {
      const bool p2p = topology.pair(pair.src, pair.dst).canAccessPeer;
      EXPECT_EQ(pair.verdict, p2p ? Verdict::Ok : Verdict::Unsupported) << pair.src << " -> " << pair.dst;
      EXPECT_EQ(pair.reasons, p2p ? std::vector<std::string>{} : std::vector<std::string>{"p2p_not_reported"});
    }
    EXPECT_EQ(report.overall, Verdict::Ok);
    EXPECT_EQ(cli::doctorExitCode(report), cli::kExitOk);
  }
}

TEST(DoctorVerdict, ReadDroppedWhileWriteWorksBreaksThatDirectionOnly) {
  const Topology topology = load("h200x4_vm");
  std::vector<ProbeResult> probes = passingProbes(topology);
  probeOf(probes, 0, 1, "ce_read").wrongBytes = 4096;
  probeOf(probes, 0, 1, "ce_read").lostBytes = 4096;
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  EXPECT_EQ(pairOf(report, 0, 1).verdict, Verdict::Broken);
  EXPECT_EQ(pairOf(report, 0, 1).reasons, std::vector<std::string>{"ce_read_dropped"});
  expectOthers(report, {{0, 1}}, Verdict::Ok);
  EXPECT_EQ(report.overall, Verdict::Broken);
  EXPECT_EQ(cli::doctorExitCode(report), cli::kExitBroken);
  const Finding* finding = findingOf(report, "ce_read_dropped");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->gpus, (std::vector<int>{0, 1}));
  EXPECT_NE(finding->summary.find("GPU 0 -> GPU 1"), std::string::npos);
  EXPECT_NE(finding->summary.find("reads never landed"), std::string::npos);
  EXPECT_FALSE(finding->fix.empty());
}

TEST(DoctorVerdict, CopyEngineFineButSmCorruptsIsSmCorrupted) {
  const Topology topology = load("dual_socket_pcie");
  std::vector<ProbeResult> probes = passingProbes(topology);
  probeOf(probes, 1, 2, "sm_write").wrongBytes = 100;
  probeOf(probes, 1, 2, "sm_write").lostBytes = 3;  // some zeros among garbage: corruption, not a drop
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  EXPECT_EQ(pairOf(report, 1, 2).verdict, Verdict::Broken);
  EXPECT_EQ(pairOf(report, 1, 2).reasons, std::vector<std::string>{"sm_write_corrupted"});
  EXPECT_EQ(pairOf(report, 2, 1).verdict, Verdict::Ok);
  EXPECT_EQ(findingOf(report, "ce_write_corrupted"), nullptr);
}

TEST(DoctorVerdict, TimeoutIsBrokenAndNotAlsoNotRun) {
  const Topology topology = load("h200x4_vm");
  std::vector<ProbeResult> probes = passingProbes(topology);
  ProbeResult& hung = probeOf(probes, 2, 3, "sm_write");
  hung.ran = false;  // the deadline cut it short
  hung.timedOut = true;
  hung.gbps = 0;
  ProbeResult& late = probeOf(probes, 3, 2, "flag_handshake");
  late.timedOut = true;
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  EXPECT_EQ(pairOf(report, 2, 3).reasons, std::vector<std::string>{"sm_write_timeout"});
  EXPECT_EQ(pairOf(report, 3, 2).reasons, std::vector<std::string>{"flag_handshake_timeout"});
  EXPECT_EQ(pairOf(report, 2, 3).verdict, Verdict::Broken);
  expectOthers(report, {{2, 3}, {3, 2}}, Verdict::Ok);
}

TEST(DoctorVerdict, ProbeThatDidNotRunFailsClosed) {
  const Topology topology = load("h200x4_vm");
  std::vector<ProbeResult> probes = passingProbes(topology);
  ProbeResult& ipc = probeOf(probes, 0, 2, "ipc");
  ipc.ran = false;
  ipc.error = "the second process could not start";
  probes.erase(std::remove_if(probes.begin(), probes.end(),
                              [](const ProbeResult& p) { return p.src == 1 && p.dst == 3 && p.method == "sm_read"; }),
               probes.end());
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  EXPECT_EQ(pairOf(report, 0, 2).verdict, Verdict::Broken);
  EXPECT_EQ(pairOf(report, 0, 2).reasons, std::vector<std::string>{"ipc_not_run"});
  EXPECT_NE(findingOf(report, "ipc_not_run")->summary.find("could not start"), std::string::npos);
  EXPECT_EQ(pairOf(report, 1, 3).reasons, std::vector<std::string>{"sm_read_not_run"});  // no result at all

  // With no probe at all, nothing is OK.
  const DoctorReport none = decideVerdicts(topology, {}, {});
  for (const PairVerdict& pair : none.pairs) {
    EXPECT_EQ(pair.verdict, Verdict::Broken);
    EXPECT_EQ(pair.reasons.size(), probeMethods().size());
  }

  // A caller that deliberately runs fewer methods says so.
  VerdictThresholds inProcess;
  inProcess.requiredMethods = {"ce_write", "ce_read", "sm_write", "sm_read", "flag_handshake"};
  EXPECT_EQ(pairOf(decideVerdicts(topology, {}, probes, inProcess), 0, 2).verdict, Verdict::Ok);
}

TEST(DoctorVerdict, SlowIsDegradedAndUnmeasuredIsNotSlow) {
  const Topology topology = load("dual_socket_pcie");
  std::vector<ProbeResult> probes = passingProbes(topology);
  const double expected = topology.pair(0, 1).expectedGBps;
  probeOf(probes, 0, 1, "ce_write").gbps = 0.3 * expected;
  probeOf(probes, 1, 0, "sm_read").gbps = 0.51 * expected;
  probeOf(probes, 2, 1, "ipc").gbps = 0;  // --quick: not measured
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  EXPECT_EQ(pairOf(report, 0, 1).verdict, Verdict::Degraded);
  EXPECT_EQ(pairOf(report, 0, 1).reasons, std::vector<std::string>{"ce_write_slow"});
  EXPECT_NE(findingOf(report, "ce_write_slow")->summary.find("30%"), std::string::npos);
  EXPECT_EQ(pairOf(report, 1, 0).verdict, Verdict::Ok);
  EXPECT_EQ(pairOf(report, 2, 1).verdict, Verdict::Ok);
  EXPECT_EQ(report.overall, Verdict::Degraded);
  EXPECT_EQ(cli::doctorExitCode(report), cli::kExitDegraded);

  VerdictThresholds strict;
  strict.degradedBelow = 0.9;  // everything at 80% is now slow
  EXPECT_EQ(pairOf(decideVerdicts(topology, {}, passingProbes(topology), strict), 1, 2).verdict, Verdict::Degraded);
}

TEST(DoctorVerdict, NoP2pIsUnsupportedAndOverallOk) {
  const Topology topology = load("rtx4090x2");
  const DoctorReport report = decideVerdicts(topology, {}, {});
  for (const PairVerdict& pair : report.pairs) {
    EXPECT_EQ(pair.verdict, Verdict::Unsupported);
    EXPECT_EQ(pair.reasons, std::vector<std::string>{"p2p_not_reported"});
  }
  EXPECT_EQ(report.overall, Verdict::Ok);
  EXPECT_EQ(cli::doctorExitCode(report), cli::kExitOk);

  // Probes that could not run there are expected; one that ran and returned wrong data is still BROKEN.
  ProbeResult notRun{0, 1, "sm_write", false, false, 0, 0, 0, "peer access not supported", "", 0};
  ProbeResult staged{1, 0, "ce_write", true, false, 64, 0, 20.0, "", "", 0};
  const DoctorReport mixed = decideVerdicts(topology, {}, {notRun, staged});
  EXPECT_EQ(pairOf(mixed, 0, 1).verdict, Verdict::Unsupported);
  EXPECT_EQ(pairOf(mixed, 1, 0).verdict, Verdict::Broken);
  EXPECT_EQ(pairOf(mixed, 1, 0).reasons, std::vector<std::string>{"ce_write_corrupted"});
}

TEST(DoctorVerdict, CumemWithoutPosixFdHandlesIsACaveatNotAFailure) {
  Topology topology = load("h200x4_vm");
  topology.gpus[1].handles.posixFd = false;
  std::vector<ProbeResult> probes = passingProbes(topology);
  for (ProbeResult& probe : probes) {
    if (probe.method == "cumem" && (probe.src == 1 || probe.dst == 1)) probe.ran = false;
  }
  probeOf(probes, 2, 3, "cumem").ran = false;  // both GPUs can: fails closed
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  for (const PairVerdict& pair : report.pairs) {
    SCOPED_TRACE(testing::Message() << pair.src << " -> " << pair.dst);
    if (pair.src == 1 || pair.dst == 1) {
      EXPECT_EQ(pair.verdict, Verdict::Ok);  // IPC still shares memory: a note, not a degradation
      EXPECT_EQ(pair.reasons, std::vector<std::string>{"cumem_unavailable"});
    } else if (pair.src == 2 && pair.dst == 3) {
      EXPECT_EQ(pair.reasons, std::vector<std::string>{"cumem_not_run"});
    } else {
      EXPECT_EQ(pair.verdict, Verdict::Ok);
    }
  }
}

Finding platform(const std::string& code, Verdict severity, std::vector<int> gpus) {
  return Finding{code, severity, code + " on the bridge above the GPUs", "fix " + code, std::move(gpus), ""};
}

TEST(DoctorVerdict, BrokenPlatformFindingWithPassingProbeIsDegraded) {
  const Topology topology = load("dual_socket_pcie");
  const std::vector<Finding> acs = {platform("acs_redirect", Verdict::Broken, {1, 2})};
  std::vector<ProbeResult> probes = passingProbes(topology);
  probeOf(probes, 1, 2, "ce_write").wrongBytes = 8;
  probeOf(probes, 1, 2, "ce_write").lostBytes = 8;
  const DoctorReport report = decideVerdicts(topology, acs, probes);
  // The probe found 1 -> 2 broken: the platform finding explains it.
  EXPECT_EQ(pairOf(report, 1, 2).verdict, Verdict::Broken);
  EXPECT_EQ(pairOf(report, 1, 2).reasons, (std::vector<std::string>{"ce_write_dropped", "acs_redirect"}));
  // The other direction of that pair works: the functional verdict wins, the caveat stays.
  EXPECT_EQ(pairOf(report, 2, 1).verdict, Verdict::Degraded);
  EXPECT_EQ(pairOf(report, 2, 1).reasons, std::vector<std::string>{"acs_redirect_but_probe_passed"});
  // A finding that names two GPUs is about that pair only: pairs sharing one of its GPUs are untouched.
  for (auto [src, dst] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}, {0, 2}, {2, 0}}) {
    EXPECT_EQ(pairOf(report, src, dst).verdict, Verdict::Ok) << src << " -> " << dst;
    EXPECT_TRUE(pairOf(report, src, dst).reasons.empty()) << src << " -> " << dst;
  }
  const Finding* caveat = findingOf(report, "acs_redirect_but_probe_passed");
  ASSERT_NE(caveat, nullptr);
  EXPECT_EQ(caveat->severity, Verdict::Degraded);
  EXPECT_EQ(caveat->fix, "fix acs_redirect");
  // No P2P to GPU 3: UNSUPPORTED, and the 1-2 finding is not its business.
  EXPECT_EQ(pairOf(report, 1, 3).verdict, Verdict::Unsupported);
  EXPECT_FALSE(hasReason(pairOf(report, 1, 3), "acs_redirect"));
  EXPECT_EQ(pairOf(report, 0, 3).reasons, std::vector<std::string>{"p2p_not_reported"});

  // Findings: most severe first, and within a severity the probe's before the platform's.
  ASSERT_GE(report.findings.size(), 3u);
  EXPECT_EQ(report.findings[0].code, "ce_write_dropped");
  EXPECT_EQ(report.findings[1].code, "acs_redirect");
  for (std::size_t i = 1; i < report.findings.size(); ++i) {
    EXPECT_GE(verdictRank(report.findings[i - 1].severity), verdictRank(report.findings[i].severity));
  }
  EXPECT_EQ(std::count_if(report.findings.begin(), report.findings.end(),
                          [](const Finding& f) { return f.code == "acs_redirect"; }),
            1);
}

TEST(DoctorVerdict, DegradedAndPlatformWideFindings) {
  const Topology topology = load("h200x4_vm");
  const std::vector<ProbeResult> probes = passingProbes(topology);
  const DoctorReport trained =
      decideVerdicts(topology, {platform("link_trained_down", Verdict::Degraded, {3})}, probes);
  for (const PairVerdict& pair : trained.pairs) {
    const bool touches = pair.src == 3 || pair.dst == 3;
    EXPECT_EQ(pair.verdict, touches ? Verdict::Degraded : Verdict::Ok) << pair.src << " -> " << pair.dst;
    EXPECT_EQ(hasReason(pair, "link_trained_down"), touches);
  }
  EXPECT_EQ(trained.overall, Verdict::Degraded);

  // Platform-wide: a Broken one stands on its own, a Degraded or informational one is advice.
  const DoctorReport shm = decideVerdicts(topology, {platform("dev_shm_too_small", Verdict::Broken, {})}, probes);
  expectOthers(shm, {}, Verdict::Ok);
  EXPECT_EQ(shm.overall, Verdict::Broken);
  EXPECT_EQ(cli::doctorExitCode(shm), cli::kExitBroken);
  const DoctorReport vm = decideVerdicts(
      topology, {platform("hypervisor", Verdict::Degraded, {}), platform("note", Verdict::Ok, {0, 1})}, probes);
  expectOthers(vm, {}, Verdict::Ok);
  EXPECT_EQ(vm.overall, Verdict::Ok);
  EXPECT_EQ(vm.findings.size(), 2u);
}

TEST(DoctorVerdict, ProbeOutsideTheTopologyIsAnError) {
  const Topology topology = load("rtx4090x2");
  ProbeResult self{1, 1, "ce_write", true, false, 0, 0, 1.0, "", "", 0};
  EXPECT_THROW(decideVerdicts(topology, {}, {self}), Error);
  self.dst = 2;
  EXPECT_THROW(decideVerdicts(topology, {}, {self}), Error);
}

TEST(DoctorVerdict, AssembledFromPairDecisionsMatchesDecideVerdicts) {
  const Topology topology = load("dual_socket_pcie");
  std::vector<ProbeResult> probes = passingProbes(topology);
  probeOf(probes, 0, 2, "sm_read").timedOut = true;
  const std::vector<Finding> findings = {platform("acs_redirect", Verdict::Broken, {0}),
                                         platform("ptrace_scope", Verdict::Degraded, {})};
  const DoctorReport direct = decideVerdicts(topology, findings, probes);
  std::vector<PairDecision> decisions = decidePairs(topology, findings, probes);
  std::reverse(decisions.begin(), decisions.end());  // e.g. some from the cache, some probed now
  const DoctorReport assembled = assembleReport(decisions, findings);
  EXPECT_EQ(assembled.overall, direct.overall);
  ASSERT_EQ(assembled.pairs.size(), direct.pairs.size());
  for (std::size_t i = 0; i < direct.pairs.size(); ++i) {
    EXPECT_EQ(assembled.pairs[i].src, direct.pairs[i].src);
    EXPECT_EQ(assembled.pairs[i].dst, direct.pairs[i].dst);
    EXPECT_EQ(assembled.pairs[i].verdict, direct.pairs[i].verdict);
    EXPECT_EQ(assembled.pairs[i].reasons, direct.pairs[i].reasons);
  }
  EXPECT_EQ(assembled.findings.size(), direct.findings.size());
}

TEST(DoctorFormat, TextShowsTheMatrixReasonsAndFixes) {
  const Topology topology = load("dual_socket_pcie");
  std::vector<ProbeResult> probes = passingProbes(topology);
  probeOf(probes, 0, 1, "ce_read").wrongBytes = 4096;
  probeOf(probes, 0, 1, "ce_read").lostBytes = 4096;
  probeOf(probes, 2, 1, "sm_write").gbps = 1.0;
  const std::string text = cli::formatDoctorText(topology, decideVerdicts(topology, {}, probes));
  EXPECT_NE(text.find("Verdict  GPU(row) -> GPU(column)"), std::string::npos) << text;
  EXPECT_NE(text.find("BROKEN[1]"), std::string::npos) << text;
  EXPECT_NE(text.find("[1] ce_read_dropped"), std::string::npos) << text;
  EXPECT_NE(text.find("N/A[2]"), std::string::npos) << text;  // tags in reading order, shared by same reasons
  EXPECT_NE(text.find("[2] p2p_not_reported\n"), std::string::npos) << text;
  EXPECT_NE(text.find("DEGRADED[3]"), std::string::npos) << text;
  EXPECT_NE(text.find("[3] sm_write_slow\n"), std::string::npos) << text;
  EXPECT_NE(text.find("BROKEN ce_read_dropped\n  - GPU 0 -> GPU 1 ce_read"), std::string::npos) << text;
  EXPECT_NE(text.find("  fix: find the cause among the platform findings"), std::string::npos) << text;
  EXPECT_NE(text.find("N/A p2p_not_reported (6 times)"), std::string::npos) << text;
  EXPECT_LT(text.find("BROKEN ce_read_dropped"), text.find("DEGRADED sm_write_slow"));
  EXPECT_LT(text.find("DEGRADED sm_write_slow"), text.find("N/A p2p_not_reported"));
  EXPECT_NE(text.find("Overall: BROKEN (exit 5)"), std::string::npos) << text;

  const Topology rtx = load("rtx4090x2");
  const std::string none = cli::formatDoctorText(rtx, decideVerdicts(rtx, {}, {}));
  EXPECT_NE(none.find("Overall: OK (exit 0)"), std::string::npos) << none;
}

TEST(DoctorFormat, JsonRoundTripsTheNumbers) {
  const Topology topology = load("h200x4_vm");
  std::vector<ProbeResult> probes = passingProbes(topology);
  probeOf(probes, 3, 0, "sm_read").wrongBytes = (1ull << 40) + 3;
  probeOf(probes, 3, 0, "sm_read").lostBytes = 1ull << 40;
  probeOf(probes, 1, 2, "ce_write").gbps = 123.456789012345;
  probeOf(probes, 2, 1, "ipc").ran = false;
  probeOf(probes, 2, 1, "ipc").error = "no \"second\" process";
  const DoctorReport report =
      decideVerdicts(topology, {platform("iommu_translated", Verdict::Degraded, {0, 1, 2, 3})}, probes);
  const nlohmann::json document = cli::doctorToJson(topology, report, probes);
  EXPECT_EQ(document.at("schema"), "peerlink.doctor");
  EXPECT_EQ(document.at("version"), 1);
  EXPECT_EQ(document.at("overall"), "BROKEN");
  EXPECT_EQ(document.at("exit_code"), 5);
  EXPECT_EQ(document.at("pairs").size(), 12u);
  EXPECT_EQ(document.at("pairs")[0].at("link"), "NV18");
  EXPECT_DOUBLE_EQ(document.at("pairs")[0].at("expected_gbps").get<double>(), 478.125);
  EXPECT_EQ(document.at("topology").at("gpus").size(), 4u);

  const cli::SavedDoctorRun saved = cli::doctorFromJson(nlohmann::json::parse(document.dump(2)));
  EXPECT_EQ(saved.report.overall, report.overall);
  ASSERT_EQ(saved.report.pairs.size(), report.pairs.size());
  for (std::size_t i = 0; i < report.pairs.size(); ++i) {
    EXPECT_EQ(saved.report.pairs[i].src, report.pairs[i].src);
    EXPECT_EQ(saved.report.pairs[i].verdict, report.pairs[i].verdict);
    EXPECT_EQ(saved.report.pairs[i].reasons, report.pairs[i].reasons);
  }
  ASSERT_EQ(saved.report.findings.size(), report.findings.size());
  for (std::size_t i = 0; i < report.findings.size(); ++i) {
    EXPECT_EQ(saved.report.findings[i].code, report.findings[i].code);
    EXPECT_EQ(saved.report.findings[i].severity, report.findings[i].severity);
    EXPECT_EQ(saved.report.findings[i].summary, report.findings[i].summary);
    EXPECT_EQ(saved.report.findings[i].fix, report.findings[i].fix);
    EXPECT_EQ(saved.report.findings[i].gpus, report.findings[i].gpus);
  }
  ASSERT_EQ(saved.probes.size(), probes.size());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    EXPECT_EQ(saved.probes[i].src, probes[i].src);
    EXPECT_EQ(saved.probes[i].dst, probes[i].dst);
    EXPECT_EQ(saved.probes[i].method, probes[i].method);
    EXPECT_EQ(saved.probes[i].ran, probes[i].ran);
    EXPECT_EQ(saved.probes[i].timedOut, probes[i].timedOut);
    EXPECT_EQ(saved.probes[i].wrongBytes, probes[i].wrongBytes);
    EXPECT_EQ(saved.probes[i].lostBytes, probes[i].lostBytes);
    EXPECT_EQ(saved.probes[i].gbps, probes[i].gbps);  // exactly: JSON numbers round-trip doubles
    EXPECT_EQ(saved.probes[i].error, probes[i].error);
  }
  // Efficiency is a number where both figures are known, null where nothing was measured.
  for (const nlohmann::json& probe : document.at("probes")) {
    EXPECT_EQ(probe.at("efficiency").is_null(), probe.at("gbps").get<double>() == 0);
  }

  nlohmann::json foreign = document;
  foreign["version"] = 2;
  EXPECT_THROW(cli::doctorFromJson(foreign), Error);
  EXPECT_THROW(cli::doctorFromJson(nlohmann::json{{"schema", "peerlink.bench"}}), Error);
}

TEST(DoctorFormat, ExitCodes) {
  DoctorReport report;
  EXPECT_EQ(cli::doctorExitCode(report), 0);
  report.overall = Verdict::Unsupported;
  EXPECT_EQ(cli::doctorExitCode(report), 0);
  report.overall = Verdict::Degraded;
  EXPECT_EQ(cli::doctorExitCode(report), 4);
  report.overall = Verdict::Broken;
  EXPECT_EQ(cli::doctorExitCode(report), 5);
  EXPECT_EQ(worse(Verdict::Unsupported, Verdict::Ok), Verdict::Unsupported);
  EXPECT_EQ(worse(Verdict::Degraded, Verdict::Unsupported), Verdict::Degraded);
  EXPECT_EQ(worse(Verdict::Degraded, Verdict::Broken), Verdict::Broken);
  EXPECT_STREQ(verdictName(Verdict::Unsupported), "UNSUPPORTED");
  EXPECT_EQ(parseVerdictName("DEGRADED"), Verdict::Degraded);
  EXPECT_EQ(parseVerdictName("degraded"), std::nullopt);
}

TEST(DoctorVerdict, CrossProcessStoppedByAKnownCauseIsDegradedWithItsFix) {
  const Topology topology = load("h200x4_vm");
  std::vector<ProbeResult> probes = passingProbes(topology);
  ProbeResult& ipc = probeOf(probes, 0, 3, "ipc");
  ipc.ran = false;
  ipc.error = "exporter process: GPU 0000:00:09.0 is not visible to the exporting process (CUDA_VISIBLE_DEVICES=0)";
  ipc.errorCause = "peer_hidden";
  ProbeResult& cumem = probeOf(probes, 1, 2, "cumem");
  cumem.ran = false;
  cumem.error = "socket: Too many open files";
  cumem.errorCause = "open_file_limit";
  const DoctorReport report = decideVerdicts(topology, {}, probes);
  EXPECT_EQ(pairOf(report, 0, 3).verdict, Verdict::Degraded);
  EXPECT_EQ(pairOf(report, 0, 3).reasons, std::vector<std::string>{"ipc_peer_hidden"});
  EXPECT_NE(findingOf(report, "ipc_peer_hidden")->fix.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  EXPECT_EQ(pairOf(report, 1, 2).verdict, Verdict::Degraded);
  EXPECT_EQ(pairOf(report, 1, 2).reasons, std::vector<std::string>{"cumem_open_file_limit"});
  EXPECT_NE(findingOf(report, "cumem_open_file_limit")->fix.find("ulimit -n"), std::string::npos);
  // An unknown cause still fails closed.
  ipc.errorCause.clear();
  EXPECT_EQ(pairOf(decideVerdicts(topology, {}, probes), 0, 3).verdict, Verdict::Broken);
}

}  // namespace
}  // namespace peerlink
