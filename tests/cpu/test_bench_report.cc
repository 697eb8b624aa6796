// `peerlink bench --csv/--html/--from-json` without a GPU: the saved round-4 run from the 4xH200 machine
// and synthetic results (failures, N/A, sweeps) read back, written as CSV and HTML, the HTML rendered in
// headless Chromium, and the CLI's checks of output paths before any measuring.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bench_csv.hpp"
#include "bench_html.hpp"
#include "bench_json_read.hpp"
#include "cli.hpp"
#include "cli_runner.hpp"
#include "exit_codes.hpp"
#include "peerlink/error.hpp"
#include "report_test_support.hpp"
#include "svg_chart.hpp"

namespace peerlink::cli {
namespace {

const std::string kRound4 = std::string(PEERLINK_FIXTURES_DIR) + "/runs/2026-11-22-h200x4-round4/bench.json";
const std::string kH200 = std::string(PEERLINK_FIXTURES_DIR) + "/topologies/h200x4_vm.json";

// RFC 4180, as a spreadsheet would read it: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

BenchCell cell(int src, int dst, std::size_t bytes, double gbps, double expected = 0, int via = -1) {
  BenchCell out;
  out.src = src;
  out.dst = dst;
  out.via = via;
  out.bytes = bytes;
  out.gbps = gbps;
  out.medianUs = gbps > 0 ? static_cast<double>(bytes) / gbps / 1e3 : 0;
  out.minUs = out.medianUs * 0.99;
  out.maxUs = out.p99Us = out.medianUs * 1.02;
  out.expectedGBps = expected;
  out.verified = true;
  out.route = "synthetic route";
  return out;
}

// Every shape the report handles: a GPU x GPU sweep with a FAILED and an ERROR cell, an N/A case, a host
// case over two sizes, a single-size relay case, a latency case over two sizes, text needing escapes.
std::vector<BenchCaseResult> syntheticResults() {
  std::vector<BenchCaseResult> results;
  BenchCaseResult matrix{"d2d_write_ce", "copy <engine> & \"push\"", BenchMetric::Bandwidth, std::nullopt, {}, {}};
  for (int k = 0; k < 8; ++k) {
    const std::size_t bytes = std::size_t{1024} << (2 * k);
    for (int src = 0; src < 4; ++src) {
      for (int dst = 0; dst < 4; ++dst) {
        if (src == dst) continue;
        // GPU3 -> GPU0 reaches 60% of the link model at the largest size: flagged (under kLowEfficiency).
        const double peak = src == 3 && dst == 0 ? 287.0 : 400.0;
        matrix.cells.push_back(cell(src, dst, bytes, peak * static_cast<double>(k + 1) / 8, 478.1));
      }
    }
  }
  matrix.cells[1].wrongBytes = 4096;
  matrix.cells[2].error = "<script>alert(\"x\")</script> & 'q'";
  results.push_back(matrix);
  results.push_back({"d2d_staged", "through the host", BenchMetric::Bandwidth, "needs <2> GPUs & \"P2P\"", {}, {}});
  BenchCaseResult host{"h2d_ce", "pinned host memory -> each GPU", BenchMetric::Bandwidth, std::nullopt, {}, {}};
  for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{256} << 20}) {
    for (int dst = 0; dst < 4; ++dst)
      host.cells.push_back(cell(-1, dst, bytes, bytes > (1u << 20) ? 40 : 20, 63));  // 63%: flagged
  }
  results.push_back(host);
  BenchCaseResult relay{"d2d_relay", "through a third GPU", BenchMetric::Bandwidth, std::nullopt, {}, {}};
  relay.cells.push_back(cell(0, 1, 1 << 20, 300, 0, 2));
  relay.cells.push_back(cell(0, 1, 1 << 20, 301, 0, 3));
  results.push_back(relay);
  BenchCaseResult latency{"latency_ce", "one copy", BenchMetric::Latency, std::nullopt, {}, {}};
  for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}}) {
    latency.cells.push_back(cell(0, 1, bytes, 0.01));
    latency.cells.back().medianUs = bytes == 8 ? 1.6 : 2.1;
  }
  results.push_back(latency);
  return results;
}

