#include "doctor/verdict_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_io.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"
#include "peerlink/version.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSchema = "peerlink.doctor_cache";
constexpr int kSchemaVersion = 1;
constexpr std::uintmax_t kMaxEntryBytes = 1 << 20;  // an entry is a few KiB; anything huge is not ours

std::string sanitize(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '.' && c != '-') c = '_';
  }
  return out.empty() ? "unknown" : out;
}

json keyToJson(const VerdictCacheKey& key) {
  return {{"boot_id", key.bootId},
          {"driver_version", key.driverVersion},
          {"kernel_command_line", key.kernelCommandLine},
          {"src_bus_id", key.srcBusId},
          {"dst_bus_id", key.dstBusId},
          {"src_uuid", key.srcUuid},
          {"dst_uuid", key.dstUuid},
          {"peerlink_version", key.peerlinkVersion},
          {"options", key.options}};
}

int gpuByBusId(const Topology& topology, const std::string& busId) {
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    if (topology.gpus[i].pciBusId == busId) return static_cast<int>(i);
  }
  return -1;
}

json findingsToJson(const std::vector<Finding>& findings, const Topology& topology) {
  json out = json::array();
  for (const Finding& finding : findings) {
    json gpus = json::array();
    for (int gpu : finding.gpus) {
      if (gpu >= 0 && static_cast<std::size_t>(gpu) < topology.gpus.size()) {
        gpus.push_back(topology.gpus[static_cast<std::size_t>(gpu)].pciBusId);
      }
    }
    out.push_back({{"code", finding.code},
                   {"severity", verdictName(finding.severity)},
                   {"summary", finding.summary},
                   {"fix", finding.fix},
                   {"gpus", gpus},
                   {"cause", finding.cause}});
  }
  return out;
}

Verdict verdictFrom(const json& value) {
  const std::optional<Verdict> verdict = parseVerdictName(value.get<std::string>());
  if (!verdict) throw std::runtime_error("unknown verdict");
  return *verdict;
}

std::vector<Finding> findingsFromJson(const json& array, const Topology& topology) {
  std::vector<Finding> out;
  for (const json& entry : array) {
    Finding finding{entry.at("code").get<std::string>(),
                    verdictFrom(entry.at("severity")),
                    entry.at("summary").get<std::string>(),
                    entry.at("fix").get<std::string>(),
                    {},
                    entry.value("cause", std::string())};
    const auto& busIds = entry.at("gpus");
    for (const json& busId : busIds) {
      const int gpu = gpuByBusId(topology, busId.get<std::string>());
      if (gpu >= 0) finding.gpus.push_back(gpu);
    }
    // A finding about GPUs this process cannot see would otherwise turn platform-wide.
    if (!busIds.empty() && finding.gpus.empty()) continue;
    out.push_back(std::move(finding));
  }
  return out;
}

std::string firstLineOf(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return trimSpace(line);
}

std::string hostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown";
  return host;
}

}  // namespace

bool VerdictCacheKey::usable() const {
  return !bootId.empty() && !driverVersion.empty() && !srcBusId.empty() && !dstBusId.empty();
}

VerdictCacheKey makeVerdictCacheKey(const Topology& topology, int src, int dst, const std::string& bootId,
                                    const std::string& kernelCommandLine, const std::string& options) {
  // Only the GPUs name the pair: a topology of the ranks' cards may lack the link of a pair no process saw.
  const auto gpus = static_cast<int>(topology.gpus.size());
  if (src < 0 || dst < 0 || src >= gpus || dst >= gpus || src == dst) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("no GPU pair {} -> {} in the topology ({} GPUs)", src, dst, topology.gpus.size()));
  }
  const Gpu& a = topology.gpus[static_cast<std::size_t>(src)];
  const Gpu& b = topology.gpus[static_cast<std::size_t>(dst)];
  return VerdictCacheKey{bootId,
                         topology.driverVersion,
                         kernelCommandLine,
                         a.pciBusId,
                         b.pciBusId,
                         a.uuid,
                         b.uuid,
                         fmt::format("{} {}", kVersion, kGitCommit),
                         options};
}

std::string readBootId(const std::string& procRoot) {
  return firstLineOf(fs::path(procRoot) / "sys/kernel/random/boot_id");
}

std::string readKernelCommandLine(const std::string& procRoot) {
  return firstLineOf(fs::path(procRoot) / "cmdline");
}

std::string defaultVerdictCacheDirectory() {
  // The XDG base-directory convention: an OS location, not a peerlink setting, so not in the registry.
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && cache[0] == '/') return (fs::path(cache) / "peerlink").string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return (fs::path(home) / ".cache" / "peerlink").string();
  return {};
}

