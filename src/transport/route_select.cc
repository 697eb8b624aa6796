// Route selection (include/peerlink/route.hpp; the rules in order: docs/routes.md). Each step is a small
// function that returns its choice and appends why to `reasons`; the route's reason is their join.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/byte_size.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"
#include "peerlink/route.hpp"

namespace peerlink {
namespace {

using Reasons = std::vector<std::string>;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
// Pipelined routes (RELAY, STAGED) cut a transfer into about kChunksPerTransfer chunks: overlapping the two
// hops needs at least two chunks in flight, and with eight the pipeline's fill and drain cost about 1/8 of the
// transfer. Below kMinChunk the per-chunk cost (a copy launch and an event, several µs) rivals the chunk's own
// time on PCIe (256 KiB at ~25 GB/s is ~10 µs); above kMaxChunk the fill time grows with nothing gained, and so
// does the staging memory (slots x chunk per pipeline).
constexpr std::size_t kChunksPerTransfer = 8;
constexpr std::size_t kMinChunk = 256 * kKiB;
constexpr std::size_t kMaxChunk = 8 * kMiB;
constexpr std::size_t kChunkAlign = 64 * kKiB;

// One P2P hop of a route: `src` stores into (write) or `dst` loads from (read) the other's memory.
struct Hop {
  int src;
  int dst;
};

struct ModeChoice {
  RouteMode mode = RouteMode::Staged;
  int relayGpu = -1;
};

struct EngineChoice {
  Engine engine = Engine::CopyEngine;
  bool putWithSignal = false;
};

std::string joinReasons(const Reasons& reasons) {
  std::string joined;
  for (const std::string& reason : reasons) {
    if (reason.empty()) continue;
    if (!joined.empty()) joined += "; ";
    joined += reason;
  }
  return joined;
}

const Gpu& gpuAt(const Topology& topology, int index) {
  return topology.gpus[static_cast<std::size_t>(index)];
}

int gpuCount(const Topology& topology) {
  return static_cast<int>(topology.gpus.size());
}

// ---- rule 1: the request -------------------------------------------------------------------------------

void validateRequest(const Topology& topology, const RouteRequest& request) {
  const int n = gpuCount(topology);
  const auto inside = [n](int gpu) { return gpu >= 0 && gpu < n; };
  if (!inside(request.src) || !inside(request.dst)) {
    const std::string known = n == 0 ? "the topology has no GPUs" : fmt::format("the topology has GPUs 0..{}", n - 1);
    throw Error(ErrorCode::InvalidUsage, fmt::format("route GPU {} -> GPU {}: {}", request.src, request.dst, known));
  }
  if (request.src == request.dst) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("route GPU {} -> GPU {}: source and destination are the same GPU",
                                                     request.src, request.dst));
  }
}

// ---- rule 2: whether P2P may be used ------------------------------------------------------------------

struct P2pLevel {
  PathClass farthest = PathClass::PHB;
  std::string setting;  // "PEERLINK_P2P_LEVEL=AUTO (PHB)"
};

P2pLevel p2pLevel(const Params& params) {
  const std::string& value = params.getString("PEERLINK_P2P_LEVEL");
  if (value == "AUTO") return {PathClass::PHB, "PEERLINK_P2P_LEVEL=AUTO (PHB)"};
  const std::optional<PathClass> parsed = parsePathClass(value);
  if (!parsed) throw Error(ErrorCode::Internal, fmt::format("PEERLINK_P2P_LEVEL={} is not a path class", value));
  return {*parsed, "PEERLINK_P2P_LEVEL=" + value};
}

// A write from `src` needs src to map dst's memory; a read by `dst` needs dst to map src's.
bool directionWorks(const Topology& topology, Direction direction, const Hop& hop) {
  return direction == Direction::Write ? topology.pair(hop.src, hop.dst).canAccessPeer
                                       : topology.pair(hop.dst, hop.src).canAccessPeer;
}

bool directionWorksForAll(const Topology& topology, Direction direction, const std::vector<Hop>& hops) {
  return std::all_of(hops.begin(), hops.end(),
                     [&](const Hop& hop) { return directionWorks(topology, direction, hop); });
}

