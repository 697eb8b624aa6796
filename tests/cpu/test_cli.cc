// The CLI's contract: exit codes, one-line errors, nothing half-written. Driven in-process through
// cli::run and, for what only the real binary shows, as a child process.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "exit_codes.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "topo_format.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = PEERLINK_FIXTURES_DIR;
const std::string kH200 = kFixtures + "/topologies/h200x4_vm.json";

size_t lineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("peerlink-cli-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void writeFile(const fs::path& path, const std::string& content) {
  std::ofstream(path) << content;
}

TEST(Cli, HelpAndVersionSucceed) {
  CliResult help = runCli({"--help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_NE(help.out.find("topo"), std::string::npos);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
  CliResult version = runCli({"--version"});
  EXPECT_EQ(version.code, kExitOk);
  EXPECT_EQ(version.out.rfind("peerlink 0.", 0), 0u) << version.out;
}

TEST(Cli, UsageErrorsAreOneLineWithExitCode2) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"frobnicate"}, {"topo", "--bogus"}, {"topo", "--json"}, {"env", "extra"}}) {
    const CliResult result = runCli(args);
    EXPECT_EQ(result.code, kExitUsage) << testing::PrintToString(args);
    EXPECT_EQ(lineCount(result.err), 1u) << result.err;
    EXPECT_EQ(result.err.rfind("peerlink: ", 0), 0u) << result.err;
    EXPECT_TRUE(result.out.empty());
  }
}

TEST(Cli, MissingOrMalformedTopologyFileIsAnInputError) {
  TempDir dir;
  writeFile(dir / "broken.json", "{\"schema\": \"peerlink.topology\", \"version\": 1, \"gpus\": [");
  writeFile(dir / "wrong.json", "{\"schema\": \"something else\", \"version\": 1, \"gpus\": [], \"pairs\": []}");
  struct Case {
    std::string file;
    std::string mentions;
  };
  for (const Case& c :
       {Case{(dir / "missing.json").string(), "missing.json"}, Case{(dir / "broken.json").string(), "broken.json"},
        Case{(dir / "wrong.json").string(), "schema"}}) {
    const CliResult result = runCli({"topo", "--topo-file", c.file});
    EXPECT_EQ(result.code, kExitUsage) << result.err;
    EXPECT_EQ(lineCount(result.err), 1u) << result.err;
    EXPECT_NE(result.err.find(c.mentions), std::string::npos) << result.err;
  }
}

TEST(Cli, TopoFromFileShowsMatricesLikeNvidiaSmi) {
  const CliResult result = runCli({"topo", "--topo-file", kH200});
  ASSERT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("Links  GPU(row) -> GPU(column)"), std::string::npos);
  EXPECT_NE(result.out.find("GPU0  X     NV18  NV18  NV18"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("OK A r0"), std::string::npos);
  EXPECT_NE(result.out.find("478.1"), std::string::npos);
  EXPECT_NE(result.out.find("Legend:"), std::string::npos);
}

TEST(Cli, TopoFileFromEnvironmentWorksLikeTheFlag) {
  ::setenv("PEERLINK_TOPO_FILE", kH200.c_str(), 1);
  const CliResult result = runCli({"topo"});
  ::unsetenv("PEERLINK_TOPO_FILE");
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("NV18"), std::string::npos);
}

TEST(Cli, TopoJsonRoundTripsAndGoesToStdoutWithDash) {
  TempDir dir;
  const CliResult toFile = runCli({"topo", "--topo-file", kH200, "--json", (dir / "out.json").string()});
  ASSERT_EQ(toFile.code, kExitOk) << toFile.err;
  Topology written = loadTopologyFile((dir / "out.json").string());
  const Topology original = loadTopologyFile(kH200);
  EXPECT_EQ(written.gpus.size(), 4u);
  written.source = original.source;  // loading records where a topology came from
  EXPECT_EQ(topologyToJson(written), topologyToJson(original));
  const CliResult toStdout = runCli({"topo", "--topo-file", kH200, "--json", "-"});
  ASSERT_EQ(toStdout.code, kExitOk);
  EXPECT_EQ(nlohmann::json::parse(toStdout.out).at("schema"), "peerlink.topology");
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "out.json") << "left behind: " << entry.path();
  }
}

