// `peerlink coll --html` without a GPU: a synthetic run (a size behind NCCL, a failed and a wrong
// measurement, a configuration that did not run, text to escape) and round 50's saved 4xH200 runs rendered
// as HTML, the page rendered in headless Chromium where it is installed, and the CLI's --html flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "coll_bench/coll_bench.hpp"
#include "coll_html.hpp"
#include "coll_json_read.hpp"
#include "exit_codes.hpp"
#include "report_test_support.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;

const std::string kRound50 = std::string(PEERLINK_FIXTURES_DIR) + "/runs/2026-11-27-h200x4-round50-sweep/";
const std::string kAllReduce = kRound50 + "call-a-h200/coll-all_reduce.json";
const std::string kSendRecv = kRound50 + "call-g-h200/coll-send_recv.json";

CollMeasurement measured(double us, double busbw) {
  CollMeasurement m;
  m.status = CollMeasurement::Status::Ok;
  m.timeUs = us;
  m.busbwGBps = busbw;
  m.wrong = 0;
  return m;
}

// All-reduce at 8 B, 1 MiB and 1 GiB on 4 ranks: peerlink's graph ahead at 8 B and 1 GiB, behind at 1 MiB
// (0.80x); eager failed at 1 GiB out of place, 3 elements wrong in place at 1 MiB; NCCL's symmetric
// configuration not run, with a reason that needs escaping.
coll::CollRun syntheticRun() {
  coll::CollRun run;
  run.options.collective = Collective::AllReduce;
  run.options.sizes = {8, 1 << 20, std::size_t{1} << 30};
  run.ranks = 4;
  run.devices = {0, 1, 2, 3};
  run.deviceNames = {"NVIDIA H200", "NVIDIA H200", "NVIDIA H200", "NVIDIA H200"};
  run.deviceBusIds = {"0000:00:06.0", "0000:00:07.0", "0000:00:08.0", "0000:00:09.0"};
  run.creationMilliseconds = 61.5;
  run.nccl.loaded = true;
  run.nccl.version = "2.28.9";
  run.nccl.path = "/opt/nccl/libnccl.so.2";
  run.nccl.nvls = "NCCL_NVLS_ENABLE=0 (set by the user; left as is)";
  run.nccl.initMilliseconds = 812.25;
  for (CollConfig config : coll::kCollConfigs) run.configs[static_cast<std::size_t>(config)] = {true, ""};
  run.configs[static_cast<std::size_t>(CollConfig::NcclSymmetric)] = {false, "needs NCCL >= 2.27 <window> & more"};
  const auto rowOf = [](std::size_t bytes, double eager, double graph, double nccl, double ncclGraph) {
    coll::CollRow row;
    row.bytes = bytes;
    row.count = bytes / 4;
    row.peerlinkChoice = bytes < 4096 ? "one_shot (ll128): 8 B per rank <= 256 KiB" : "two_shot (two_shot): why";
    for (auto* placement : {&row.outOfPlace, &row.inPlace}) {
      (*placement)[0] = measured(eager, 1);
      (*placement)[1] = measured(graph, 2);
      (*placement)[2] = measured(nccl, 3);
      (*placement)[3] = measured(ncclGraph, 4);
      (*placement)[4].reason = "not available";
    }
    return row;
  };
  run.rows = {rowOf(8, 6.0, 3.0, 25.0, 9.0), rowOf(1 << 20, 14.0, 12.5, 18.0, 10.0),
              rowOf(std::size_t{1} << 30, 4400.0, 4350.0, 4550.0, 4560.0)};
  run.rows[2].outOfPlace[0] = CollMeasurement{};
  run.rows[2].outOfPlace[0].status = CollMeasurement::Status::Failed;
  run.rows[2].outOfPlace[0].reason = "cudaErrorLaunchTimeout <stalled>";
  run.rows[1].inPlace[0].wrong = 3;
  return run;
}

nlohmann::json generatedBy() {
  return {{"tool", "peerlink"},   {"version", "0.1.0"}, {"git_commit", "abc123"},
          {"date", "2026-11-27"}, {"host", "vm"},       {"command", "peerlink coll -b 8 -e 1G -f 1024"}};
}