nlohmann::json generatedBy() {
  return {{"tool", "peerlink"},     {"version", "0.1.0"},
          {"git_commit", "abc123"}, {"date", "2026-11-22T00:00:00Z"},
          {"host", "box<1>"},       {"command", "peerlink bench --html x"}};
}

// What the report must show for these results: a heat map per size of each GPU x GPU case, a chart per
// case with several sizes plus one per metric comparing those cases.
struct Expected {
  std::size_t heatMaps = 0;
  std::size_t charts = 0;
};

Expected expectedSvgs(const std::vector<BenchCaseResult>& results) {
  Expected expected;
  std::set<BenchMetric> swept;
  for (const BenchCaseResult& result : results) {
    std::set<std::size_t> sizes;
    bool matrix = !result.cells.empty();
    for (const BenchCell& c : result.cells) {
      sizes.insert(c.bytes);
      matrix = matrix && c.src >= 0 && c.dst >= 0 && c.via < 0;
    }
    if (matrix) expected.heatMaps += sizes.size();
    if (sizes.size() >= 2) {
      ++expected.charts;
      swept.insert(result.metric);
    }
  }
  expected.charts += swept.size();
  return expected;
}

TEST(BenchJsonRead, LoadsTheRound4Run) {
  const SavedBench saved = loadBenchFile(kRound4);
  EXPECT_EQ(saved.topology.gpus.size(), 4u);
  EXPECT_EQ(saved.generatedBy.at("git_commit"), "de185cb0b2c7");
  ASSERT_EQ(saved.results.size(), 16u);
  EXPECT_EQ(saved.results[0].name, "d2d_write_ce");
  EXPECT_EQ(saved.results[0].cells.size(), 12u);
  EXPECT_NEAR(saved.results[0].cells[0].gbps, 393.4157, 1e-3);
  int failed = 0;
  std::size_t withSetup = 0;
  for (const BenchCaseResult& result : saved.results) {
    for (const BenchCell& c : result.cells) {
      failed += c.failed() ? 1 : 0;
      withSetup += c.setupMs.count("total");
    }
    if (result.name.rfind("latency_", 0) == 0) {
      EXPECT_EQ(result.metric, BenchMetric::Latency);
    }
  }
  EXPECT_EQ(failed, 12);  // d2d_ipc_ce's cells, each with its error
  EXPECT_EQ(withSetup, 24u);
}

TEST(BenchJsonRead, RejectsWhatIsNotABenchResult) {
  TempDir dir;
  writeFile(dir / "broken.json", "{\"schema\": \"peerlink.bench\", \"cases\": [");
  for (const std::string& path : {kH200, (dir / "broken.json").string(), (dir / "missing.json").string()}) {
    try {
      loadBenchFile(path);
      ADD_FAILURE() << path;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidInput);
      EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
    }
  }
}

TEST(BenchCsv, OneRowPerCellAfterTheHeader) {
  const SavedBench saved = loadBenchFile(kRound4);
  const std::vector<std::vector<std::string>> rows = parseCsv(benchToCsv(saved.results));
  std::size_t cells = 0;
  for (const BenchCaseResult& result : saved.results) cells += result.cells.size();
  ASSERT_EQ(rows.size(), cells + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"case", "metric", "src", "dst", "via", "bytes", "median_us", "min_us",
                                               "max_us", "p99_us", "gbps", "expected_gbps", "efficiency", "verified",
                                               "wrong_bytes", "status", "error", "route"}));
  for (const std::vector<std::string>& row : rows) ASSERT_EQ(row.size(), 18u);
  EXPECT_EQ(rows[1][0], "d2d_write_ce");
  EXPECT_EQ(rows[1][1], "bandwidth_gbps");
  EXPECT_EQ(rows[1][5], "268435456");
  EXPECT_NEAR(std::stod(rows[1][10]), 393.4157, 1e-3);
  EXPECT_NEAR(std::stod(rows[1][12]), 0.8228, 1e-3);
  std::size_t errors = 0;
  for (const std::vector<std::string>& row : rows) errors += row[15] == "ERROR" && !row[16].empty() ? 1 : 0;
  EXPECT_EQ(errors, 12u);
}