Direction otherDirection(Direction direction) {
  return direction == Direction::Write ? Direction::Read : Direction::Write;
}

// ---- rule 3: relay -------------------------------------------------------------------------------------

// Why GPU `k` cannot relay src -> dst; empty when it can.
std::string relayProblem(const Topology& topology, const Params& params, int src, int k, int dst) {
  std::string why;
  if (!p2pUsable(topology, params, src, k, &why)) return fmt::format("GPU {} -> GPU {}: {}", src, k, why);
  if (!p2pUsable(topology, params, k, dst, &why)) return fmt::format("GPU {} -> GPU {}: {}", k, dst, why);
  const std::vector<Hop> hops = {{src, k}, {k, dst}};
  if (!directionWorksForAll(topology, Direction::Write, hops) &&
      !directionWorksForAll(topology, Direction::Read, hops)) {
    return "its two hops have no direction (write or read) in common";
  }
  return {};
}

double relayGBps(const Topology& topology, int src, int k, int dst) {
  return std::min(topology.pair(src, k).expectedGBps, topology.pair(k, dst).expectedGBps);
}

// The GPU to relay through, or -1 when none qualifies. Throws when PEERLINK_RELAY_GPU names one that cannot.
int chooseRelayGpu(const Topology& topology, const Params& params, int src, int dst, Reasons& reasons) {
  const auto forced = params.getInt("PEERLINK_RELAY_GPU");
  if (forced >= 0) {
    const auto fail = [&](const std::string& why) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("PEERLINK_RELAY_GPU={}: {}", forced, why));
    };
    if (forced >= gpuCount(topology)) {
      fail(fmt::format("no GPU {} (the topology has GPUs 0..{})", forced, gpuCount(topology) - 1));
    }
    const int k = static_cast<int>(forced);
    if (k == src || k == dst) fail(fmt::format("GPU {} is an end of GPU {} -> GPU {}, not between them", k, src, dst));
    const std::string problem = relayProblem(topology, params, src, k, dst);
    if (!problem.empty()) fail(fmt::format("GPU {} cannot relay GPU {} -> GPU {} ({})", k, src, dst, problem));
    reasons.push_back(fmt::format("through GPU {} (PEERLINK_RELAY_GPU)", k));
    return k;
  }
  int best = -1;
  double bestGBps = -1;
  for (int k = 0; k < gpuCount(topology); ++k) {
    if (k == src || k == dst || !relayProblem(topology, params, src, k, dst).empty()) continue;
    const double gbps = relayGBps(topology, src, k, dst);
    if (gbps > bestGBps) {
      best = k;
      bestGBps = gbps;
    }
  }
  if (best < 0) return -1;
  reasons.push_back(bestGBps > 0 ? fmt::format("GPU {} reaches both ({:.0f} GB/s per hop)", best, bestGBps)
                                 : fmt::format("GPU {} reaches both", best));
  return best;
}

std::string whyNoRelay(const Topology& topology) {
  return gpuCount(topology) < 3 ? "no third GPU to relay through" : "no other GPU has usable P2P with both";
}

// ---- rule 3: the mode ----------------------------------------------------------------------------------

// Empty when both GPUs can export and import cuMem allocations as POSIX fds, else which one cannot.
std::string cumemProblem(const Topology& topology, int src, int dst) {
  for (int gpu : {src, dst}) {
    const MemoryHandles& handles = gpuAt(topology, gpu).handles;
    if (!handles.vmm || !handles.posixFd) {
      return fmt::format("GPU {} has no cuMem POSIX-fd handles (vmm {}, posix_fd {})", gpu, handles.vmm ? 1 : 0,
                         handles.posixFd ? 1 : 0);
    }
  }
  return {};
}

