// What the tests of the HTML reports (`peerlink bench --html`, `peerlink coll --html`) share: a temporary
// folder per test, reading and writing files, counting, the check that a page fetches nothing, and headless
// Chromium where it is installed.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "exit_codes.hpp"

namespace peerlink::cli {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("peerlink-report-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline std::string readFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

inline void writeFile(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

inline std::size_t countOf(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

inline void expectOffline(const std::string& html) {
  const std::string xmlns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (std::size_t at = html.find("http"); at != std::string::npos; at = html.find("http", at + 4)) {
    ASSERT_GE(at, 7u);
    EXPECT_EQ(html.compare(at - 7, xmlns.size(), xmlns), 0) << html.substr(at - 7, 80);
  }
  for (const char* external : {"<script", "<link", "@import", "url(", "src="}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  EXPECT_EQ(countOf(html, "<svg"), countOf(html, "</svg>"));
}

inline std::string findChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    const std::string probe = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return name;
  }
  return "";
}

inline int runShell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// `html` written to dir/NAME.html, rendered by headless `chromium` (findChromium) into a 1400x3000
/// screenshot (dir/NAME.png, checked to exist and to hold more than a blank page's ~20 KB) and its DOM after
/// layout, which this returns. Chromium's messages go to dir/chromium.log, shown on a failure.
inline std::string renderedDom(const std::string& chromium, const TempDir& dir, const std::string& name,
                               const std::string& html) {
  const fs::path page = dir / (name + ".html");
  const fs::path png = dir / (name + ".png");
  const fs::path dom = dir / (name + ".dom");
  writeFile(page, html);
  const std::string browser = "timeout 90 " + chromium + " --headless --disable-gpu --no-sandbox --hide-scrollbars" +
                              " --no-first-run --user-data-dir=" + (dir / "profile").string();
  const std::string log = " 2>>" + (dir / "chromium.log").string();
  EXPECT_EQ(runShell(browser + " --window-size=1400,3000 --screenshot=" + png.string() + " file://" + page.string() +
                     " >/dev/null" + log),
            0)
      << readFile(dir / "chromium.log");
  EXPECT_TRUE(fs::exists(png)) << readFile(dir / "chromium.log");
  if (fs::exists(png)) {
    EXPECT_GT(fs::file_size(png), 100u * 1024) << name;
  }
  EXPECT_EQ(runShell(browser + " --dump-dom file://" + page.string() + " >" + dom.string() + log), 0);
  return readFile(dom);
}

/// A command line that must be refused before anything is measured, and what its one-line error names.
struct UsageCase {
  std::vector<std::string> args;
  std::string mentions;
};

/// Each case exits with kExitUsage and one line of error naming `mentions`.
inline void expectUsageErrors(const std::vector<UsageCase>& cases) {
  for (const UsageCase& c : cases) {
    const CliResult result = runCli(c.args);
    EXPECT_EQ(result.code, kExitUsage) << ::testing::PrintToString(c.args) << result.err;
    EXPECT_NE(result.err.find(c.mentions), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

}  // namespace peerlink::cli
