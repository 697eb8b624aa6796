// `peerlink nccl-path`: where libpeerlink_nccl.so.2 and its libnccl.so.2 link are found, installed or built, from
// fake trees; the real binary beside the built library; and the error when there is none.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"
#include "command_output.hpp"
#include "nccl_path.hpp"
#include "scratch_dir.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;

void touch(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "not really a library";
}

TEST(NcclPath, FindsAnInstalledLibraryAndItsLink) {
  ScratchDir tree;
  touch(tree / "lib/libpeerlink_nccl.so.2");
  fs::create_directories(tree / "lib/peerlink/nccl");
  fs::create_symlink("../../libpeerlink_nccl.so.2", tree / "lib/peerlink/nccl/libnccl.so.2");
  const auto found = findNcclLibrary(ncclLibraryPlaces(tree / "bin", "lib"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->library, fs::canonical(tree / "lib/libpeerlink_nccl.so.2"));
  EXPECT_EQ(found->folder, fs::canonical(tree / "lib/peerlink/nccl"));
}

TEST(NcclPath, FindsABuiltLibraryBesideTheBinary) {
  ScratchDir tree;
  touch(tree / "build/nccl_api/libpeerlink_nccl.so.2");
  fs::create_symlink("libpeerlink_nccl.so.2", tree / "build/nccl_api/libnccl.so.2");
  const auto found = findNcclLibrary(ncclLibraryPlaces(tree / "build", "lib"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->folder, fs::canonical(tree / "build/nccl_api"));
}

TEST(NcclPath, ALinkToAnotherLibraryOrNoLinkIsNoPlace) {
  ScratchDir tree;
  touch(tree / "build/nccl_api/libpeerlink_nccl.so.2");
  EXPECT_FALSE(findNcclLibrary(ncclLibraryPlaces(tree / "build", "lib")));  // no libnccl.so.2 beside it
  touch(tree / "build/nccl_api/libnccl.so.2");                              // a real NCCL there is not this library
  EXPECT_FALSE(findNcclLibrary(ncclLibraryPlaces(tree / "build", "lib")));
}

TEST(NcclPath, TheBuiltBinaryPrintsTheBuiltLibrary) {
  const fs::path binary = PEERLINK_CLI_PATH;
  EXPECT_EQ(testing::commandOutput(binary.string() + " nccl-path"),
            fs::canonical(binary.parent_path() / "nccl_api/libpeerlink_nccl.so.2").string() + "\n");
  EXPECT_EQ(testing::commandOutput(binary.string() + " nccl-path --dir"),
            fs::canonical(binary.parent_path() / "nccl_api").string() + "\n");
}

TEST(NcclPath, WithoutTheLibraryTheCommandSaysWhereItLooked) {
  // In-process, the binary is this test's, beside which no library lies.
  const CliResult result = runCli({"nccl-path"});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("no libpeerlink_nccl.so.2"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("build the target peerlink_nccl"), std::string::npos);
}

}  // namespace
}  // namespace peerlink::cli