TEST(Cli, FailedRunsLeaveNoFiles) {
  TempDir dir;
  const CliResult badInput =
      runCli({"topo", "--topo-file", (dir / "missing.json").string(), "--json", (dir / "out.json").string()});
  EXPECT_EQ(badInput.code, kExitUsage);
  const CliResult badFolder = runCli({"topo", "--topo-file", kH200, "--json", (dir / "no/such/dir/out.json").string()});
  EXPECT_EQ(badFolder.code, kExitUsage);
  EXPECT_EQ(lineCount(badFolder.err), 1u) << badFolder.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Cli, MalformedParameterIsAUsageErrorNamingIt) {
  ::setenv("PEERLINK_DEBUG", "LOUD", 1);
  const CliResult result = runCli({"env"});
  ::unsetenv("PEERLINK_DEBUG");
  EXPECT_EQ(result.code, kExitUsage);
  EXPECT_EQ(lineCount(result.err), 1u) << result.err;
  EXPECT_NE(result.err.find("PEERLINK_DEBUG='LOUD'"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("WARN, INFO, TRACE"), std::string::npos) << result.err;
}

TEST(Cli, EnvListsEveryParameterWithValueAndSource) {
  ::setenv("PEERLINK_NVML", "0", 1);
  ::setenv("PEERLINK_DEBG", "INFO", 1);
  ::setenv("PEERLINK_COLL_MAX_BLOCKS", "64", 1);
  const CliResult text = runCli({"env"});
  const CliResult all = runCli({"env", "--all"});
  const CliResult json = runCli({"env", "--json"});
  const CliResult allJson = runCli({"env", "--all", "--json"});
  ::unsetenv("PEERLINK_NVML");
  ::unsetenv("PEERLINK_DEBG");
  ::unsetenv("PEERLINK_COLL_MAX_BLOCKS");
  ASSERT_EQ(text.code, kExitOk);
  ASSERT_EQ(all.code, kExitOk);
  // Users' settings, and the others only where set; --all lists every one.
  std::size_t forUsers = 0;
  for (const ParamSpec& spec : paramRegistry()) {
    EXPECT_NE(all.out.find(spec.name), std::string::npos) << spec.name;
    const bool shown = spec.audience == ParamAudience::User || spec.name == "PEERLINK_COLL_MAX_BLOCKS";
    EXPECT_EQ(text.out.find(spec.name) != std::string::npos, shown) << spec.name;
    forUsers += shown ? 1 : 0;
  }
  EXPECT_NE(text.out.find("peerlink env --all"), std::string::npos) << text.out;
  EXPECT_EQ(all.out.find("peerlink env --all"), std::string::npos) << all.out;
  EXPECT_NE(text.out.find("environment"), std::string::npos);
  EXPECT_NE(text.err.find("did you mean PEERLINK_DEBUG?"), std::string::npos) << text.err;
  EXPECT_EQ(nlohmann::json::parse(json.out).at("parameters").size(), forUsers);
  const auto document = nlohmann::json::parse(allJson.out);
  ASSERT_EQ(document.at("parameters").size(), paramRegistry().size());
  for (const auto& entry : document.at("parameters")) {
    EXPECT_EQ(entry.at("audience"), paramAudienceName(paramSpec(entry.at("name")).audience));
    if (entry.at("name") == "PEERLINK_NVML") {
      EXPECT_EQ(entry.at("value"), "0");
      EXPECT_EQ(entry.at("source"), "environment");
    }
  }
}

// A saved topology is another machine's: doctor refuses it (flag or variable) rather than marking every pair
// BROKEN and adding this machine's findings to a report about another.
TEST(Cli, DoctorRefusesASavedTopology) {
  const CliResult flag = runCli({"doctor", "--topo-file", kH200, "--no-cross-process"});
  EXPECT_EQ(flag.code, kExitUsage) << flag.err;
  EXPECT_EQ(lineCount(flag.err), 1u) << flag.err;
  EXPECT_NE(flag.err.find("doctor cannot check a saved topology (--topo-file " + kH200 + ")"), std::string::npos)
      << flag.err;
  EXPECT_NE(flag.err.find("peerlink topo --topo-file FILE"), std::string::npos) << flag.err;
  EXPECT_TRUE(flag.out.empty());
  ::setenv("PEERLINK_TOPO_FILE", kH200.c_str(), 1);
  const CliResult variable = runCli({"doctor", "--json", "-"});
  ::unsetenv("PEERLINK_TOPO_FILE");
  EXPECT_EQ(variable.code, kExitUsage) << variable.err;
  EXPECT_NE(variable.err.find("(PEERLINK_TOPO_FILE=" + kH200 + ")"), std::string::npos) << variable.err;
  EXPECT_TRUE(variable.out.empty());
}

// The library's verifyPeers still takes a topology file (it fails closed: nothing probed is OK) and checks
// the devices asked for before anything else.
TEST(Cli, DoctorRejectsBadDevicesAndTimeouts) {
  const Params params = Params::fromMap({{"PEERLINK_TOPO_FILE", kH200}});
  for (const auto& [devices, mentions] : std::vector<std::pair<std::vector<int>, std::string>>{
           {{0, 7}, "GPU 7 does not exist"}, {{1, 1}, "listed twice"}}) {
    try {
      verifyPeers(devices, VerifyOptions(), params);
      ADD_FAILURE() << mentions;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
      EXPECT_NE(std::string(error.what()).find(mentions), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(runCli({"doctor", "--timeout-ms", "0"}).code, kExitUsage);
}

// A command or option that does not exist is named, not reported as a missing command.
TEST(Cli, UnknownCommandsAndOptionsAreNamed) {
  EXPECT_EQ(
      runCli({"frobnicate"}).err,
      "peerlink: unknown command 'frobnicate' (one of topo, bench, doctor, coll, place, plan, env, nccl-path; run "
      "'peerlink --help')\n");
  EXPECT_EQ(
      runCli({"--bogus"}).err,
      "peerlink: unknown option '--bogus' before the command (a command first: topo, bench, doctor, coll, place, plan, "
      "env, nccl-path; run 'peerlink --help')\n");
  EXPECT_EQ(runCli({}).err,
            "peerlink: no command given (one of topo, bench, doctor, coll, place, plan, env, nccl-path; run 'peerlink "
            "--help')\n");
  EXPECT_EQ(runCli({"--version"}).code, kExitOk);
  EXPECT_EQ(runCli({"_share-export", "--bogus"}).code, kExitUsage);  // the hidden command is still a command
}

// Topology output looks pairs up by index: 300 GPUs (89,700 pairs, three matrices) render in well under the
// 15 s that a scan per lookup took.
TEST(Cli, ThreeHundredGpusRenderFast) {
  Topology topology = loadTopologyFile(kH200);
  const Gpu model = topology.gpus[0];
  const GpuPair pairModel = topology.pairs[0];
  topology.gpus.clear();
  topology.pairs.clear();
  constexpr int kGpus = 300;
  for (int i = 0; i < kGpus; ++i) {
    Gpu gpu = model;
    gpu.cudaOrdinal = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.pciBusId = fmt::format("0000:{:02x}:{:02x}.0", i / 32, i % 32);
    topology.gpus.push_back(gpu);
  }
  for (int s = 0; s < kGpus; ++s) {
    for (int d = 0; d < kGpus; ++d) {
      if (s == d) continue;
      GpuPair pair = pairModel;
      pair.src = s;
      pair.dst = d;
      topology.pairs.push_back(pair);
    }
  }
  validateTopology(topology);
  const auto start = std::chrono::steady_clock::now();
  const std::string text = formatTopologyText(topology);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(text.find("GPU299"), std::string::npos);
}

// The real binary, as a user runs it: exit code and a single stderr line without a GPU.
// `peerlink coll --explain` on a saved topology: what each size would run, without a GPU. On the 4-GPU
// NVLink fixture a reduce-scatter of 64 MiB blocks (256 MiB in nccl-tests' sizes) is a ring, 32 MiB blocks
// read directly; PEERLINK_ALGO steers it as it steers the communicator.
TEST(Cli, CollExplainNeedsNoGpu) {
  const CliResult scatter =
      runCli({"coll", "--explain", "--topo-file", kH200, "-o", "reduce_scatter", "-b", "64M", "-e", "128M"});
  ASSERT_EQ(scatter.code, kExitOk) << scatter.err;
  EXPECT_NE(scatter.out.find("reduce_scatter, f32, 4 ranks (an NVLink mesh)"), std::string::npos) << scatter.out;
  EXPECT_NE(scatter.out.find("    67108864     16777216  one_shot  shard_reduce "), std::string::npos) << scatter.out;
  EXPECT_NE(scatter.out.find("   134217728     33554432  ring      ring_reduce_scatter "), std::string::npos)
      << scatter.out;
  // All-reduce of 256 KiB runs in LL128 lines (their 0.8 MiB per rank fit LL128's 1.75 MiB budget); without
  // LL (PEERLINK_PROTO=SIMPLE) it reads directly out of place and runs two-shot in place. 1 GiB: the ring,
  // its segments gathered by the copy engines.
  const CliResult json =
      runCli({"coll", "--explain", "--topo-file", kH200, "-b", "256K", "-e", "1G", "-f", "4096", "--json", "-"});
  ASSERT_EQ(json.code, kExitOk) << json.err;
  const nlohmann::json document = nlohmann::json::parse(json.out);
  EXPECT_EQ(document.at("schema"), "peerlink.coll_explain");
  ASSERT_EQ(document.at("rows").size(), 2u);
  EXPECT_EQ(document["rows"][0]["out_of_place"]["kernel"], "ll128");
  EXPECT_EQ(document["rows"][0]["in_place"]["kernel"], "ll128");
  EXPECT_EQ(document["rows"][1]["out_of_place"]["kernel"], "ce_ring_all_reduce");
  ::setenv("PEERLINK_PROTO", "SIMPLE", 1);
  const CliResult simple =
      runCli({"coll", "--explain", "--topo-file", kH200, "-b", "256K", "-e", "256K", "--json", "-"});
  ::unsetenv("PEERLINK_PROTO");
  ASSERT_EQ(simple.code, kExitOk) << simple.err;
  const nlohmann::json simpleDocument = nlohmann::json::parse(simple.out);
  EXPECT_EQ(simpleDocument["rows"][0]["out_of_place"]["kernel"], "one_shot_reduce");
  EXPECT_EQ(simpleDocument["rows"][0]["in_place"]["kernel"], "two_shot");
  ::setenv("PEERLINK_ALGO", "TWOSHOT", 1);
  const CliResult forced = runCli({"coll", "--explain", "--topo-file", kH200, "-b", "1G", "-e", "1G", "--json", "-"});
  ::unsetenv("PEERLINK_ALGO");
  ASSERT_EQ(forced.code, kExitOk) << forced.err;
  // Forced two-shot at 1 GiB: the split kernels' reduce-scatter, its shards gathered by the copy engines.
  EXPECT_EQ(nlohmann::json::parse(forced.out)["rows"][0]["out_of_place"]["kernel"], "ce_two_shot");
}

// With --procs: the way each call goes across the processes, eager and in a graph. All-reduce on the 4-GPU fixture:
// 256 KiB in LL lines on each rank's own buffers; 8 MiB needs the peers' buffers, which unregistered are out of
// reach, so the arena ring (AUTO: all-reduces from 8 MiB); 256 MiB eager is shared at the call (AUTO: counts from 32
// MiB), captured the arena ring (a graph would keep the peers' buffers); registered, the windows at every size
// that needs the peers. Without sharing, an all-gather (never the arena ring under AUTO) stages.
TEST(Cli, CollExplainAcrossProcessesSaysTheWayOfEachCall) {
  const auto ways = [](const nlohmann::json& row) {
    const nlohmann::json& across = row.at("across_processes");
    return std::make_pair(across.at("eager").at("way").get<std::string>(),
                          across.at("graph").at("way").get<std::string>());
  };
  const CliResult unregistered = runCli({"coll", "--explain", "--topo-file", kH200, "-b", "256K", "-e", "256M", "-f",
                                         "32", "--procs", "4", "--json", "-"});
  ASSERT_EQ(unregistered.code, kExitOk) << unregistered.err;
  const nlohmann::json document = nlohmann::json::parse(unregistered.out);
  EXPECT_EQ(document.at("processes"), 4);
  EXPECT_EQ(document.at("registered"), false);
  ASSERT_EQ(document.at("rows").size(), 3u);
  using Ways = std::pair<std::string, std::string>;
  EXPECT_EQ(ways(document["rows"][0]), Ways("own_buffers", "own_buffers"));
  EXPECT_EQ(ways(document["rows"][1]), Ways("arena_ring", "arena_ring"));
  EXPECT_EQ(ways(document["rows"][2]), Ways("shared_at_call", "arena_ring"));

  const CliResult text =
      runCli({"coll", "--explain", "--topo-file", kH200, "-b", "256M", "-e", "256M", "--procs", "4"});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("all_reduce, f32, 4 ranks in 4 processes (an NVLink mesh)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("      across processes: on buffers shared with the peers at the call (cudaMalloc memory), "
                          "reaching them directly; in a graph: as the arena ring (64 blocks"),
            std::string::npos)
      << text.out;

  const CliResult registered = runCli({"coll", "--explain", "--topo-file", kH200, "-b", "256K", "-e", "256M", "-f",
                                       "32", "--procs", "2", "--register", "--json", "-"});
  ASSERT_EQ(registered.code, kExitOk) << registered.err;
  const nlohmann::json windows = nlohmann::json::parse(registered.out);
  EXPECT_EQ(ways(windows["rows"][0]), Ways("own_buffers", "own_buffers"));
  EXPECT_EQ(ways(windows["rows"][2]), Ways("registered_windows", "registered_windows"));

  ::setenv("PEERLINK_COLL_SHARE_BUFFERS", "OFF", 1);
  const CliResult gather = runCli({"coll", "--explain", "--topo-file", kH200, "-o", "all_gather", "-b", "1G", "-e",
                                   "1G", "--procs", "2", "--json", "-"});
  ::unsetenv("PEERLINK_COLL_SHARE_BUFFERS");
  ASSERT_EQ(gather.code, kExitOk) << gather.err;
  EXPECT_EQ(ways(nlohmann::json::parse(gather.out)["rows"][0]), Ways("staging_windows", "staging_windows"));
}

TEST(Cli, CollExplainAcrossProcessesRejectsWhatCannotBe) {
  const CliResult many = runCli({"coll", "--explain", "--topo-file", kH200, "--procs", "5"});
  EXPECT_EQ(many.code, kExitUsage);
  EXPECT_EQ(many.err, "peerlink: --procs 5: the topology has 4 GPU(s), one a process\n");
  EXPECT_EQ(runCli({"coll", "--explain", "--topo-file", kH200, "--procs", "1"}).code, kExitUsage);
  EXPECT_EQ(runCli({"coll", "--explain", "--topo-file", kH200, "--procs", "2", "-g", "2"}).code, kExitUsage);
  const CliResult alone = runCli({"coll", "--explain", "--topo-file", kH200, "--register"});
  EXPECT_EQ(alone.code, kExitUsage);
  EXPECT_NE(alone.err.find("give --procs N too"), std::string::npos) << alone.err;
}

TEST(Cli, CollExplainRejectsMeasuringOptionsAndTooManyGpus) {
  EXPECT_EQ(runCli({"coll", "--explain", "--topo-file", kH200, "-n", "5"}).code, kExitUsage);
  EXPECT_EQ(runCli({"coll", "--topo-file", kH200}).code, kExitUsage);  // --topo-file only explains
  const CliResult gpus = runCli({"coll", "--explain", "--topo-file", kH200, "-g", "5"});
  EXPECT_EQ(gpus.code, kExitUsage);
  EXPECT_EQ(gpus.err, "peerlink: -g 5: the topology has 4 GPU(s)\n");
}

TEST(CliBinary, TopoWithoutGpuSaysSoAndPointsToAnExample) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  const std::string command =
      std::string(PEERLINK_CLI_PATH) + " topo >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitNoGpu);
  std::stringstream err;
  err << std::ifstream(dir / "err").rdbuf();
  EXPECT_EQ(lineCount(err.str()), 1u) << err.str();
  EXPECT_NE(err.str().find("no CUDA GPU found"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("peerlink topo --topo-file "), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("examples/topologies/h200x4_vm.json"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace peerlink::cli
