// Names of route parts and the one-line description of a connection (include/peerlink/route.hpp).
#include <string>

#include <fmt/format.h>

#include "peerlink/route.hpp"

namespace peerlink {
namespace {

// The index nvidia-smi shows, or the CUDA ordinal where NVML did not say.
int smiIndex(const Topology& topology, int gpu) {
  if (gpu < 0 || gpu >= static_cast<int>(topology.gpus.size())) return gpu;
  const int nvml = topology.gpus[static_cast<std::size_t>(gpu)].nvmlIndex;
  return nvml >= 0 ? nvml : gpu;
}

// The pair as a cell of `nvidia-smi topo -m`: "NV18" for bonded NVLinks, else the path class.
std::string routeLabel(const Route& route) {
  switch (route.mode) {
    case RouteMode::Direct: return "P2P/DIRECT";
    case RouteMode::Ipc: return "P2P/IPC";
    case RouteMode::Cumem: return "P2P/CUMEM";
    case RouteMode::Relay: return fmt::format("RELAY/GPU{}", route.relayGpu);
    case RouteMode::Staged: return "SHM/STAGED";
  }
  return "?";
}

}  // namespace

const char* routeModeName(RouteMode mode) noexcept {
  switch (mode) {
    case RouteMode::Direct: return "DIRECT";
    case RouteMode::Ipc: return "IPC";
    case RouteMode::Cumem: return "CUMEM";
    case RouteMode::Relay: return "RELAY";
    case RouteMode::Staged: return "STAGED";
  }
  return "?";
}

const char* engineName(Engine engine) noexcept {
  switch (engine) {
    case Engine::CopyEngine: return "CE";
    case Engine::Sm: return "SM";
  }
  return "?";
}

const char* directionName(Direction direction) noexcept {
  switch (direction) {
    case Direction::Write: return "write";
    case Direction::Read: return "read";
  }
  return "?";
}

std::string describeRoute(const Topology& topology, const RouteRequest& request, const Route& route) {
  const std::string link = linkLabel(topology.pair(request.src, request.dst));
  const std::string why = route.reason.empty() ? link : link + "; " + route.reason;
  return fmt::format("{}[{}] -> {}[{}] via {}/{}/{} ({})", request.src, smiIndex(topology, request.src), request.dst,
                     smiIndex(topology, request.dst), routeLabel(route), engineName(route.engine),
                     directionName(route.direction), why);
}

}  // namespace peerlink