ModeChoice forcedMode(const Topology& topology, const Params& params, const RouteRequest& request,
                      const std::string& forced, Reasons& reasons) {
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("PEERLINK_P2P_MODE={}: GPU {} -> GPU {} {}", forced, request.src, request.dst, why));
  };
  const std::string setting = "PEERLINK_P2P_MODE=" + forced;
  if (forced == "staged") {
    reasons.push_back(setting);
    return {RouteMode::Staged, -1};
  }
  const bool crossProcess = request.boundary == ProcessBoundary::CrossProcess;
  if (forced == "relay") {
    if (crossProcess) fail("crosses processes (relay across processes is not supported yet)");
    Reasons relayReasons;
    const int k = chooseRelayGpu(topology, params, request.src, request.dst, relayReasons);
    if (k < 0) fail("cannot relay (" + whyNoRelay(topology) + ")");
    reasons.push_back(setting);
    reasons.insert(reasons.end(), relayReasons.begin(), relayReasons.end());
    return {RouteMode::Relay, k};
  }
  std::string why;
  if (!p2pUsable(topology, params, request.src, request.dst, &why)) fail("has no usable P2P (" + why + ")");
  if (forced == "direct") {
    if (crossProcess) fail("crosses processes (DIRECT needs both buffers in one process)");
    reasons.push_back(setting);
    return {RouteMode::Direct, -1};
  }
  const std::string inOneProcess = crossProcess ? "" : " in one process (the transport opens its own handles)";
  if (forced == "cumem") {
    const std::string problem = cumemProblem(topology, request.src, request.dst);
    if (!problem.empty()) fail("cannot use CUMEM (" + problem + ")");
    reasons.push_back(setting + inOneProcess);
    return {RouteMode::Cumem, -1};
  }
  if (forced == "ipc") {
    reasons.push_back(setting + inOneProcess);
    return {RouteMode::Ipc, -1};
  }
  throw Error(ErrorCode::Internal, "unhandled " + setting);
}

ModeChoice crossProcessP2pMode(const Topology& topology, const Params& params, const RouteRequest& request,
                               Reasons& reasons) {
  if (!params.getBool("PEERLINK_CUMEM")) {
    reasons.push_back("legacy IPC handles (PEERLINK_CUMEM=0)");
    return {RouteMode::Ipc, -1};
  }
  const std::string problem = cumemProblem(topology, request.src, request.dst);
  if (!problem.empty()) {
    reasons.push_back("legacy IPC handles: " + problem);
    return {RouteMode::Ipc, -1};
  }
  reasons.push_back("cuMem handles shared as POSIX fds");
  return {RouteMode::Cumem, -1};
}

ModeChoice autoMode(const Topology& topology, const Params& params, const RouteRequest& request, Reasons& reasons) {
  const bool crossProcess = request.boundary == ProcessBoundary::CrossProcess;
  std::string why;
  if (p2pUsable(topology, params, request.src, request.dst, &why)) {
    if (crossProcess) return crossProcessP2pMode(topology, params, request, reasons);
    reasons.push_back("peer access in one process");
    return {RouteMode::Direct, -1};
  }
  reasons.push_back("no usable P2P: " + why);
  if (!params.getBool("PEERLINK_RELAY")) {
    reasons.push_back("relay off (PEERLINK_RELAY=0)");
    return {RouteMode::Staged, -1};
  }
  if (crossProcess) {
    reasons.push_back("relay across processes is not supported yet");
    return {RouteMode::Staged, -1};
  }
  const int k = chooseRelayGpu(topology, params, request.src, request.dst, reasons);
  if (k >= 0) return {RouteMode::Relay, k};
  reasons.push_back(whyNoRelay(topology));
  return {RouteMode::Staged, -1};
}

ModeChoice chooseMode(const Topology& topology, const Params& params, const RouteRequest& request, Reasons& reasons) {
  const std::string& forced = params.getString("PEERLINK_P2P_MODE");
  if (forced != "auto") return forcedMode(topology, params, request, forced, reasons);
  return autoMode(topology, params, request, reasons);
}

std::vector<Hop> hopsOf(const RouteRequest& request, const ModeChoice& mode) {
  switch (mode.mode) {
    case RouteMode::Staged: return {};
    case RouteMode::Relay: return {{request.src, mode.relayGpu}, {mode.relayGpu, request.dst}};
    default: return {{request.src, request.dst}};
  }
}

