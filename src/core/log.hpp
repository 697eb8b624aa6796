// Logging with levels and subsystems (PEERLINK_DEBUG, PEERLINK_DEBUG_SUBSYS).
//
// The logger is the one process-wide setting peerlink keeps: log lines come from deep inside the library
// where no Params travels. It is configured explicitly (configureLogging, called by the CLI and by
// discoverTopology with the caller's Params) and otherwise from the environment on first use.
// Warnings always print; INFO and TRACE only for the selected subsystems.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

namespace peerlink {

class Params;

enum class LogLevel : int { Warn = 0, Info = 1, Trace = 2 };
enum class LogSubsys : unsigned {
  Init = 1u << 0,
  Topo = 1u << 1,
  P2p = 1u << 2,
  Coll = 1u << 3,
  Doctor = 1u << 4,
  Bench = 1u << 5
};

/// Applies PEERLINK_DEBUG and PEERLINK_DEBUG_SUBSYS from `params`.
void configureLogging(const Params& params);
/// Whether a line of this level and subsystem would be printed.
bool logEnabled(LogLevel level, LogSubsys subsys);
/// Writes one line: "host:pid PEERLINK WARN TOPO message".
void logLine(LogLevel level, LogSubsys subsys, const std::string& message);

template <typename... Args>
void logWarn(LogSubsys subsys, fmt::format_string<Args...> format, Args&&... args) {
  logLine(LogLevel::Warn, subsys, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void logInfo(LogSubsys subsys, fmt::format_string<Args...> format, Args&&... args) {
  if (logEnabled(LogLevel::Info, subsys))
    logLine(LogLevel::Info, subsys, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void logTrace(LogSubsys subsys, fmt::format_string<Args...> format, Args&&... args) {
  if (logEnabled(LogLevel::Trace, subsys)) {
    logLine(LogLevel::Trace, subsys, fmt::format(format, std::forward<Args>(args)...));
  }
}

}  // namespace peerlink
