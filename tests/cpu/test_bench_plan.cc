// What `peerlink bench` decides and writes without a GPU: case selection, size sweeps, size parsing,
// statistics, and the text/JSON writers on synthetic results.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "bench/stats.hpp"
#include "bench_format.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/error.hpp"
#include "size_parse.hpp"

namespace peerlink {
namespace {

TEST(BenchStats, MedianMinMaxMeanP99) {
  const SampleStats odd = computeStats({5, 1, 3});
  EXPECT_EQ(odd.median, 3);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 5);
  EXPECT_EQ(odd.mean, 3);
  EXPECT_EQ(computeStats({4, 1, 3, 2}).median, 2.5);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(computeStats(hundred).p99, 99);
  EXPECT_EQ(computeStats({}).count, 0);
}

TEST(BenchCases, NamesAreStableSnakeCaseAndUnique) {
  std::set<std::string> names;
  for (const BenchCaseInfo& info : benchCases()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(info.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos) << info.name;
    EXPECT_FALSE(info.description.empty());
  }
  for (const char* name : {"d2d_write_ce", "d2d_read_ce", "d2d_write_sm", "d2d_read_sm", "d2d_bidir_ce", "d2d_staged",
                           "d2d_relay", "latency_put_signal", "latency_put_ll", "h2d_ce", "d2h_ce"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

TEST(BenchCases, SelectionByNameAndPrefix) {
  BenchOptions options;
  options.names = {"d2d_read_sm"};
  options.prefixes = {"latency_"};
  std::vector<std::string> selected;
  for (const BenchCaseInfo& info : selectBenchCases(options)) selected.push_back(info.name);
  EXPECT_EQ(selected, (std::vector<std::string>{"d2d_read_sm", "latency_put_ll", "latency_put_signal", "latency_ce"}));
  options = BenchOptions();
  EXPECT_EQ(selectBenchCases(options).size(), benchCases().size());  // every case is in the default set today
}

TEST(BenchCases, UnknownNamesAndEmptyPrefixesAreErrors) {
  BenchOptions options;
  options.names = {"d2d_wrte_ce"};
  try {
    selectBenchCases(options);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(error.what()).find("'d2d_wrte_ce'"), std::string::npos);
  }
  options.names.clear();
  options.prefixes = {"zzz"};
  EXPECT_THROW(selectBenchCases(options), Error);
}

TEST(BenchSizes, SweepsLikeNcclTests) {
  EXPECT_EQ(sweepSizes(8, 8, 2), (std::vector<std::size_t>{8}));
  EXPECT_EQ(sweepSizes(8, 128, 2), (std::vector<std::size_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sweepSizes(1024, 1 << 20, 32), (std::vector<std::size_t>{1024, 32768, 1 << 20}));
  EXPECT_EQ(sweepSizes(10, 100, 4), (std::vector<std::size_t>{10, 40}));
  EXPECT_THROW(sweepSizes(0, 8, 2), Error);
  EXPECT_THROW(sweepSizes(16, 8, 2), Error);
  EXPECT_THROW(sweepSizes(8, 16, 1), Error);
}

// A sweep has at most kMaxSweepSizes sizes, counted before any is made, and sizes within 1 TiB; a factor
// must be a finite number above 1; a small factor measures each rounded size once.
TEST(BenchSizes, SweepsAreBounded) {
  const auto message = [](std::size_t min, std::size_t max, double factor) -> std::string {
    try {
      sweepSizes(min, max, factor);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
      return error.what();
    }
    return "accepted";
  };
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(message(1, std::size_t{1} << 30, 1.0000001).find("makes 207944165 sizes, more than the 256"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_NE(message(1, 16, 1.0000001).find("more than the 256 a sweep may have"), std::string::npos);
  EXPECT_NE(message(8, std::size_t{1} << 41, 2).find("1 TiB"), std::string::npos);
  EXPECT_NE(message(8, std::numeric_limits<std::size_t>::max(), 2).find("1 TiB"), std::string::npos);
  for (double factor : {std::nan(""), std::numeric_limits<double>::infinity(), -2.0, 0.0, 1.0}) {
    EXPECT_NE(message(8, 64, factor).find("must be a number greater than 1"), std::string::npos) << factor;
  }
  EXPECT_EQ(sweepSizes(1, std::size_t{1} << 40, 2).size(), 41u);
  EXPECT_EQ(sweepSizes(1, 8, 1.1), (std::vector<std::size_t>{1, 2, 3, 4, 5, 6, 7}));  // 1.1^22 passes 8
  const std::vector<std::size_t> fine = sweepSizes(8, 8 << 20, 1.06);
  EXPECT_LE(fine.size(), kMaxSweepSizes);
  EXPECT_TRUE(std::is_sorted(fine.begin(), fine.end()));
  EXPECT_EQ(std::adjacent_find(fine.begin(), fine.end()), fine.end());
}

TEST(BenchSizes, ParseSizeSuffixes) {
  using cli::parseSize;
  EXPECT_EQ(parseSize("8", "-b"), 8u);
  EXPECT_EQ(parseSize("64K", "-b"), 65536u);
  EXPECT_EQ(parseSize("64k", "-b"), 65536u);
  EXPECT_EQ(parseSize("256M", "-b"), 256u << 20);
  EXPECT_EQ(parseSize("1G", "-b"), 1u << 30);
  EXPECT_EQ(parseSize("2GB", "-b"), std::size_t{2} << 30);
  for (const char* bad : {"", "-1", "1X", "M", "1.5M", "1MM", "99999999999999999999G", " 8"}) {
    try {
      parseSize(bad, "-e");
      FAIL() << bad;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
      EXPECT_NE(std::string(error.what()).find("-e"), std::string::npos);
    }
  }
  EXPECT_EQ(cli::formatSize(256u << 20), "256 MiB");
  EXPECT_EQ(cli::formatSize(65536), "64 KiB");
  EXPECT_EQ(cli::formatSize(1000), "1000 B");
}

std::vector<BenchCaseResult> syntheticResults() {
  BenchCaseResult bandwidth;
  bandwidth.name = "d2d_write_ce";
  bandwidth.description = "test";
  for (auto [src, dst] : {std::pair{0, 1}, std::pair{1, 0}}) {
    BenchCell cell;
    cell.src = src;
    cell.dst = dst;
    cell.bytes = 256u << 20;
    cell.medianUs = 681.5;
    cell.gbps = 393.9;
    cell.expectedGBps = 478.1;
    cell.verified = true;
    bandwidth.cells.push_back(cell);
  }
  bandwidth.cells[1].wrongBytes = 12;
  BenchCaseResult missing;
  missing.name = "d2d_relay";
  missing.description = "relay";
  missing.notApplicable = "needs 3 GPUs (a relay), 2 in use";
  return {bandwidth, missing};
}

Topology twoGpuTopology() {
  return loadTopologyFile(std::string(PEERLINK_FIXTURES_DIR) + "/topologies/rtx4090x2.json");
}

TEST(BenchWriters, TextShowsMatrixFailuresAndNotApplicableWithReason) {
  const std::string text = cli::formatBenchText(twoGpuTopology(), syntheticResults());
  EXPECT_NE(text.find("256 MiB (GB/s at the median time) GPU(row) -> GPU(column)"), std::string::npos) << text;
  EXPECT_NE(text.find("393.9"), std::string::npos);
  EXPECT_NE(text.find("FAILED"), std::string::npos);
  EXPECT_NE(text.find("12 wrong bytes"), std::string::npos);
  EXPECT_NE(text.find("N/A: needs 3 GPUs (a relay), 2 in use"), std::string::npos);
}

TEST(BenchWriters, JsonHasEveryStatisticAsNumbers) {
  const auto document = cli::benchToJson(twoGpuTopology(), Params(), BenchOptions(), syntheticResults());
  EXPECT_EQ(document.at("schema"), "peerlink.bench");
  EXPECT_EQ(document.at("failed_cells"), 1);
  const auto& cell = document.at("cases").at(0).at("cells").at(0);
  EXPECT_TRUE(cell.at("gbps").is_number());
  EXPECT_DOUBLE_EQ(cell.at("gbps").get<double>(), 393.9);
  EXPECT_NEAR(cell.at("efficiency").get<double>(), 393.9 / 478.1, 1e-9);
  EXPECT_EQ(cell.at("status"), "OK");
  EXPECT_EQ(document.at("cases").at(0).at("cells").at(1).at("status"), "FAILED");
  EXPECT_EQ(document.at("cases").at(1).at("not_applicable"), "needs 3 GPUs (a relay), 2 in use");
  EXPECT_EQ(document.at("topology").at("gpus").size(), 2u);
  // The route peerlink would choose on its own, per ordered pair: no P2P between GeForce 4090s, so STAGED.
  ASSERT_EQ(document.at("routes").size(), 2u);
  EXPECT_EQ(document.at("routes").at(0).at("mode"), "STAGED");
  EXPECT_NE(document.at("routes").at(0).at("route").get<std::string>().find("0[0] -> 1[1] via SHM/STAGED"),
            std::string::npos);
  EXPECT_FALSE(document.at("parameters").empty());
}

}  // namespace
}  // namespace peerlink

namespace peerlink {
namespace {

BenchCell pairCell(int src, int dst, double gbps, double expected) {
  BenchCell cell;
  cell.src = src;
  cell.dst = dst;
  cell.bytes = 256u << 20;
  cell.gbps = gbps;
  cell.expectedGBps = expected;
  return cell;
}

TEST(BenchWriters, EfficiencyAgainstTheLinkModelIsFlaggedWhenLow) {
  BenchCaseResult direct;
  direct.name = "d2d_write_ce";
  direct.description = "test";
  direct.cells = {pairCell(0, 1, 393.9, 478.1), pairCell(1, 0, 100.0, 478.1)};
  const std::string text = cli::formatBenchText(twoGpuTopology(), {direct});
  EXPECT_NE(text.find("vs link model: 82% median (21%..82%)"), std::string::npos) << text;
  EXPECT_NE(text.find("LOW (under 70%): GPU 1 -> GPU 0 21%"), std::string::npos) << text;
}

TEST(BenchWriters, P2pIsComparedWithStagingPairByPair) {
  BenchCaseResult direct;
  direct.name = "d2d_write_ce";
  direct.cells = {pairCell(0, 1, 393.9, 0), pairCell(1, 0, 20.0, 0)};
  BenchCaseResult staged;
  staged.name = "d2d_staged";
  staged.cells = {pairCell(0, 1, 52.1, 0), pairCell(1, 0, 52.0, 0)};
  const std::string text = cli::formatBenchText(twoGpuTopology(), {direct, staged});
  EXPECT_NE(text.find("P2P vs STAGED (d2d_write_ce vs d2d_staged): 1 of 2 pairs faster by P2P"), std::string::npos)
      << text;
  EXPECT_NE(text.find("P2P SLOWER than staging"), std::string::npos) << text;
  EXPECT_NE(text.find("7.6x"), std::string::npos) << text;
}

}  // namespace
}  // namespace peerlink
