// `peerlink place` in-process: text and JSON on the fixtures, the doctor's cached verdicts read, and every bad
// request an error naming what is wrong with the usage exit code.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "doctor/verdict_cache.hpp"
#include "exit_codes.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(PEERLINK_FIXTURES_DIR) + "/topologies/" + name + ".json";
}

// Every test reads the verdict cache from a folder of its own, empty unless the test fills it.
class PlaceCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() / fmt::format("peerlink-place-{}-{}", ::getpid(),
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cache_);
    ::setenv("PEERLINK_DOCTOR_CACHE_DIR", cache_.string().c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("PEERLINK_DOCTOR_CACHE_DIR");
    fs::remove_all(cache_);
  }

  // Caches `verdict` for src -> dst of the fixture, as `peerlink doctor` on this boot would have.
  bool cacheVerdict(const std::string& name, int src, int dst, Verdict verdict) {
    const Topology topology = loadTopologyFile(fixture(name));
    const std::string bootId = readBootId();
    if (bootId.empty()) return false;
    PairDecision decision;
    decision.verdict = PairVerdict{src, dst, verdict, {"ce_write_dropped"}};
    return VerdictCache(cache_.string())
        .store(makeVerdictCacheKey(topology, src, dst, bootId, readKernelCommandLine(), "full"), topology, decision);
  }

  fs::path cache_;
};

