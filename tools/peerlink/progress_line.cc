// A command's progress on stderr (progress_line.hpp).
#include "progress_line.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

namespace peerlink::cli {

ProgressLine stderrProgress(const std::string& command) {
  if (isatty(STDERR_FILENO) != 0) {
    return {[](const std::string& what) { std::fprintf(stderr, "\r\033[K%s", what.c_str()); },
            [] { std::fprintf(stderr, "\r\033[K"); }};
  }
  auto throttle = std::make_shared<ProgressThrottle>();
  return {[command, throttle](const std::string& what) {
            if (!throttle->due(std::chrono::steady_clock::now())) return;
            std::fprintf(stderr, "%s: %s\n", command.c_str(), what.c_str());
            std::fflush(stderr);
          },
          [] {}};
}

}  // namespace peerlink::cli
