// `peerlink coll` on the command line (flags, usage errors -> exit 2, no GPU -> exit 3, --from-json) and
// the NCCL loader (missing file, a library that is not NCCL, the toolkit's real NCCL where installed).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"
#include "coll_bench/coll_bench.hpp"
#include "coll_bench/reference_nccl.hpp"
#include "coll_format.hpp"
#include "exit_codes.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;

bool haveGpu() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

TEST(CollCommand, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"coll", "-o", "allsum"},
      {"coll", "-d", "float128"},
      {"coll", "--op", "xor"},
      {"coll", "-c", "2"},
      {"coll", "-n", "0"},
      {"coll", "-w", "-1"},
      {"coll", "-g", "-2"},
      {"coll", "-r", "-1", "-o", "broadcast"},
      {"coll", "-b", "1K", "-e", "8"},
      {"coll", "-b", "8", "-e", "1K", "-f", "1"},
      {"coll", "-b", "12Q"},
      {"coll", "-d", "int32", "--op", "avg"},
      {"coll", "--capture", "sometimes"},
      {"coll", "--no-nccl", "--nccl-only"},
      {"coll", "--json", "/nonexistent-folder/run.json"},
      {"coll", "--from-json", "/nonexistent-folder/run.json"},
      {"coll", "--from-json", "x.json", "-n", "5"},
      {"coll", "--from-json", "x.json", "--iteration-times"},
      {"coll", "--explain", "--iteration-times"},
      {"coll", "--bogus"},
  };
  for (const std::vector<std::string>& args : bad) {
    std::string line;
    for (const std::string& arg : args) line += arg + " ";
    const CliResult result = runCli(args);
    EXPECT_EQ(result.code, kExitUsage) << line << "\n" << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << line << "\n" << result.err;
  }
}

TEST(CollCommand, OpFlagConfusionIsExplained) {
  const CliResult result = runCli({"coll", "-o", "sum"});
  EXPECT_EQ(result.code, kExitUsage);
  EXPECT_NE(result.err.find("--op"), std::string::npos) << result.err;
}

TEST(CollCommand, AcceptsNcclTestsSpellings) {
  for (const char* name : {"allreduce", "all_gather", "reducescatter", "alltoall", "sendrecv", "broadcast"}) {
    EXPECT_TRUE(parseCollective(name).has_value()) << name;
  }
  for (const char* name : {"float", "half", "bfloat16", "int8", "uint64", "double"}) {
    EXPECT_TRUE(parseDataType(name).has_value()) << name;
  }
}

TEST(CollCommand, NoGpuExitsThree) {
  if (haveGpu()) GTEST_SKIP() << "this machine has a GPU";
  const CliResult result = runCli({"coll", "-b", "8", "-e", "64"});
  EXPECT_EQ(result.code, kExitNoGpu) << result.err;
  EXPECT_NE(result.err.find("GPU"), std::string::npos) << result.err;
}

