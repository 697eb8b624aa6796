// Decisions of the transport between nodes, pure: whether MPI gets the caller's device pointers (direct) or
// pinned host copies (staged), and how the world's ranks form nodes.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "net/net_call.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::net {

/// What the path depends on.
struct PathFacts {
  bool callerMemoryIsHost = false;  ///< the calls' buffers are host memory (MPI reads them whatever it is)
  int mpiCudaSupport = -1;          ///< MPIX_Query_cuda_support(): 1, 0, or -1 where the MPI cannot say
  int startupCheck = -1;            ///< a device buffer sent to this rank itself arrived intact: 1, 0, -1 not run
  std::string setting = "AUTO";     ///< PEERLINK_NET_CUDA_AWARE: AUTO, OFF, ON
  std::string mpiName;              ///< "Open MPI v4.1.6", for reasons
};

struct PathChoice {
  NetPath path = NetPath::Staged;
  std::string reason;  ///< one line, for the INIT log
};

/// Direct for host memory; for device memory only when the MPI says it is CUDA-aware and the start-up check
/// passed (a non-CUDA-aware MPI crashes on a device pointer), unless PEERLINK_NET_CUDA_AWARE=OFF. ON where the MPI
/// is not CUDA-aware is Error(InvalidUsage) naming the MPI and the check.
PathChoice choosePath(const PathFacts& facts);

/// Whether the start-up check is worth running: device memory, a CUDA-aware MPI, and not OFF.
bool wantsStartupCheck(const PathFacts& facts);

/// The start-up check: `bytes` bytes of a pattern written into `source` (caller's memory, through `device`) are
/// sent by MPI from `source` to this rank itself into `target`, and read back. True when they arrived intact.
bool checkDirectPath(PointToPoint& p2p, DeviceAccess& device, void* source, void* target, std::size_t bytes,
                     std::chrono::milliseconds timeout);

/// The nodes of a world from its ranks' host ids (PEERLINK_HOSTID or hostname and boot id): node-major, every
/// node with the same number of ranks. Error(InvalidUsage) naming the ranks and hosts otherwise ("host b has 3
/// ranks, host a 2", "rank 2 (host a) comes after ranks of host b: start ranks grouped by node").
coll::NodeGrid nodeGridOf(const std::vector<PeerIdentity>& peers);

}  // namespace peerlink::net
