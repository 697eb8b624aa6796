// Output files (tools/peerlink/output_file.hpp): regular files replaced whole or not at all, symbolic links
// kept and written through, special files written in place, long names, and a full disk reported.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include "output_file.hpp"
#include "peerlink/error.hpp"
#include "scratch_dir.hpp"

namespace peerlink::cli {
namespace {

namespace fs = std::filesystem;

std::string readFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(OutputTarget, WhereEachKindOfPathLeads) {
  ScratchDir dir;
  using Kind = OutputTarget::Kind;
  EXPECT_EQ(resolveOutputTarget("-").kind, Kind::Stdout);
  EXPECT_EQ(resolveOutputTarget(dir / "new.json").kind, Kind::Replace);
  EXPECT_EQ(resolveOutputTarget("/dev/null").kind, Kind::Direct);
  EXPECT_EQ(resolveOutputTarget("/dev/stdout").kind, Kind::Direct);
  EXPECT_EQ(resolveOutputTarget("/proc/self/fd/2").kind, Kind::Direct);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(resolveOutputTarget(dir / "fifo").kind, Kind::Direct);
  // A link to a regular file (or to a name not yet made) is followed: the link stays, its target is replaced.
  std::ofstream(dir / "real.json") << "old";
  fs::create_symlink("real.json", dir / "link.json");
  EXPECT_EQ(resolveOutputTarget(dir / "link.json").kind, Kind::Replace);
  EXPECT_EQ(resolveOutputTarget(dir / "link.json").path, dir / "real.json");
  fs::create_symlink(dir / "later.json", dir / "dangling.json");
  EXPECT_EQ(resolveOutputTarget(dir / "dangling.json").path, dir / "later.json");
  fs::create_symlink("/dev/null", dir / "null-link");
  EXPECT_EQ(resolveOutputTarget(dir / "null-link").kind, Kind::Direct);
  fs::create_symlink("loop-b", dir / "loop-a");
  fs::create_symlink("loop-a", dir / "loop-b");
  EXPECT_THROW(resolveOutputTarget(dir / "loop-a"), Error);
  EXPECT_THROW(resolveOutputTarget(""), Error);
  try {
    resolveOutputTarget(dir / "");
    ADD_FAILURE() << "a folder";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("it is a folder"), std::string::npos) << error.what();
  }
}

TEST(OutputFile, ReplacesARegularFileWholeAndKeepsItsMode) {
  ScratchDir dir;
  std::ostringstream out;
  std::ofstream(dir / "r.json") << "an older, longer content";
  ::chmod((dir / "r.json").c_str(), 0640);
  writeOutputFile(dir / "r.json", "new", out);
  EXPECT_EQ(readFile(dir / "r.json"), "new");
  struct stat info {};
  ASSERT_EQ(::stat((dir / "r.json").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  EXPECT_EQ(dir.entries(), 1u);  // no temporary file left
  EXPECT_TRUE(out.str().empty());
}

TEST(OutputFile, WritesThroughASymbolicLink) {
  ScratchDir dir;
  std::ostringstream out;
  fs::create_directories(dir / "results");
  fs::create_symlink("results/run.json", dir / "latest.json");
  writeOutputFile(dir / "latest.json", "{}", out);
  EXPECT_TRUE(fs::is_symlink(dir / "latest.json"));
  EXPECT_EQ(readFile(dir / "results/run.json"), "{}");
}

TEST(OutputFile, ALongValidNameWorks) {
  ScratchDir dir;
  std::ostringstream out;
  const std::string name = std::string(245, 'n') + ".json";  // 250 bytes, NAME_MAX is 255
  writeOutputFile(dir / name, "long", out);
  EXPECT_EQ(readFile(dir / name), "long");
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(OutputFile, SpecialFilesAreWrittenInPlace) {
  ScratchDir dir;
  std::ostringstream out;
  out << "printed first";
  EXPECT_NO_THROW(writeOutputFile("/dev/null", "discarded", out));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return readFile(dir / "fifo"); });
  writeOutputFile(dir / "fifo", "through the FIFO", out);
  EXPECT_EQ(reader.get(), "through the FIFO");
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));  // still a FIFO, not replaced by a regular file
}

TEST(OutputFile, AFullDiskIsASystemErrorAndLeavesNothing) {
  std::ostringstream out;
  try {
    writeOutputFile("/dev/full", std::string(1 << 16, 'x'), out);
    ADD_FAILURE() << "wrote to /dev/full";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::SystemError);
    EXPECT_EQ(std::string(error.what()), "cannot write /dev/full: No space left on device");
  }
}

TEST(OutputFile, CheckedBeforeARun) {
  ScratchDir dir;
  EXPECT_NO_THROW(checkOutputPath("--json", dir / "new.json"));
  EXPECT_NO_THROW(checkOutputPath("--json", "/dev/null"));
  EXPECT_NO_THROW(checkOutputPath("--json", "-"));
  try {
    checkOutputPath("--json", dir / "missing/x.json");
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("does not exist"), std::string::npos) << error.what();
  }
  EXPECT_THROW(checkOutputPath("--csv", dir / ""), Error);
}

}  // namespace
}  // namespace peerlink::cli