TEST(BenchCsv, QuotesAsRfc4180AndListsNotApplicableCases) {
  EXPECT_EQ(csvField("plain"), "plain");
  EXPECT_EQ(csvField("a,b"), "\"a,b\"");
  EXPECT_EQ(csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvField("two\nlines"), "\"two\nlines\"");
  std::vector<BenchCaseResult> results = syntheticResults();
  results[0].cells[2].error = "timed out, \"peer\" silent\nafter 10 s";
  const std::vector<std::vector<std::string>> rows = parseCsv(benchToCsv(results));
  std::size_t cells = 0;
  for (const BenchCaseResult& result : results) cells += result.cells.size();
  ASSERT_EQ(rows.size(), 1 + cells + 1);  // the header, the cells, one row for the N/A case
  EXPECT_EQ(rows[2][15], "FAILED");
  EXPECT_EQ(rows[2][14], "4096");
  EXPECT_EQ(rows[3][15], "ERROR");
  EXPECT_EQ(rows[3][16], "timed out, \"peer\" silent\nafter 10 s");
  bool notApplicable = false;
  for (const std::vector<std::string>& row : rows) {
    if (row[0] != "d2d_staged") continue;
    notApplicable = true;
    EXPECT_EQ(row[15], "N/A");
    EXPECT_EQ(row[16], "needs <2> GPUs & \"P2P\"");
    EXPECT_EQ(row[6], "");
  }
  EXPECT_TRUE(notApplicable);
  EXPECT_EQ(rows.back()[12], "");  // the latency case has no link model figure: no efficiency
}

