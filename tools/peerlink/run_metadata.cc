#include "run_metadata.hpp"

#include <unistd.h>

#include <ctime>

#include "peerlink/version.hpp"

namespace peerlink::cli {

nlohmann::json runMetadata(const std::string& commandLine) {
  char date[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &utc);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return {{"tool", "peerlink"}, {"version", kVersion}, {"git_commit", kGitCommit},
          {"date", date},       {"host", host},        {"command", commandLine}};
}

std::string joinCommandLine(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += argv[i];
  }
  return line;
}

}  // namespace peerlink::cli
