// Reading files given from outside (core/input_file.hpp): regular files only, never blocking on a FIFO,
// never reading a device forever, never more than the cap.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/input_file.hpp"
#include "peerlink/error.hpp"
#include "scratch_dir.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

std::string failure(const std::string& path, std::size_t maxBytes = 1024) {
  try {
    readInputFile(path, "topology file", maxBytes);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidInput) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "read " << path;
  return {};
}

TEST(InputFile, ReadsARegularFileWhole) {
  ScratchDir dir;
  std::ofstream(dir / "t.json") << "{\"a\": 1}\n";
  EXPECT_EQ(readInputFile(dir / "t.json", "topology file", 1024), "{\"a\": 1}\n");
  std::ofstream(dir / "exact") << std::string(1024, 'x');
  EXPECT_EQ(readInputFile(dir / "exact", "topology file", 1024).size(), 1024u);
}

TEST(InputFile, RejectsWhatIsNotARegularFile) {
  ScratchDir dir;
  EXPECT_EQ(failure(""), "topology file: the file name is empty");
  EXPECT_EQ(failure(dir / "missing.json"),
            "topology file " + (dir / "missing.json") + ": cannot open: No such file or directory");
  fs::create_directories(dir / "folder");
  EXPECT_NE(failure(dir / "folder").find("is a folder, not a regular file"), std::string::npos);
  EXPECT_NE(failure("/dev/zero").find("/dev/zero: is a character device, not a regular file"), std::string::npos);
}

// A FIFO nobody writes to: open() returns at once and the reader says what it is, instead of waiting for a
// writer forever.
TEST(InputFile, AFifoIsRefusedWithoutWaiting) {
  ScratchDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(failure(dir / "fifo").find("is a FIFO (named pipe), not a regular file"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(InputFile, LargerThanTheCapIsRefusedBeforeReading) {
  ScratchDir dir;
  // A sparse file of 3 GiB costs no disk and would cost 3 GiB of memory to read.
  { std::ofstream(dir / "huge.json") << "["; }
  fs::resize_file(dir / "huge.json", std::uintmax_t{3} << 30);
  EXPECT_NE(failure(dir / "huge.json", kMaxJsonInputBytes)
                .find("is 3221225472 bytes, larger than the 128 MiB peerlink reads"),
            std::string::npos);
  std::ofstream(dir / "over") << std::string(1025, 'x');
  EXPECT_NE(failure(dir / "over").find("larger than the 1024 bytes peerlink reads"), std::string::npos);
}

// "-" reads standard input, with the same cap.
TEST(InputFile, DashReadsStandardInput) {
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  const int savedStdin = ::dup(STDIN_FILENO);
  ASSERT_EQ(::write(pipeFds[1], "[1]", 3), 3);
  ::close(pipeFds[1]);
  ::dup2(pipeFds[0], STDIN_FILENO);
  ::close(pipeFds[0]);
  const std::string text = readInputFile("-", "saved run", 16);
  ::dup2(savedStdin, STDIN_FILENO);
  ::close(savedStdin);
  EXPECT_EQ(text, "[1]");
}

}  // namespace
}  // namespace peerlink
