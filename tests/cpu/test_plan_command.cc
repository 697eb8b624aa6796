// `peerlink plan` on the command line: the table and JSON for topology fixtures (the chosen kernel the same as
// `peerlink coll --explain`'s), N nodes, --fit / --model / --check round trips, and every bad input a usage error
// (exit 2) in one line.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "exit_codes.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string topology(const std::string& name) {
  return (fs::path(PEERLINK_FIXTURES_DIR) / "topologies" / (name + ".json")).string();
}

std::vector<std::string> runsOf(const std::string& machine) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(PEERLINK_FIXTURES_DIR) / "plan" / machine)) {
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

fs::path tempFile(const std::string& name) {
  return fs::temp_directory_path() / ("peerlink-plan-" + std::to_string(::getpid()) + "-" + name);
}

std::string joined(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& arg : args) line += arg + " ";
  return line;
}

TEST(PlanCommand, TableForATopologyFile) {
  const CliResult result = runCli({"plan", "--topo-file", topology("h200x4_vm"), "-b", "8", "-e", "1G", "-f", "8"});
  ASSERT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("PREDICTED, not measured"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("fitted to 44 run(s) on 4x NVIDIA H200, one process; 2x NVIDIA H200, one process; 2x "
                            "NVIDIA H200, 2 processes; 2x NVIDIA H200, one process, through host memory; 2x NVIDIA "
                            "H200, 2 processes, through host memory; 2x NVIDIA H200, 2 processes, 2 nodes"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("* one_shot   ll128"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("* ring       ce_ring_all_reduce"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("GPU 0 NVLink out in"), std::string::npos) << result.out;
  for (const char* size : {"           8 ", "  1073741824 "}) {
    EXPECT_NE(result.out.find(size), std::string::npos) << size;
  }
}

TEST(PlanCommand, JsonChoosesWhatCollExplainChooses) {
  for (const char* collective :
       {"all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}) {
    const std::vector<std::string> sweep = {
        "-o", collective, "-b", "8", "-e", "1G", "-f", "4", "--topo-file", topology("h200x4_vm"), "--json", "-"};
    std::vector<std::string> planArgs = {"plan"};
    planArgs.insert(planArgs.end(), sweep.begin(), sweep.end());
    std::vector<std::string> explainArgs = {"coll", "--explain"};
    explainArgs.insert(explainArgs.end(), sweep.begin(), sweep.end());
    const CliResult plan = runCli(planArgs);
    const CliResult explain = runCli(explainArgs);
    ASSERT_EQ(plan.code, kExitOk) << plan.err;
    ASSERT_EQ(explain.code, kExitOk) << explain.err;
    const json predicted = json::parse(plan.out);
    const json explained = json::parse(explain.out);
    EXPECT_EQ(predicted.at("schema"), "peerlink.plan");
    EXPECT_TRUE(predicted.at("predicted").get<bool>());
    ASSERT_EQ(predicted.at("rows").size(), explained.at("rows").size()) << collective;
    for (std::size_t i = 0; i < predicted.at("rows").size(); ++i) {
      const json& row = predicted.at("rows")[i];
      int chosen = 0;
      for (const json& candidate : row.at("candidates")) {
        if (!candidate.at("chosen").get<bool>()) continue;
        ++chosen;
        EXPECT_EQ(candidate.at("out_of_place").at("kernel"), explained.at("rows")[i].at("out_of_place").at("kernel"))
            << collective << " " << row.at("size");
        if (row.at("count").get<std::size_t>() > 0) {
          EXPECT_GT(candidate.at("out_of_place").at("time_us").get<double>(), 0) << collective << " " << row.at("size");
        }
      }
      EXPECT_EQ(chosen, 1) << collective << " " << row.at("size");
    }
  }
}

TEST(PlanCommand, NodesJoinedByNics) {
  const CliResult result = runCli({"plan", "--topo-file", topology("h100x8_nvswitch"), "-b", "1M", "-e", "1G", "-f",
                                   "32", "--nodes", "4", "--nic-gbps", "400", "--nic-latency-us", "3", "--json", "-"});
  ASSERT_EQ(result.code, kExitOk) << result.err;
  const json document = json::parse(result.out);
  EXPECT_EQ(document.at("network").at("nodes"), 4);
  EXPECT_EQ(document.at("network").at("nics_per_node"), 8);
  for (const json& row : document.at("rows")) {
    ASSERT_EQ(row.at("across_nodes").size(), 2u);
    EXPECT_EQ(row.at("across_nodes")[0].at("phases").size(), 3u);
  }
  const CliResult text = runCli({"plan", "--topo-file", topology("h100x8_nvswitch"), "-o", "all_gather", "-b", "1G",
                                 "-e", "1G", "--nodes", "64", "--nic-gbps", "400", "--nic-latency-us", "3"});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("512 rank(s) on 64 nodes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("all-gather across nodes (ring)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("NIC (50 GB/s per direction, 1 GPU per NIC)"), std::string::npos) << text.out;
}

TEST(PlanCommand, FitWritesAModelThatModelAndCheckRead) {
  const fs::path model = tempFile("model.json");
  std::vector<std::string> fit = {"plan", "--fit"};
  for (const char* machine : {"h200x4", "h200x2"}) {
    for (const std::string& run : runsOf(machine)) fit.push_back(run);
  }
  fit.insert(fit.end(), {"--write", model.string()});
  const CliResult fitted = runCli(fit);
  ASSERT_EQ(fitted.code, kExitOk) << fitted.err;
  EXPECT_NE(fitted.out.find("4x NVIDIA H200, one process: 321 cells"), std::string::npos) << fitted.out;
  EXPECT_NE(fitted.out.find("2x NVIDIA H200, one process: 34 cells"), std::string::npos) << fitted.out;
  EXPECT_NE(fitted.out.find("# each peer (added to every launch): 0.4"), std::string::npos) << fitted.out;
  const json document = json::parse(std::ifstream(model));
  EXPECT_EQ(document.at("provenance").at("runs").size(), 9u);
  EXPECT_GT(document.at("peer_us").get<double>(), 0.3);

  const CliResult predicted = runCli({"plan", "--model", model.string(), "--topo-file", topology("h200x4_vm")});
  EXPECT_EQ(predicted.code, kExitOk) << predicted.err;
  EXPECT_NE(predicted.out.find("# model: " + model.string()), std::string::npos) << predicted.out;

  std::vector<std::string> check = {"plan", "--model", model.string(), "--check"};
  for (const std::string& run : runsOf("h100x4")) check.push_back(run);
  const CliResult checked = runCli(check);
  EXPECT_EQ(checked.code, kExitOk) << checked.err;
  EXPECT_NE(checked.out.find("# == 4x NVIDIA H100 80GB HBM3, one process: 321 cells from 7 run(s)"), std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("# all_to_all (coll-all_to_all.json): median |error|"), std::string::npos) << checked.out;
  check.insert(check.end(), {"--max-median-error", "0.001"});
  const CliResult strict = runCli(check);
  EXPECT_EQ(strict.code, kExitDegraded) << strict.out;
  EXPECT_NE(strict.err.find("is above --max-median-error 0.1%"), std::string::npos) << strict.err;
  fs::remove(model);
}

// One process per GPU: each call pays the second process's part; on unregistered buffers the calls whose kernels
// read or write a peer's buffers are staged (copies through the windows, beside the kernels unless
// PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL) where the arena ring does not take them (here it is off:
// PlanCommand.TheArenaRingAsTheEnvironmentSetsIt), the LL ones are not; registered buffers stage nothing. --check reads
// the mode from each run.
TEST(PlanCommand, ProcessesPerGpuAndRegisteredBuffers) {
  const auto time = [](const std::vector<std::string>& extra, std::size_t row) {
    std::vector<std::string> args = {
        "plan", "--topo-file", topology("h200x4_vm"), "-g", "2", "-b", "8", "-e", "256M", "-f", "33554432", "--json",
        "-"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult result = runCli(args);
    EXPECT_EQ(result.code, kExitOk) << joined(args) << result.err;
    const json document = json::parse(result.out);
    EXPECT_EQ(document.at("processes").get<int>(), extra.empty() ? 1 : 2);
    const json& chosen = document.at("rows").at(row).at("candidates").at(0);
    EXPECT_TRUE(chosen.at("chosen").get<bool>());
    return chosen.at("out_of_place").at("time_us").get<double>();
  };
  // 8 B (ll128, never staged) and 256 MiB (staged in halves of 64 MiB windows: 16 chunks and 32 copies where
  // unregistered), every byte copied in and out: the form the bars below were measured in.
  ::setenv("PEERLINK_COLL_STAGING_WINDOW", "67108864", 1);
  ::setenv("PEERLINK_COLL_STAGE_COPIES", "ALL", 1);
  ::setenv("PEERLINK_COLL_ARENA_RING", "OFF", 1);
  const double oneSmall = time({}, 0);
  const double staged = time({"--processes", "per-gpu"}, 0);
  const double registered = time({"--processes", "per-gpu", "--register"}, 0);
  EXPECT_GT(staged, oneSmall + 0.3);
  EXPECT_DOUBLE_EQ(staged, registered);
  const double oneLarge = time({}, 1);
  const double stagedLarge = time({"--processes", "per-gpu"}, 1);
  const double registeredLarge = time({"--processes", "per-gpu", "--register"}, 1);
  // The copies the kernels do not hide: measured on 2 H200s, 1.26x the registered call at 128 MiB, 1.34x at 512 MiB.
  EXPECT_GT(stagedLarge, 1.2 * registeredLarge);
  EXPECT_LT(registeredLarge, 1.05 * oneLarge);
  const std::vector<std::string> large = {"plan", "--topo-file", topology("h200x4_vm"), "-g",     "2", "-b", "256M",
                                          "-e",   "256M",        "--processes",         "per-gpu"};
  const CliResult text = runCli(large);
  EXPECT_NE(text.out.find("one process per GPU (2 processes), buffers not registered"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("through the staging windows: 16 chunk(s), 32 copies beside the kernels"), std::string::npos)
      << text.out;
  // Serially each chunk's copies add to its kernel: measured 1.16x the pipelined call at 128 MiB and 512 MiB.
  ::setenv("PEERLINK_COLL_STAGE_UNREGISTERED", "SERIAL", 1);
  const double serialLarge = time({"--processes", "per-gpu"}, 1);
  const CliResult serialText = runCli(large);
  ::unsetenv("PEERLINK_COLL_STAGE_UNREGISTERED");
  EXPECT_GT(serialLarge, 1.15 * stagedLarge);
  EXPECT_NE(serialText.out.find("one after another (PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL)"), std::string::npos)
      << serialText.out;
  EXPECT_NE(serialText.out.find("16 chunk(s), 32 copies one after another"), std::string::npos) << serialText.out;
  // The peers' parts only (the default): half the bytes copied, faster than every byte.
  ::unsetenv("PEERLINK_COLL_STAGE_COPIES");
  const double peersPartsLarge = time({"--processes", "per-gpu"}, 1);
  EXPECT_LT(peersPartsLarge, stagedLarge);
  EXPECT_NE(runCli(large).out.find("copies only the parts its peers touch"), std::string::npos);
  ::unsetenv("PEERLINK_COLL_STAGING_WINDOW");
  ::unsetenv("PEERLINK_COLL_ARENA_RING");

  std::vector<std::string> check = {"plan", "--check"};
  for (const char* machine : {"h200x2-procs", "h200x2-serial"}) {
    for (const std::string& run : runsOf(machine)) check.push_back(run);
  }
  const CliResult checked = runCli(check);
  EXPECT_EQ(checked.code, kExitOk) << checked.err;
  EXPECT_NE(checked.out.find("# all_reduce (ar-procs.json, unregistered: large calls staged): median"),
            std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("# all_reduce (ar-reg.json, registered windows): median"), std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("# all_reduce (ar-serial.json, unregistered: large calls staged, serially): median"),
            std::string::npos)
      << checked.out;
}

// The arena ring, as the communicator reads PEERLINK_COLL_ARENA_RING and _SHAPE: AUTO takes a 2-process all-reduce
// from 8 MiB (64 blocks above 32 MiB) and no all-gather; ON every size past the LL kernels and the all-gather too; OFF
// none. --check costs each row of a run along the way it recorded.
TEST(PlanCommand, TheArenaRingAsTheEnvironmentSetsIt) {
  const auto plan = [](const std::string& collective, const std::string& bytes) {
    const CliResult result = runCli({"plan", "--topo-file", topology("h200x4_vm"), "-g", "2", "-o", collective, "-b",
                                     bytes, "-e", bytes, "--processes", "per-gpu"});
    EXPECT_EQ(result.code, kExitOk) << result.err;
    return result.out;
  };
  const std::string four = plan("all_reduce", "4M");
  EXPECT_NE(four.find("through the staging windows: 1 chunk(s)"), std::string::npos) << four;
  EXPECT_EQ(four.find("arena_ring"), std::string::npos) << four;
  EXPECT_NE(four.find("as the arena ring from a call of 8 MiB (PEERLINK_COLL_ARENA_RING=AUTO), smaller ones staged"),
            std::string::npos)
      << four;
  const std::string eight = plan("all_reduce", "8M");
  EXPECT_NE(eight.find("* ring       arena_ring"), std::string::npos) << eight;
  EXPECT_NE(eight.find("as the arena ring: 32 blocks, 2 step(s), 4 slots of 256 KiB a block"), std::string::npos)
      << eight;
  EXPECT_NE(plan("all_reduce", "256M").find("as the arena ring: 64 blocks, 2 step(s)"), std::string::npos);
  EXPECT_NE(plan("broadcast", "256M").find("* ring       arena_chain"), std::string::npos);
  EXPECT_EQ(plan("all_gather", "256M").find("arena"), std::string::npos) << "AUTO never takes the all-gather";

  ::setenv("PEERLINK_COLL_ARENA_RING", "ON", 1);
  ::setenv("PEERLINK_COLL_ARENA_RING_SHAPE", "32x128K", 1);
  const std::string on = plan("all_gather", "256M");
  ::setenv("PEERLINK_COLL_ARENA_RING", "OFF", 1);
  ::unsetenv("PEERLINK_COLL_ARENA_RING_SHAPE");
  const std::string off = plan("all_reduce", "256M");
  ::unsetenv("PEERLINK_COLL_ARENA_RING");
  EXPECT_NE(on.find("as the arena ring: 32 blocks, 1 step(s), 4 slots of 128 KiB a block"), std::string::npos) << on;
  EXPECT_NE(on.find("run as the arena ring (PEERLINK_COLL_ARENA_RING=ON, 32 blocks x 128 KiB slots"), std::string::npos)
      << on;
  EXPECT_EQ(off.find("arena"), std::string::npos) << off;
  EXPECT_NE(off.find("through the staging windows: 8 chunk(s)"), std::string::npos) << off;
  EXPECT_NE(off.find("touch a peer's buffers are staged through the windows"), std::string::npos) << off;

  std::vector<std::string> check = {"plan", "--check"};
  for (const std::string& run : runsOf("h200x2-arena")) check.push_back(run);
  const CliResult checked = runCli(check);
  EXPECT_EQ(checked.code, kExitOk) << checked.err;
  EXPECT_NE(
      checked.out.find("# all_reduce (all_reduce-ring.json, unregistered: large calls as the arena ring where the "
                       "rows say, else staged, the peers' parts only): median"),
      std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("arena_chain"), std::string::npos) << checked.out;
}

// GPUs without peer access, or pairs forced through host memory as the communicator reads PEERLINK_COLL_HOST_STAGED:
// one way per call (plan/host_traffic.hpp), its bottleneck a GPU's PCIe link to or from the host.
TEST(PlanCommand, ThroughHostMemory) {
  const CliResult rtx = runCli({"plan", "--topo-file", topology("rtx4090x2"), "-b", "1M", "-e", "64M", "-f", "8"});
  ASSERT_EQ(rtx.code, kExitOk) << rtx.err;
  EXPECT_NE(rtx.out.find("(through host memory)"), std::string::npos) << rtx.out;
  EXPECT_NE(rtx.out.find("* ring       host_ring"), std::string::npos) << rtx.out;
  EXPECT_NE(rtx.out.find("* ring       plan_steps"), std::string::npos) << rtx.out;
  EXPECT_NE(rtx.out.find("PCIe to host"), std::string::npos) << rtx.out;
  ::setenv("PEERLINK_COLL_HOST_STAGED", "all", 1);
  const CliResult forced =
      runCli({"plan", "--topo-file", topology("h200x4_vm"), "-g", "2", "-o", "broadcast", "-b", "8M", "-e", "8M"});
  ::setenv("PEERLINK_COLL_HOST_STAGED", "0-5", 1);
  const CliResult bad = runCli({"plan", "--topo-file", topology("h200x4_vm"), "-g", "2"});
  ::unsetenv("PEERLINK_COLL_HOST_STAGED");
  ASSERT_EQ(forced.code, kExitOk) << forced.err;
  EXPECT_NE(forced.out.find("* ring       host_chain"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("GPU 0 PCIe to host in the host ring's chain"), std::string::npos) << forced.out;
  EXPECT_EQ(bad.code, kExitUsage) << bad.err << bad.out;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// A run through host memory names each row's way ("staged plan (host_ring): ..."), and --check costs the way the row
// took, not the one today's code would choose: rows rewritten to another way are costed along it (pair by pair too),
// and rows of a way the model does not know are left out with the reason.
TEST(PlanCommand, CheckCostsTheWayARowRecorded) {
  const fs::path fixture = fs::path(PEERLINK_FIXTURES_DIR) / "plan" / "h200x2-host" / "all_reduce-1p.json";
  std::ifstream in(fixture);
  json run = json::parse(in);
  bool rewritten = false;
  for (json& row : run["rows"]) {
    if (row["bytes"] == 1 << 20) {  // the host ring's today
      row["peerlink_algorithm"] = "staged plan (plan_steps)";
      rewritten = true;
    }
  }
  ASSERT_TRUE(rewritten);
  const fs::path steps = tempFile("recorded-steps.json");
  std::ofstream(steps) << run.dump();
  const CliResult asRecorded = runCli({"plan", "--check", steps.string()});
  const CliResult asToday = runCli({"plan", "--check", fixture.string()});
  for (json& row : run["rows"]) row["peerlink_algorithm"] = "staged plan (pair_by_pair): pair by pair";
  const fs::path pairs = tempFile("recorded-pairs.json");
  std::ofstream(pairs) << run.dump();
  const CliResult pairByPair = runCli({"plan", "--check", pairs.string()});
  for (json& row : run["rows"]) row["peerlink_algorithm"] = "staged plan (a_later_way): a way of a later peerlink";
  const fs::path later = tempFile("recorded-later.json");
  std::ofstream(later) << run.dump();
  const CliResult uncosted = runCli({"plan", "--check", later.string()});
  fs::remove(steps);
  fs::remove(pairs);
  fs::remove(later);
  ASSERT_EQ(asToday.code, kExitOk) << asToday.err;
  EXPECT_NE(asToday.out.find("     1048576  host_ring"), std::string::npos) << asToday.out;
  EXPECT_NE(asRecorded.out.find("     1048576  plan_steps"), std::string::npos) << asRecorded.out << asRecorded.err;
  EXPECT_EQ(asRecorded.out.find("     1048576  host_ring"), std::string::npos) << asRecorded.out;
  EXPECT_NE(pairByPair.out.find("     1048576  pair_by_pair"), std::string::npos) << pairByPair.out << pairByPair.err;
  EXPECT_NE((uncosted.out + uncosted.err).find("\"a_later_way\" through host memory, a way the model does not cost"),
            std::string::npos)
      << uncosted.out << uncosted.err;
}

TEST(PlanCommand, BadInputIsAUsageErrorInOneLine) {
  const fs::path noLinks = tempFile("no-links.json");
  {
    json document = json::parse(std::ifstream(topology("h200x4_vm")));
    document["pairs"] = json::array();
    std::ofstream(noLinks) << document.dump();
  }
  const fs::path badModel = tempFile("bad-model.json");
  {
    std::ifstream in(fs::path(PEERLINK_SOURCE_DIR) / "src" / "plan" / "model.json");
    json document = json::parse(in);
    document["kernels"][0]["efficiency"] = 2.5;
    std::ofstream(badModel) << document.dump();
  }
  const std::string h200 = topology("h200x4_vm");
  const std::string bench =
      (fs::path(PEERLINK_FIXTURES_DIR) / "runs" / "2026-11-22-h200x4-round4" / "bench.json").string();
  const std::vector<std::vector<std::string>> bad = {
      {"plan", "--topo-file", h200, "-o", "allsum"},
      {"plan", "--topo-file", h200, "-d", "float128"},
      {"plan", "--topo-file", h200, "--nodes", "0"},
      {"plan", "--topo-file", h200, "--nodes", "-3"},
      {"plan", "--topo-file", h200, "--nodes", "2"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "400"},
      {"plan", "--topo-file", h200, "--nic-gbps", "400", "--nic-latency-us", "3"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "-400", "--nic-latency-us", "3"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "nan", "--nic-latency-us", "3"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "1e12", "--nic-latency-us", "3"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "400", "--nic-latency-us", "-1"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "fast", "--nic-latency-us", "3"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "400", "--nic-latency-us", "3", "--nics-per-node",
       "-1"},
      {"plan", "--topo-file", h200, "-g", "5"},
      {"plan", "--topo-file", h200, "-r", "4", "-o", "broadcast"},
      {"plan", "--topo-file", h200, "-b", "1K", "-e", "8"},
      {"plan", "--topo-file", h200, "-b", "8", "-e", "1G", "-f", "1.0001"},
      {"plan", "--topo-file", topology("pcie_10gpu")},
      {"plan", "--topo-file", topology("vm_flat_numa_unknown")},
      {"plan", "--topo-file", noLinks.string()},
      {"plan", "--topo-file", "/nonexistent/topology.json"},
      {"plan", "--topo-file", h200, "--model", "/nonexistent/model.json"},
      {"plan", "--topo-file", h200, "--model", badModel.string()},
      {"plan", "--fit", runsOf("h200x4").front()},
      {"plan", "--fit", runsOf("h200x4").front(), "--write", tempFile("x.json").string(), "-o", "reduce"},
      {"plan", "--check", bench},
      {"plan", "--check", "/nonexistent/run.json"},
      {"plan", "--max-median-error", "0.1"},
      {"plan", "--check", runsOf("h200x4").front(), "--max-median-error", "-1"},
      {"plan", "--check", runsOf("h200x4").front(), "--max-median-error", "nan"},
      {"plan", "--topo-file", h200, "--processes", "two"},
      {"plan", "--topo-file", h200, "--register"},
      {"plan", "--topo-file", h200, "--processes", "one", "--register"},
      {"plan", "--topo-file", h200, "--processes", "per-gpu", "--nodes", "2", "--nic-gbps", "400", "--nic-latency-us",
       "3"},
      {"plan", "--check", runsOf("h200x4").front(), "--processes", "per-gpu"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "400", "--nic-latency-us", "3", "--net-path", "rdma"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--nic-gbps", "400", "--nic-latency-us", "3", "--net-path", ""},
      {"plan", "--topo-file", h200, "--net-path", "staged"},
      {"plan", "--topo-file", h200, "--nodes", "1", "--net-path", "gpudirect"},
      {"plan", "--topo-file", h200, "--nodes", "2", "--net-path", "staged"},
      {"plan", "--check", runsOf("h200x4").front(), "--net-path", "staged"},
  };
  for (const std::vector<std::string>& args : bad) {
    const CliResult result = runCli(args);
    EXPECT_EQ(result.code, kExitUsage) << joined(args) << "\n" << result.err << result.out;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << joined(args) << "\n" << result.err;
  }
  fs::remove(noLinks);
  fs::remove(badModel);
}

TEST(PlanCommand, NoGpuAndNoTopologyExitsThree) {
  int count = 0;
  const bool gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  if (gpu) GTEST_SKIP() << "this machine has a GPU";
  const CliResult result = runCli({"plan", "-b", "8", "-e", "64"});
  EXPECT_EQ(result.code, kExitNoGpu) << result.err;
}

TEST(PlanCommand, HelpListsTheFlags) {
  const CliResult result = runCli({"plan", "--help"});
  EXPECT_EQ(result.code, kExitOk);
  for (const char* flag : {"-o",
                           "-b",
                           "-e",
                           "-f",
                           "-g",
                           "-d",
                           "-r",
                           "--topo-file",
                           "--nodes",
                           "--nic-gbps",
                           "--nic-latency-us",
                           "--nics-per-node",
                           "--net-path",
                           "--processes",
                           "--register",
                           "--model",
                           "--json",
                           "--fit",
                           "--write",
                           "--check",
                           "--max-median-error"}) {
    EXPECT_NE(result.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace peerlink::cli