TEST(BenchHtml, Round4RunHasAHeatMapPerMatrixAndSizeAndAChartPerSweep) {
  const SavedBench saved = loadBenchFile(kRound4);
  const std::string html = benchToHtml(saved.topology, saved.results, saved.generatedBy);
  const Expected expected = expectedSvgs(saved.results);
  EXPECT_EQ(expected.heatMaps, 9u + 3u * 5u);  // nine cases at 256 MiB, three latency cases at five sizes
  EXPECT_EQ(expected.charts, 3u + 1u);
  EXPECT_EQ(countOf(html, "<svg class=\"heatmap\""), expected.heatMaps);
  EXPECT_EQ(countOf(html, "<svg class=\"chart\""), expected.charts);
  EXPECT_EQ(countOf(html, "<svg"), expected.heatMaps + expected.charts);
  expectOffline(html);
  for (const char* text : {"<!DOCTYPE html>",
                           "de185cb0b2c7",
                           "2026-11-22T00:47:01Z",
                           "580.159.04",
                           "4 × NVIDIA H200",
                           "NV18",
                           "GPU(row) -&gt; GPU(column), GB/s",
                           "GPU(row) &lt;-&gt; GPU(column), GB/s",
                           "GPU(row) -&gt; GPU(column), µs",
                           "message size (log2 scale)",
                           "latency, one way (µs)",
                           ">8 B</text>",
                           ">64 KiB</text>",
                           ">GPU3</text>",
                           "id=\"case-latency_ce\"",
                           "12 of 12 cells FAILED",
                           ">ERROR</text>",
                           "belongs to GPU 0, not GPU 1",
                           "Cross-process setup (ms)",
                           "via GPU2",
                           "host -&gt; GPU0",
                           "82%"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
}

TEST(BenchHtml, SyntheticFailuresNotApplicableAndSweeps) {
  const Topology topology = loadTopologyFile(kH200);
  const std::vector<BenchCaseResult> results = syntheticResults();
  const std::string html = benchToHtml(topology, results, generatedBy());
  const Expected expected = expectedSvgs(results);
  EXPECT_EQ(countOf(html, "<svg class=\"heatmap\""), expected.heatMaps);
  EXPECT_EQ(countOf(html, "<svg class=\"chart\""), expected.charts);
  EXPECT_EQ(countOf(html, "<svg"), 8u + 2u + 3u + 2u);
  expectOffline(html);
  // Text is escaped everywhere: titles, descriptions, reasons, errors (also in tooltips).
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("box<1>"), std::string::npos);
  for (const char* text :
       {"peerlink bench on box&lt;1&gt;", "copy &lt;engine&gt; &amp; &quot;push&quot;",
        "N/A: needs &lt;2&gt; GPUs &amp; &quot;P2P&quot;",
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;", "4096 wrong bytes after the copy",
        ">FAILED</text>", ">ERROR</text>", "fill=\"#d62728\"", "<details>", "Heat maps of the other", ">1 KiB</text>",
        ">16 MiB</text>", "bandwidth (GB/s)", "via GPU3", "host -&gt; GPU2", "class=\"num low\"", "stroke=\"#ff7f0e\"",
        ">60%</text>", "FAILED (wrong data)"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  // Only the largest size is held against the link model.
  EXPECT_EQ(html.find(">0%</text>"), std::string::npos);
}

TEST(SvgChart, TicksAndNumbers) {
  EXPECT_EQ(niceTicks(393.4, 6), (std::vector<double>{0, 100, 200, 300, 400}));
  EXPECT_EQ(niceTicks(4.3, 6), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(niceTicks(0, 6), (std::vector<double>{0, 1}));
  EXPECT_EQ(shortNumber(0.0031234), "0.00312");
  EXPECT_EQ(shortNumber(2.5), "2.5");
  EXPECT_EQ(shortNumber(4721.04), "4721");
  EXPECT_EQ(escapeHtml("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
}

TEST(BenchHtml, RendersInHeadlessChromium) {
  const std::string chromium = findChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/build.sh installs it)";
  TempDir dir;
  const SavedBench saved = loadBenchFile(kRound4);
  const Topology topology = loadTopologyFile(kH200);
  const std::vector<std::pair<std::string, std::string>> pages = {
      {"round4", benchToHtml(saved.topology, saved.results, saved.generatedBy)},
      {"synthetic", benchToHtml(topology, syntheticResults(), generatedBy())}};
  for (const auto& [name, html] : pages) {
    const std::string rendered = renderedDom(chromium, dir, name, html);
    EXPECT_EQ(countOf(rendered, "<svg class=\"heatmap\""), countOf(html, "<svg class=\"heatmap\"")) << name;
    EXPECT_EQ(countOf(rendered, "<svg class=\"chart\""), countOf(html, "<svg class=\"chart\"")) << name;
    EXPECT_NE(rendered.find("message size (log2 scale)"), std::string::npos) << name;
  }
}

TEST(BenchCommand, FromJsonRendersASavedRunWithoutAGpu) {
  TempDir dir;
  const std::string csv = (dir / "bench.csv").string();
  const std::string html = (dir / "bench.html").string();
  const CliResult result = runCli({"bench", "--from-json", kRound4, "--csv", csv, "--html", html});
  EXPECT_EQ(result.code, kExitBroken) << result.err;  // the saved run's verdict: d2d_ipc_ce FAILED
  EXPECT_NE(result.err.find("12 cell(s) FAILED"), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("d2d_write_ce: "), std::string::npos);
  EXPECT_EQ(parseCsv(readFile(csv)).size(), 333u);
  EXPECT_EQ(readFile(html), benchToHtml(loadBenchFile(kRound4).topology, loadBenchFile(kRound4).results,
                                        loadBenchFile(kRound4).generatedBy));
  const CliResult toStdout = runCli({"bench", "--from-json", kRound4, "--html", "-"});
  EXPECT_EQ(toStdout.out.rfind("<!DOCTYPE html>", 0), 0u);  // the HTML alone, no text tables
  EXPECT_EQ(toStdout.out.find("SUM d2d_write_ce"), std::string::npos);
}

TEST(BenchCommand, OutputPathsAreCheckedBeforeMeasuring) {
  TempDir dir;
  const std::string missing = (dir / "no-such-folder").string();
  // Without these checks the runs would go on to look for GPUs (exit 3 here) and measure for minutes.
  expectUsageErrors({UsageCase{{"bench", "--html", missing + "/r.html"}, "folder " + missing + " does not exist"},
                     UsageCase{{"bench", "--csv", missing + "/r.csv"}, "--csv"},
                     UsageCase{{"bench", "--json", missing + "/r.json"}, "--json"},
                     UsageCase{{"bench", "--html", (dir / "").string()}, "is a folder"},
                     UsageCase{{"bench", "--json", "-", "--html", "-"}, "only one of"},
                     UsageCase{{"bench", "--from-json", kRound4, "--json", "x.json"}, "excludes"},
                     UsageCase{{"bench", "--from-json", (dir / "none.json").string()}, "none.json"}});
  EXPECT_FALSE(fs::exists(missing));
}

}  // namespace
}  // namespace peerlink::cli
