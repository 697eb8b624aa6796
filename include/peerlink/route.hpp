// Routes between two GPUs and how one is chosen: a pure function of the topology, the parameters and
// where the two buffers live. Nothing here touches a GPU, so every choice is tested from fixtures.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "peerlink/topology.hpp"

namespace peerlink {

class Params;

/// How bytes travel from GPU a to GPU b.
enum class RouteMode {
  Direct,  ///< same process, peer access enabled, one hop
  Ipc,     ///< other process, legacy cudaIpc memory handle
  Cumem,   ///< other process, cuMemCreate allocation exported as a POSIX fd over a Unix socket
  Relay,   ///< no usable P2P between a and b: two pipelined hops through a staging buffer on GPU k
  Staged,  ///< through pinned host memory, chunked, device-to-host and host-to-device overlapped
};

/// What moves the bytes.
enum class Engine {
  CopyEngine,  ///< the DMA copy engines (cudaMemcpy*Async)
  Sm,          ///< peerlink's copy kernel (or put-with-signal for small transfers)
};

/// Which side drives a P2P transfer.
enum class Direction {
  Write,  ///< the source GPU pushes into the destination's memory
  Read,   ///< the destination GPU pulls from the source's memory
};

/// Whether the two buffers belong to one process or to two.
enum class ProcessBoundary { SameProcess, CrossProcess };

const char* routeModeName(RouteMode mode) noexcept;       ///< "DIRECT", "IPC", "CUMEM", "RELAY", "STAGED"
const char* engineName(Engine engine) noexcept;           ///< "CE", "SM"
const char* directionName(Direction direction) noexcept;  ///< "write", "read"

/// A transfer to route.
struct RouteRequest {
  int src = -1;  ///< CUDA ordinal of the GPU holding the source buffer
  int dst = -1;  ///< CUDA ordinal of the GPU holding the destination buffer
  std::size_t bytes = 0;
  ProcessBoundary boundary = ProcessBoundary::SameProcess;
};

/// The chosen route and why.
struct Route {
  RouteMode mode = RouteMode::Staged;
  Engine engine = Engine::CopyEngine;
  Direction direction = Direction::Write;
  bool putWithSignal = false;  ///< small transfer: a kernel stores data then a flag (Engine::Sm)
  int relayGpu = -1;           ///< RELAY only: the intermediate GPU
  /// RELAY by SM only: every GPU the transfer is split across (relayGpu first), each running a kernel that
  /// reads its share of the source and writes it to the destination; empty or one entry: relayGpu alone.
  std::vector<int> relayStripes;
  std::size_t chunkBytes = 0;  ///< RELAY/STAGED: pipeline chunk; 0 for one-shot routes
  std::string reason;          ///< why: each decision's reason joined by "; " (describeRoute adds the link)
  std::string modeReason;      ///< why this mode alone: the first parts of `reason`, before the engine's
};

/// Whether P2P from `src` to `dst` may be used under the parameters (PEERLINK_P2P_DISABLE off, path class
/// within PEERLINK_P2P_LEVEL, peer access reported by the driver in at least one direction: src mapping dst
/// for a write, dst mapping src for a read; the route's direction picks one that works; the pair not denied
/// by GpuPair::p2pDenied), and if not, why not (in `whyNot`, cleared when usable). Throws
/// Error(InvalidUsage) for a pair not in the topology.
bool p2pUsable(const Topology& topology, const Params& params, int src, int dst, std::string* whyNot);

/// Chooses the route for `request`. Throws Error(InvalidUsage) for GPUs outside the topology or src == dst,
/// and when PEERLINK_P2P_MODE forces a mode the pair cannot use (naming the mode, the pair and why).
Route selectRoute(const Topology& topology, const Params& params, const RouteRequest& request);

/// The connection line logged under PEERLINK_DEBUG_SUBSYS=P2P, e.g.
/// "0[0] -> 1[1] via P2P/CUMEM/SM/read (NV18; read preferred on Hopper NVLink)": each GPU as
/// cudaOrdinal[nvidia-smi index], then the route and its reason.
std::string describeRoute(const Topology& topology, const RouteRequest& request, const Route& route);

}  // namespace peerlink