TEST_F(PlaceCommand, PlacesAFixtureAndPrintsTheLinesToPaste) {
  const CliResult result = runCli({"place", "-n", "2", "--topo-file", fixture("dual_socket_pcie")});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  EXPECT_NE(result.out.find("peerlink place: 4 GPUs on dual-socket"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Best partition: GPUs 0,3 | 1,2\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("the next best (0,1 | 2,3) is worse"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("  group 0 rank 1 (GPU 3): CUDA_VISIBLE_DEVICES=3 numactl --cpunodebind=1 --membind=1\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  group 1: CUDA_VISIBLE_DEVICES=1,2\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("no doctor verdicts: none cached in " + cache_.string()), std::string::npos) << result.out;
}

TEST_F(PlaceCommand, FewerGroupsLeaveGpusOut) {
  const CliResult result = runCli({"place", "--groups", "1x4", "--topo-file", fixture("a6000x8_nvlink_bridges")});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("Best partition: GPUs 0,1,2,3\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Not placed: GPU 4, 5, 6, 7\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("as good as 1 other(s)"), std::string::npos) << result.out;
}

TEST_F(PlaceCommand, JsonOnStdoutIsTheWholeOutput) {
  const CliResult result = runCli({"place", "-n", "2", "--json", "-", "--topo-file", fixture("h200x4_vm")});
  ASSERT_EQ(result.code, kExitOk) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  EXPECT_EQ(document.at("schema"), "peerlink.placement");
  EXPECT_EQ(document.at("request").at("group_size"), 2);
  EXPECT_EQ(document.at("request").at("groups"), 2);
  EXPECT_EQ(document.at("search").at("partitions"), 3);
  EXPECT_EQ(document.at("search").at("equally_good"), 3);
  EXPECT_TRUE(document.at("next_best").is_null());
  EXPECT_EQ(document.at("groups").at(0).at("gpus"), nlohmann::json::array({0, 1}));
  EXPECT_EQ(document.at("groups").at(0).at("score").at("worst_link"), "NVL");
  const nlohmann::json& rank = document.at("groups").at(1).at("ranks").at(0);
  EXPECT_EQ(rank.at("gpu"), 2);
  EXPECT_EQ(rank.at("line"), "CUDA_VISIBLE_DEVICES=2 numactl --cpunodebind=0 --membind=0");
  EXPECT_EQ(rank.at("taskset"), "taskset -c 0-63");
  EXPECT_EQ(document.at("verdicts").at("directed_pairs_known"), 0);
  EXPECT_EQ(document.at("generated_by").at("tool"), "peerlink");
}

TEST_F(PlaceCommand, JsonFileAndTextTogether) {
  const fs::path file = cache_.parent_path() / fmt::format("peerlink-place-{}.json", ::getpid());
  const CliResult result = runCli({"place", "-n", "5", "--json", file.string(), "--topo-file", fixture("pcie_10gpu")});
  ASSERT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("Best partition: GPUs 0,1,2,3,4 | 5,6,7,8,9"), std::string::npos) << result.out;
  std::ifstream in(file);
  const nlohmann::json document = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  EXPECT_EQ(document.at("next_best").at("difference"),
            "its weakest group has a PHB pair where this partition's has at worst PIX");
  fs::remove(file);
}

TEST_F(PlaceCommand, SaysWhatItCouldNotJudge) {
  const CliResult result = runCli({"place", "-n", "2", "--topo-file", fixture("vm_flat_numa_unknown")});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("PCIe link speed or width unknown for GPU 0, 1, 2, 3"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("NUMA node and local CPUs unknown for GPU 0, 1, 2, 3"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("  group 0 rank 0 (GPU 0): CUDA_VISIBLE_DEVICES=0\n"), std::string::npos) << result.out;
}

TEST_F(PlaceCommand, CachedBrokenPairsAreKeptApart) {
  if (!cacheVerdict("a6000x8_nvlink_bridges", 0, 2, Verdict::Broken)) GTEST_SKIP() << "no boot id or cache folder";
  const CliResult result = runCli({"place", "-n", "2", "--topo-file", fixture("a6000x8_nvlink_bridges")});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("Best partition: GPUs 0,1 | 2,3 | 4,6 | 5,7\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("doctor verdicts from the cache in " + cache_.string() +
                            " for 1 of 28 pairs; BROKEN, never grouped: 0-2"),
            std::string::npos)
      << result.out;

  ::setenv("PEERLINK_DOCTOR_CACHE", "off", 1);
  const CliResult off = runCli({"place", "-n", "2", "--topo-file", fixture("a6000x8_nvlink_bridges")});
  ::unsetenv("PEERLINK_DOCTOR_CACHE");
  EXPECT_NE(off.out.find("Best partition: GPUs 0,2 | 1,3 | 4,6 | 5,7\n"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("no doctor verdicts: the doctor's verdict cache is off"), std::string::npos) << off.out;
}

TEST_F(PlaceCommand, NoPartitionAvoidingBrokenPairsExitsBroken) {
  if (!cacheVerdict("rtx4090x2", 1, 0, Verdict::Broken)) GTEST_SKIP() << "no boot id or cache folder";
  const CliResult result = runCli({"place", "-n", "2", "--topo-file", fixture("rtx4090x2")});
  EXPECT_EQ(result.code, kExitBroken);
  EXPECT_NE(result.out.find("No placement: no partition into 1 group(s) of 2 keeps apart the pairs the doctor found "
                            "BROKEN (0-1)"),
            std::string::npos)
      << result.out;
}

TEST_F(PlaceCommand, BadRequestsAreUsageErrors) {
  const std::string h200 = fixture("h200x4_vm");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"place", "--topo-file", h200}, "peerlink: place: give -n K (groups of K GPUs) or --groups AxB"},
      {{"place", "-n", "0", "--topo-file", h200}, "peerlink: a group size of 0: a group needs a GPU at least"},
      {{"place", "-n", "5", "--topo-file", h200}, "peerlink: groups of 5 GPUs: the topology has only 4 GPU(s)"},
      {{"place", "-n", "3", "--topo-file", h200}, "peerlink: groups of 3 do not divide the 4 GPUs evenly"},
      {{"place", "--groups", "3x2", "--topo-file", h200}, "peerlink: 3 groups of 2 need 6 GPUs: the topology has 4"},
      {{"place", "--groups", "2by2", "--topo-file", h200}, "peerlink: --groups '2by2': expected AxB"},
      {{"place", "--groups", "0x2", "--topo-file", h200}, "peerlink: --groups '0x2': at least one group"},
      {{"place", "-n", "2", "--groups", "2x2", "--topo-file", h200}, "peerlink: --group-size excludes --groups"},
      {{"place", "-n", "two", "--topo-file", h200}, "peerlink: "},
      {{"place", "-n", "2", "--topo-file", "/nonexistent.json"}, "peerlink: "},
  };
  for (const auto& [args, message] : cases) {
    const CliResult result = runCli(args);
    SCOPED_TRACE(args.at(1) + " " + args.at(2));
    EXPECT_EQ(result.code, kExitUsage) << result.out;
    EXPECT_EQ(result.err.rfind(message, 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

TEST_F(PlaceCommand, Help) {
  const CliResult result = runCli({"place", "--help"});
  EXPECT_EQ(result.code, kExitOk);
  for (const char* flag : {"-n,--group-size", "--groups", "--topo-file", "--json"}) {
    EXPECT_NE(result.out.find(flag), std::string::npos) << flag << "\n" << result.out;
  }
}

}  // namespace
}  // namespace peerlink::cli