TEST(CollHtml, ShowsTheRunAgainstNccl) {
  const std::string html = collToHtml(syntheticRun(), generatedBy());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
  expectOffline(html);
  EXPECT_NE(html.find("<h1>peerlink coll: all_reduce (float sum), 4 GPUs</h1>"), std::string::npos);
  for (const char* text :
       {"2.28.9 (/opt/nccl/libnccl.so.2)", "NCCL_NVLS_ENABLE=0", "peerlink 61.5 ms, ncclCommInitAll 812.2 ms",
        "rank 3: GPU 3 NVIDIA H200 [0000:00:09.0]", "abc123", "peerlink coll -b 8 -e 1G -f 1024"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  // Three charts: the ratios, time and busbw per configuration.
  EXPECT_EQ(countOf(html, "<svg class=\"chart\""), 3u);
  EXPECT_NE(html.find("NCCL&#39;s best (1)"), std::string::npos);
  // The graph is behind only at 1 MiB: 10.0 (NCCL graph) / 12.5 = 0.80; eager too, in both placements.
  EXPECT_NE(html.find("<td>graph, out of place</td><td class=\"num\">3</td><td class=\"num behind\">0.80 – "
                      "3.00</td><td>1 MiB (0.800)</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"num ahead\">1.05</td>"), std::string::npos);  // 1 GiB: 4550 / 4350
  // The failed and the wrong measurement, escaped, in their cells and listed.
  EXPECT_NE(html.find("<td class=\"failed\" colspan=\"2\" title=\"cudaErrorLaunchTimeout &lt;stalled&gt;\">"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"failed\">3 wrong</td>"), std::string::npos);
  EXPECT_NE(html.find("2 measurement(s) FAILED"), std::string::npos);
  EXPECT_NE(html.find("1 GiB, out of place, peerlink eager: cudaErrorLaunchTimeout &lt;stalled&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("1 MiB, in place, peerlink eager: 3 elements wrong"), std::string::npos);
  // The configuration that did not run: no columns, its reason listed and escaped.
  EXPECT_EQ(html.find("<th colspan=\"2\">NCCL symmetric + graph</th>"), std::string::npos);
  EXPECT_NE(html.find("NCCL symmetric + graph: needs NCCL &gt;= 2.27 &lt;window&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(html.find("<window>"), std::string::npos);
  // Both placements' tables, peerlink's choice cut at its reason (whole in the tooltip).
  EXPECT_NE(html.find("id=\"out-of-place\""), std::string::npos);
  EXPECT_NE(html.find("id=\"in-place\""), std::string::npos);
  EXPECT_NE(html.find("title=\"two_shot (two_shot): why\">two_shot (two_shot)</td>"), std::string::npos);
}

TEST(CollHtml, WithoutNcclOrInPlace) {
  coll::CollRun run = syntheticRun();
  run.options.collective = Collective::SendRecv;  // no in-place run
  for (CollConfig config : {CollConfig::Nccl, CollConfig::NcclGraph, CollConfig::NcclSymmetric}) {
    run.configs[static_cast<std::size_t>(config)] = {false, "--no-nccl"};
    for (coll::CollRow& row : run.rows) {
      row.outOfPlace[static_cast<std::size_t>(config)] = CollMeasurement{};
      row.inPlace[static_cast<std::size_t>(config)] = CollMeasurement{};
    }
  }
  const std::string html = collToHtml(run, nlohmann::json::object());
  expectOffline(html);
  EXPECT_EQ(html.find("id=\"against-nccl\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"in-place\""), std::string::npos);
  EXPECT_EQ(html.find("best NCCL"), std::string::npos);
  EXPECT_EQ(countOf(html, "<svg class=\"chart\""), 2u);
  EXPECT_NE(html.find("<h1>peerlink coll: send_recv (float), 4 GPUs</h1>"), std::string::npos);
  EXPECT_NE(html.find("<th>git commit</th><td>?</td>"), std::string::npos);  // no metadata: "?"
}

TEST(CollHtml, RendersRound50sSavedRuns) {
  const SavedColl allReduce = loadCollFile(kAllReduce);
  const std::string html = collToHtml(allReduce.run, allReduce.generatedBy);
  expectOffline(html);
  EXPECT_EQ(countOf(html, "<svg class=\"chart\""), 3u);
  // 28 sizes per placement table; graph at or ahead of NCCL's best at every size out of place.
  EXPECT_EQ(countOf(html, "<tr><td class=\"num\">"), 2u * 28u);
  EXPECT_NE(html.find("<td>graph, out of place</td><td class=\"num\">28</td><td class=\"num ahead\">1.00 – "
                      "2.35</td><td>none</td>"),
            std::string::npos);
  EXPECT_NE(html.find("ring (ce_ring_all_reduce)</td>"), std::string::npos);
  // All-gather's smallest rows are 0 bytes (nccl-tests rounds 8 B on 4 ranks down to 16-byte parts): no point
  // of theirs reaches a chart, whose x axis is log2.
  const SavedColl allGather = loadCollFile(kRound50 + "call-a-h200/coll-all_gather.json");
  ASSERT_EQ(allGather.run.rows.front().bytes, 0u);
  const std::string allGatherHtml = collToHtml(allGather.run, allGather.generatedBy);
  EXPECT_EQ(allGatherHtml.find("inf"), std::string::npos);
  EXPECT_EQ(allGatherHtml.find("nan"), std::string::npos);
  EXPECT_EQ(allGatherHtml.find(" at 0 B"), std::string::npos);
  const SavedColl sendRecv = loadCollFile(kSendRecv);
  const std::string sendRecvHtml = collToHtml(sendRecv.run, sendRecv.generatedBy);
  EXPECT_EQ(sendRecvHtml.find("id=\"in-place\""), std::string::npos);
  EXPECT_NE(sendRecvHtml.find("one_shot (ce_copy)</td>"), std::string::npos);
}

// Round 50's seven collectives on 4x H200 in one page: a summary line per run, linked to its section, and
// one chart of the graph's ratios; each run as alone, its ids prefixed.
TEST(CollHtml, SeveralRunsInOnePage) {
  std::vector<SavedColl> runs;
  for (const char* file :
       {"call-a-h200/coll-all_reduce.json", "call-a-h200/coll-all_gather.json", "call-a-h200/coll-reduce_scatter.json",
        "call-a-h200/coll-all_to_all.json", "call-b-h200/coll-broadcast.json", "call-b-h200/coll-reduce.json",
        "call-g-h200/coll-send_recv.json"}) {
    runs.push_back(loadCollFile(kRound50 + file));
  }
  const std::string html = collRunsToHtml(runs);
  expectOffline(html);
  EXPECT_NE(html.find("<h1>peerlink coll: 7 runs</h1>"), std::string::npos);
  // The summary chart, then three per run (ratios, time, busbw).
  EXPECT_EQ(countOf(html, "<svg class=\"chart\""), 1u + 7u * 3u);
  for (int run = 1; run <= 7; ++run) {
    EXPECT_EQ(countOf(html, "<a href=\"#r" + std::to_string(run) + "\">"), 1u) << run;
    EXPECT_EQ(countOf(html, "<h2 id=\"r" + std::to_string(run) + "\">"), 1u) << run;
    EXPECT_EQ(countOf(html, "id=\"r" + std::to_string(run) + "-out-of-place\""), 1u) << run;
  }
  // Every id once.
  std::vector<std::string> ids;
  for (std::size_t at = html.find(" id=\""); at != std::string::npos; at = html.find(" id=\"", at + 1)) {
    ids.push_back(html.substr(at, html.find('"', at + 5) - at));
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_TRUE(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  EXPECT_NE(html.find("<td>512 MiB (0.997), 1 GiB (0.992)</td>"), std::string::npos);  // the reduce, call B
  EXPECT_NE(html.find("peerlink coll: send_recv (float), 4 GPUs</a></td><td>2026-11-27T03:05:43Z</td><td>ee28f42f032b"),
            std::string::npos);
  // One run: collToHtml's page.
  EXPECT_EQ(collRunsToHtml({runs.front()}), collToHtml(runs.front().run, runs.front().generatedBy));
}

TEST(CollHtml, RendersInHeadlessChromium) {
  const std::string chromium = findChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/build.sh installs it)";
  TempDir dir;
  const SavedColl saved = loadCollFile(kAllReduce);
  const std::string html = collToHtml(saved.run, saved.generatedBy);
  const std::string rendered = renderedDom(chromium, dir, "coll", html);
  EXPECT_EQ(countOf(rendered, "<svg class=\"chart\""), 3u);
  EXPECT_EQ(countOf(rendered, "<tr><td class=\"num\">"), 2u * 28u);
}

TEST(CollCommand, HtmlOfASavedRun) {
  TempDir dir;
  const std::string html = (dir / "coll.html").string();
  const CliResult result = runCli({"coll", "--from-json", kAllReduce, "--html", html});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("# peerlink coll: all_reduce"), std::string::npos);  // the text tables too
  const SavedColl saved = loadCollFile(kAllReduce);
  EXPECT_EQ(readFile(html), collToHtml(saved.run, saved.generatedBy));
  const CliResult toStdout = runCli({"coll", "--from-json", kAllReduce, "--html", "-"});
  EXPECT_EQ(toStdout.code, kExitOk) << toStdout.err;
  EXPECT_EQ(toStdout.out, collToHtml(saved.run, saved.generatedBy));  // the HTML alone
}

TEST(CollCommand, SeveralSavedRuns) {
  TempDir dir;
  const std::string html = (dir / "runs.html").string();
  const CliResult result = runCli({"coll", "--from-json", kAllReduce, kSendRecv, "--html", html});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_EQ(result.out.rfind("# " + kAllReduce + "\n# peerlink coll: all_reduce", 0), 0u) << result.out.substr(0, 200);
  EXPECT_NE(result.out.find("\n\n# " + kSendRecv + "\n# peerlink coll: send_recv"), std::string::npos);
  EXPECT_EQ(readFile(html), collRunsToHtml({loadCollFile(kAllReduce), loadCollFile(kSendRecv)}));
}

TEST(CollCommand, HtmlPathsAreCheckedBeforeMeasuring) {
  TempDir dir;
  const std::string missing = (dir / "no-such-folder").string();
  // Without these checks the runs would go on to look for GPUs (exit 3 here) and measure for minutes.
  expectUsageErrors({UsageCase{{"coll", "--html", missing + "/r.html"}, "--html " + missing + "/r.html: folder"},
                     UsageCase{{"coll", "--html", (dir / "").string()}, "is a folder"},
                     UsageCase{{"coll", "--json", "-", "--html", "-"}, "only one of --json and --html"},
                     UsageCase{{"coll", "--explain", "--html", "x.html"}, "excludes"},
                     UsageCase{{"coll", "--from-json", kAllReduce, "--html", missing + "/r.html"}, "does not exist"}});
  EXPECT_FALSE(fs::exists(missing));
}

}  // namespace
}  // namespace peerlink::cli