VerdictCache::VerdictCache(std::string directory) : directory_(std::move(directory)), host_(hostName()) {}

std::string VerdictCache::pathFor(const VerdictCacheKey& key) const {
  // Per pair and host, not per boot: a reboot overwrites the old entry instead of adding files, and homes
  // shared between nodes over NFS keep one entry per node.
  return (fs::path(directory_) /
          fmt::format("doctor-{}-{}-{}.json", sanitize(host_), sanitize(key.srcBusId), sanitize(key.dstBusId)))
      .string();
}

std::optional<CachedVerdict> VerdictCache::load(const VerdictCacheKey& key, const Topology& topology) const {
  return loadMatching(key, topology, true);
}

std::optional<CachedVerdict> VerdictCache::loadAnyOptions(const VerdictCacheKey& key, const Topology& topology) const {
  return loadMatching(key, topology, false);
}

std::optional<CachedVerdict> VerdictCache::loadMatching(const VerdictCacheKey& key, const Topology& topology,
                                                        bool matchOptions) const {
  if (directory_.empty() || !key.usable()) return std::nullopt;
  const std::string path = pathFor(key);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  // Another user's file could claim a broken pair is OK; only our own entries are trusted.
  if (!S_ISREG(info.st_mode) || info.st_uid != ::geteuid() ||
      static_cast<std::uintmax_t>(info.st_size) > kMaxEntryBytes) {
    logInfo(LogSubsys::Doctor, "verdict cache: ignoring {} (not a regular file of this user, or too large)", path);
    return std::nullopt;
  }
  try {
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const json document = json::parse(text);
    if (document.at("schema") != kSchema || document.at("version") != kSchemaVersion) return std::nullopt;
    json stored = document.at("key");
    json wanted = keyToJson(key);
    if (!matchOptions) {
      stored.erase("options");
      wanted.erase("options");
    }
    if (stored != wanted) return std::nullopt;
    CachedVerdict cached;
    PairVerdict& verdict = cached.decision.verdict;
    verdict.src = gpuByBusId(topology, key.srcBusId);
    verdict.dst = gpuByBusId(topology, key.dstBusId);
    if (verdict.src < 0 || verdict.dst < 0) return std::nullopt;
    verdict.verdict = verdictFrom(document.at("verdict"));
    verdict.reasons = document.at("reasons").get<std::vector<std::string>>();
    cached.decision.findings = findingsFromJson(document.at("findings"), topology);
    cached.decision.platform = findingsFromJson(document.at("platform"), topology);
    cached.storedAt = document.at("stored_at").get<std::int64_t>();
    logTrace(LogSubsys::Doctor, "verdict cache: {} -> {} {} from {}", key.srcBusId, key.dstBusId,
             verdictName(verdict.verdict), path);
    return cached;
  } catch (const std::exception& error) {
    logInfo(LogSubsys::Doctor, "verdict cache: ignoring unreadable entry {}: {}", path, error.what());
    return std::nullopt;
  }
}

bool VerdictCache::store(const VerdictCacheKey& key, const Topology& topology, const PairDecision& decision) const {
  if (directory_.empty() || !key.usable()) return false;
  static std::atomic<unsigned> sequence{0};
  const fs::path target(pathFor(key));
  const fs::path temporary =
      target.parent_path() / fmt::format(".{}.tmp.{}.{}", target.filename().string(), ::getpid(), sequence++);
  try {
    std::error_code error;
    if (fs::create_directories(directory_, error)) {
      fs::permissions(directory_, fs::perms::owner_all, fs::perm_options::replace, error);
    }
    const json document = {{"schema", kSchema},
                           {"version", kSchemaVersion},
                           {"key", keyToJson(key)},
                           {"stored_at", static_cast<std::int64_t>(std::time(nullptr))},
                           {"verdict", verdictName(decision.verdict.verdict)},
                           {"reasons", decision.verdict.reasons},
                           {"findings", findingsToJson(decision.findings, topology)},
                           {"platform", findingsToJson(decision.platform, topology)}};
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << jsonText(document) << '\n';
      out.flush();
      if (!out) throw std::runtime_error("cannot write " + temporary.string());
    }
    fs::rename(temporary, target);
    return true;
  } catch (const std::exception& error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    logInfo(LogSubsys::Doctor, "verdict cache: not stored in {}: {}", target.string(), error.what());
    return false;
  }
}

}  // namespace peerlink