// ---- rule 4: the engine --------------------------------------------------------------------------------

// Whether a transfer is small enough for put-with-signal (PEERLINK_PUT_SIGNAL_MAX_BYTES=0 switches it off).
bool smallMessage(const Params& params, std::size_t bytes) {
  const auto maxBytes = params.getInt("PEERLINK_PUT_SIGNAL_MAX_BYTES");
  return maxBytes > 0 && bytes <= static_cast<std::size_t>(maxBytes);
}

// Whether a small DIRECT transfer goes by put-with-signal: the source's kernel stores data then flag, so the
// source must map the destination, and a forced read rules it out. Otherwise a plain SM copy kernel moves it.
bool putWithSignal(const Topology& topology, const Params& params, const RouteRequest& request, Reasons& reasons) {
  std::string problem;
  if (params.getString("PEERLINK_P2P_READ") == "1") {
    problem = "PEERLINK_P2P_READ=1 and put-with-signal writes";
  } else if (!directionWorks(topology, Direction::Write, {request.src, request.dst})) {
    problem = fmt::format("GPU {} cannot map GPU {} to write", request.src, request.dst);
  }
  reasons.push_back(problem.empty() ? "put-with-signal for small messages"
                                    : "SM copy kernel for small messages (no put-with-signal: " + problem + ")");
  return problem.empty();
}

std::string whyCopyEngine(const Params& params, std::size_t bytes) {
  const auto maxBytes = params.getInt("PEERLINK_PUT_SIGNAL_MAX_BYTES");
  if (maxBytes == 0) return "copy engine (put-with-signal off: PEERLINK_PUT_SIGNAL_MAX_BYTES=0)";
  if (!smallMessage(params, bytes)) {
    return fmt::format("copy engine above {}", formatByteSize(static_cast<std::size_t>(maxBytes)));
  }
  return "copy engine (put-with-signal is for DIRECT only)";
}

// A relay GPU that can map both ends runs one copy kernel that reads the source and writes the
// destination: the bytes pass through its SMs once, with no staging buffer and no pipeline to fill (measured
// on H200 NVLink: the staged copy-engine relay peaked at 0.84x one direct hop, at 16 MiB chunks).
// Over NVLink only: kernel reads across PCIe are slow, where the copy engines' posted writes are not.
bool relayPassesThrough(const Topology& topology, const RouteRequest& request, int relay) {
  const GpuPair& in = topology.pair(relay, request.src);
  const GpuPair& out = topology.pair(relay, request.dst);
  return in.canAccessPeer && out.canAccessPeer && in.path == PathClass::NVL && out.path == PathClass::NVL;
}

// The pass-through relay GPUs to split a transfer across: the chosen one, then every other that could relay
// the pair itself (unless PEERLINK_RELAY_GPU picked one). Each relay GPU's SMs bound its kernel (one peer
// read and one peer write per byte: 0.83x a direct hop on H200), so several relays together approach
// what the two ends' links carry (two: 0.91-0.94x from 64 MiB on 4x H200).
std::vector<int> relayStripes(const Topology& topology, const Params& params, const RouteRequest& request, int relay,
                              Reasons& reasons) {
  std::vector<int> stripes = {relay};
  if (params.getInt("PEERLINK_RELAY_GPU") < 0) {
    for (int k = 0; k < gpuCount(topology); ++k) {
      if (k == relay || k == request.src || k == request.dst) continue;
      if (!relayProblem(topology, params, request.src, k, request.dst).empty()) continue;
      if (relayPassesThrough(topology, request, k)) stripes.push_back(k);
    }
  }
  if (stripes.size() > 1) {
    reasons.push_back(fmt::format("split across GPUs {}", fmt::join(stripes, ", ")));
  }
  return stripes;
}

