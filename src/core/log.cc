#include "core/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink {
namespace {

struct LogConfig {
  std::atomic<bool> configured{false};
  std::atomic<int> level{static_cast<int>(LogLevel::Warn)};
  std::atomic<unsigned> subsystems{~0u};
};

LogConfig& config() {
  static LogConfig instance;
  return instance;
}

std::mutex& outputMutex() {
  static std::mutex mutex;
  return mutex;
}

unsigned subsysBit(const std::string& name) {
  if (name == "INIT") return static_cast<unsigned>(LogSubsys::Init);
  if (name == "TOPO") return static_cast<unsigned>(LogSubsys::Topo);
  if (name == "P2P") return static_cast<unsigned>(LogSubsys::P2p);
  if (name == "COLL") return static_cast<unsigned>(LogSubsys::Coll);
  if (name == "DOCTOR") return static_cast<unsigned>(LogSubsys::Doctor);
  if (name == "BENCH") return static_cast<unsigned>(LogSubsys::Bench);
  throw Error(ErrorCode::Internal, "log subsystem " + name + " has no bit");
}

const char* subsysName(LogSubsys subsys) {
  switch (subsys) {
    case LogSubsys::Init: return "INIT";
    case LogSubsys::Topo: return "TOPO";
    case LogSubsys::P2p: return "P2P";
    case LogSubsys::Coll: return "COLL";
    case LogSubsys::Doctor: return "DOCTOR";
    case LogSubsys::Bench: return "BENCH";
  }
  return "?";
}

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Warn: return "WARN";
    case LogLevel::Info: return "INFO";
    case LogLevel::Trace: return "TRACE";
  }
  return "?";
}

void ensureConfigured() {
  if (config().configured.load(std::memory_order_acquire)) return;
  try {
    configureLogging(Params::fromEnvironment());
  } catch (const Error&) {
    // A malformed PEERLINK_* value is reported by whoever reads Params; logging keeps its defaults.
    config().configured.store(true, std::memory_order_release);
  }
}

}  // namespace

void configureLogging(const Params& params) {
  const std::string& level = params.getString("PEERLINK_DEBUG");
  LogLevel parsed = LogLevel::Warn;
  if (level == "INFO") parsed = LogLevel::Info;
  if (level == "TRACE") parsed = LogLevel::Trace;
  unsigned bits = 0;
  for (const std::string& name : params.getList("PEERLINK_DEBUG_SUBSYS")) bits |= subsysBit(name);
  config().level.store(static_cast<int>(parsed), std::memory_order_relaxed);
  config().subsystems.store(bits, std::memory_order_relaxed);
  config().configured.store(true, std::memory_order_release);
}

bool logEnabled(LogLevel level, LogSubsys subsys) {
  if (level == LogLevel::Warn) return true;
  ensureConfigured();
  if (static_cast<int>(level) > config().level.load(std::memory_order_relaxed)) return false;
  return (config().subsystems.load(std::memory_order_relaxed) & static_cast<unsigned>(subsys)) != 0;
}

void logLine(LogLevel level, LogSubsys subsys, const std::string& message) {
  static const std::string host = [] {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) return std::string("?");
    return std::string(name);
  }();
  std::lock_guard<std::mutex> lock(outputMutex());
  std::fprintf(stderr, "%s:%d PEERLINK %s %s %s\n", host.c_str(), static_cast<int>(getpid()), levelName(level),
               subsysName(subsys), message.c_str());
  std::fflush(stderr);
}

}  // namespace peerlink
