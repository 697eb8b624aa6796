// What the tests of the HTML reports (`peerlink bench --html`, `peerlink coll --html`) share: a temporary
// folder per test, reading and writing files, counting, the check that a page fetches nothing, and headless
// Chromium where it is installed.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace peerlink::cli