TEST(CollCommand, FromJsonShowsASavedRun) {
  coll::CollRun run;
  run.options.sizes = {8};
  run.ranks = 2;
  run.devices = {0, 1};
  run.nccl.reason = "libnccl.so.2 not found";
  for (coll::CollConfig config : coll::kCollConfigs) {
    run.configs[static_cast<int>(config)] = {!coll::isNcclConfig(config),
                                             coll::isNcclConfig(config) ? "NCCL not loaded" : ""};
  }
  coll::CollRow row;
  row.bytes = 8;
  row.count = 2;
  row.outOfPlace[0].status = coll::CollMeasurement::Status::Ok;
  row.outOfPlace[0].timeUs = 5;
  row.outOfPlace[0].wrong = 0;
  run.rows.push_back(row);
  const fs::path file = fs::temp_directory_path() / ("peerlink-coll-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << collToJson(run, Params()).dump(2);
  CliResult result = runCli({"coll", "--from-json", file.string()});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_NE(result.out.find("# NCCL: not loaded (libnccl.so.2 not found)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("     5.00"), std::string::npos) << result.out;

  run.rows[0].inPlace[0].status = coll::CollMeasurement::Status::Ok;
  run.rows[0].inPlace[0].wrong = 2;
  std::ofstream(file) << collToJson(run, Params()).dump(2);
  result = runCli({"coll", "--from-json", file.string()});
  EXPECT_EQ(result.code, kExitBroken) << result.err;
  fs::remove(file);
}

TEST(CollCommand, HelpListsTheFlags) {
  const CliResult result = runCli({"coll", "--help"});
  EXPECT_EQ(result.code, kExitOk);
  for (const char* flag : {"-b", "-e", "-f", "-g", "-n", "-w", "-c", "-o", "-d", "--op", "-r", "--json", "--html",
                           "--no-nccl", "--iteration-times"}) {
    EXPECT_NE(result.out.find(flag), std::string::npos) << flag;
  }
}

// ---- the NCCL loader -------------------------------------------------------------------------------

TEST(ReferenceNccl, MissingFileIsAReasonNotACrash) {
  const coll::ReferenceNccl library = coll::loadReferenceNccl("/nonexistent/libnccl.so.2");
  EXPECT_FALSE(library.loaded);
  EXPECT_NE(library.reason.find("PEERLINK_NCCL_LIBRARY=/nonexistent/libnccl.so.2"), std::string::npos)
      << library.reason;
  EXPECT_NE(library.reason.find("cannot load"), std::string::npos) << library.reason;
  ASSERT_EQ(library.searched.size(), 1u);  // a configured path is the only one tried
}

TEST(ReferenceNccl, ALibraryThatIsNotNccl) {
  const coll::ReferenceNccl library = coll::loadReferenceNccl("libm.so.6");
  EXPECT_FALSE(library.loaded);
  EXPECT_NE(library.reason.find("libm.so.6 is not NCCL (no symbol ncclGetVersion)"), std::string::npos)
      << library.reason;
}

TEST(ReferenceNccl, CandidatesAndVersions) {
  EXPECT_EQ(coll::ncclCandidates("/x/libnccl.so.2"), std::vector<std::string>{"/x/libnccl.so.2"});
  const std::vector<std::string> candidates = coll::ncclCandidates("");
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.front(), "libnccl.so.2");
  for (std::size_t i = 1; i < candidates.size(); ++i) EXPECT_TRUE(fs::exists(candidates[i])) << candidates[i];
  EXPECT_EQ(coll::ncclVersionString(22809), "2.28.9");
  EXPECT_EQ(coll::ncclVersionString(21903), "2.19.3");
  EXPECT_EQ(coll::ncclVersionString(2708), "2.7.8");
  EXPECT_EQ(coll::ncclDataTypeOf(DataType::BF16), 9);
  EXPECT_EQ(coll::ncclDataTypeOf(DataType::F32), 7);
  EXPECT_EQ(coll::ncclRedOpOf(ReduceOp::Min), 3);
  EXPECT_EQ(coll::ncclRedOpOf(ReduceOp::Avg), 4);
}

TEST(ReferenceNccl, TheToolkitsNccl) {
  std::string path;
  for (const char* candidate : {"/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2"}) {
    if (fs::exists(candidate)) path = candidate;
  }
  if (path.empty()) GTEST_SKIP() << "no NCCL beside the CUDA toolkit here";
  const coll::ReferenceNccl library = coll::loadReferenceNcclFile(path);
  ASSERT_TRUE(library.loaded) << library.reason;
  EXPECT_GE(library.versionCode, 20700);
  EXPECT_EQ(library.symmetric, library.versionCode >= coll::kNcclSymmetricMinVersion) << library.symmetricReason;
  EXPECT_NE(library.api.allReduce, nullptr);
  const coll::ReferenceNccl searched = coll::loadReferenceNccl("");
  EXPECT_TRUE(searched.loaded) << searched.reason;
}

TEST(ReferenceNccl, NvlsStaysOffUnlessTheUserSaidOtherwise) {
  const char* saved = std::getenv("NCCL_NVLS_ENABLE");
  const std::string previous = saved != nullptr ? saved : "";
  ::unsetenv("NCCL_NVLS_ENABLE");
  EXPECT_EQ(coll::ensureNvlsDisabled(), "NCCL_NVLS_ENABLE=0 (set by peerlink: NVLink multicast off)");
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  ::setenv("NCCL_NVLS_ENABLE", "1", 1);
  EXPECT_EQ(coll::ensureNvlsDisabled(), "NCCL_NVLS_ENABLE=1 (set by the user; left as is)");
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "1");
  if (saved != nullptr) {
    ::setenv("NCCL_NVLS_ENABLE", previous.c_str(), 1);
  } else {
    ::unsetenv("NCCL_NVLS_ENABLE");
  }
}

}  // namespace
}  // namespace peerlink::cli