EngineChoice chooseEngine(const Topology& topology, const Params& params, const RouteRequest& request,
                          const ModeChoice& choice, Reasons& reasons) {
  const RouteMode mode = choice.mode;
  const std::string& forced = params.getString("PEERLINK_P2P_ENGINE");
  if (mode == RouteMode::Staged) {
    if (forced == "sm") reasons.push_back("PEERLINK_P2P_ENGINE=sm does not apply to host memory copies");
    return {Engine::CopyEngine, false};
  }
  const bool smallDirect = mode == RouteMode::Direct && smallMessage(params, request.bytes);
  if (forced == "ce") {
    reasons.push_back("PEERLINK_P2P_ENGINE=ce");
    return {Engine::CopyEngine, false};
  }
  if (mode == RouteMode::Relay) {
    if (relayPassesThrough(topology, request, choice.relayGpu)) {
      if (forced == "sm") reasons.push_back("PEERLINK_P2P_ENGINE=sm");
      reasons.push_back(
          fmt::format("a kernel on GPU {} reads the source and writes the destination (no staging)", choice.relayGpu));
      return {Engine::Sm, false};
    }
    reasons.push_back(fmt::format("copy engine for relay hops{}",
                                  forced == "sm"
                                      ? fmt::format(" (PEERLINK_P2P_ENGINE=sm, but GPU {} cannot map both "
                                                    "ends over NVLink)",
                                                    choice.relayGpu)
                                      : fmt::format(": GPU {} cannot map both ends over NVLink", choice.relayGpu)));
    return {Engine::CopyEngine, false};
  }
  if (forced == "sm") {
    reasons.push_back("PEERLINK_P2P_ENGINE=sm");
    return {Engine::Sm, smallDirect && putWithSignal(topology, params, request, reasons)};
  }
  if (smallDirect) {
    reasons.push_back("small message: a kernel stores it without a copy-engine launch");
    return {Engine::Sm, putWithSignal(topology, params, request, reasons)};
  }
  reasons.push_back(whyCopyEngine(params, request.bytes));
  return {Engine::CopyEngine, false};
}

// ---- rule 5: the direction -----------------------------------------------------------------------------

// The direction wanted before checking peer access, and why.
std::pair<Direction, std::string> preferredDirection(const Topology& topology, const Params& params,
                                                     const std::vector<Hop>& hops, Engine engine) {
  const std::string& forced = params.getString("PEERLINK_P2P_READ");
  if (forced == "1") return {Direction::Read, "PEERLINK_P2P_READ=1"};
  if (forced == "0") return {Direction::Write, "PEERLINK_P2P_READ=0"};
  bool allNvlink = true;
  int minCcMajor = 1 << 30;
  int maxCcMajor = 0;
  for (const Hop& hop : hops) {
    allNvlink = allNvlink && topology.pair(hop.src, hop.dst).path == PathClass::NVL;
    for (int gpu : {hop.src, hop.dst}) {
      minCcMajor = std::min(minCcMajor, gpuAt(topology, gpu).ccMajor);
      maxCcMajor = std::max(maxCcMajor, gpuAt(topology, gpu).ccMajor);
    }
  }
  if (!allNvlink) return {Direction::Write, "posted writes cross PCIe better than reads"};
  if (minCcMajor < 8) return {Direction::Write, "write on NVLink before compute capability 8.0"};
  // Measured on 4x H200 NVLink (bench/results/2026-11-22-h200x4-round2): the copy engine pushes at 393.5 GB/s
  // and pulls at 388.8; peerlink's copy kernel pulls at 371.6 and pushes at 369.0.
  const bool hopper = minCcMajor == 9 && maxCcMajor == 9;
  if (engine == Engine::CopyEngine) {
    return {Direction::Write,
            hopper ? "copy engine writes: faster than reads on Hopper NVLink" : "copy engine writes on NVLink"};
  }
  return {Direction::Read, hopper ? "read preferred on Hopper NVLink" : "read preferred on NVLink"};
}

// Names the missing mapping of the first hop that `direction` cannot use.
std::string missingMapping(const Topology& topology, Direction direction, const std::vector<Hop>& hops) {
  for (const Hop& hop : hops) {
    if (directionWorks(topology, direction, hop)) continue;
    const bool write = direction == Direction::Write;
    return fmt::format("GPU {} cannot map GPU {}", write ? hop.src : hop.dst, write ? hop.dst : hop.src);
  }
  return {};
}

