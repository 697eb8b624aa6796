// The progress of a long command (bench, coll, doctor) on stderr. On a terminal, one line rewritten in place; in a
// log or a pipe, a plain line at most every ProgressThrottle::kEvery, so a long run shows what it is doing -- and
// where it stopped, if it stops -- without filling the log.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace peerlink::cli {

/// When a log's next progress line is due: the first at once, then one per kEvery at most. Pure.
class ProgressThrottle {
 public:
  static constexpr std::chrono::seconds kEvery{10};
  bool due(std::chrono::steady_clock::time_point now) {
    if (last_ && now - *last_ < kEvery) return false;
    last_ = now;
    return true;
  }

 private:
  std::optional<std::chrono::steady_clock::time_point> last_;
};

/// A command's progress on stderr: `report` for the run's progress callback (prefixed "<command>: " in a log), and
/// `finish` to clear the terminal's line once the run is over.
struct ProgressLine {
  std::function<void(const std::string&)> report;
  std::function<void()> finish;
};
ProgressLine stderrProgress(const std::string& command);

}  // namespace peerlink::cli