Direction chooseDirection(const Topology& topology, const Params& params, const std::vector<Hop>& hops,
                          const EngineChoice& engine, Reasons& reasons) {
  if (hops.empty()) {
    const std::string& forced = params.getString("PEERLINK_P2P_READ");
    if (forced != "auto") reasons.push_back("PEERLINK_P2P_READ=" + forced + " does not apply to host memory copies");
    return Direction::Write;
  }
  if (engine.putWithSignal) return Direction::Write;
  const auto [wanted, why] = preferredDirection(topology, params, hops, engine.engine);
  if (directionWorksForAll(topology, wanted, hops)) {
    reasons.push_back(why);
    return wanted;
  }
  const Direction other = otherDirection(wanted);
  if (!directionWorksForAll(topology, other, hops)) {
    throw Error(ErrorCode::Internal, "route chosen over hops with no common direction");
  }
  reasons.push_back(
      fmt::format("{}, but {}: {} instead", why, missingMapping(topology, wanted, hops), directionName(other)));
  return other;
}

// ---- rule 6: the chunk ---------------------------------------------------------------------------------

std::size_t chooseChunkBytes(const Params& params, RouteMode mode, std::size_t bytes, Reasons& reasons) {
  if (mode != RouteMode::Relay && mode != RouteMode::Staged) return 0;
  const auto forced = params.getInt("PEERLINK_CHUNK_BYTES");
  if (forced > 0) {
    const auto chunk = static_cast<std::size_t>(forced);
    reasons.push_back(fmt::format("{} chunks (PEERLINK_CHUNK_BYTES)", formatByteSize(chunk)));
    return chunk;
  }
  std::size_t chunk = std::clamp(bytes / kChunksPerTransfer, kMinChunk, kMaxChunk);
  chunk = (chunk + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  reasons.push_back(fmt::format("{} chunks", formatByteSize(chunk)));
  return chunk;
}

}  // namespace

bool p2pUsable(const Topology& topology, const Params& params, int src, int dst, std::string* whyNot) {
  const auto fail = [whyNot](std::string why) {
    if (whyNot != nullptr) *whyNot = std::move(why);
    return false;
  };
  const GpuPair& pair = topology.pair(src, dst);
  if (params.getBool("PEERLINK_P2P_DISABLE")) return fail("PEERLINK_P2P_DISABLE=1");
  const P2pLevel level = p2pLevel(params);
  if (level.farthest == PathClass::LOC) return fail("PEERLINK_P2P_LEVEL=LOC never uses P2P");
  if (pair.path > level.farthest) {
    return fail(fmt::format("path {} is farther than {}", pathClassName(pair.path), level.setting));
  }
  if (!directionWorks(topology, Direction::Write, {src, dst}) &&
      !directionWorks(topology, Direction::Read, {src, dst})) {
    return fail("no peer access reported by the driver");
  }
  if (!pair.p2pDenied.empty()) return fail(pair.p2pDenied);
  if (whyNot != nullptr) whyNot->clear();
  return true;
}

Route selectRoute(const Topology& topology, const Params& params, const RouteRequest& request) {
  validateRequest(topology, request);
  Reasons reasons;
  Route route;
  const ModeChoice mode = chooseMode(topology, params, request, reasons);
  route.mode = mode.mode;
  route.relayGpu = mode.relayGpu;
  route.modeReason = joinReasons(reasons);
  const EngineChoice engine = chooseEngine(topology, params, request, mode, reasons);
  route.engine = engine.engine;
  route.putWithSignal = engine.putWithSignal;
  if (mode.mode == RouteMode::Relay && engine.engine == Engine::Sm) {
    route.direction = Direction::Read;  // the relay GPU pulls from the source (and pushes to the destination)
    route.relayStripes = relayStripes(topology, params, request, mode.relayGpu, reasons);
  } else {
    route.direction = chooseDirection(topology, params, hopsOf(request, mode), engine, reasons);
    route.chunkBytes = chooseChunkBytes(params, mode.mode, request.bytes, reasons);
  }
  route.reason = joinReasons(reasons);
  return route;
}

}  // namespace peerlink
