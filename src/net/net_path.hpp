// Decisions of the transport between nodes, pure: whether MPI gets the caller's device pointers (direct) or
// pinned host copies (staged), where a staged piece's reductions run, and how the world's ranks form nodes.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "coll/plan.hpp"
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

/// Bytes of a reduction from which the GPU the data lives on reduces a call that is one staged piece
/// (PEERLINK_NET_REDUCE=AUTO); below, the host does. A call of several pieces reduces on the GPU whatever their size:
/// the GPU's reductions of one piece then overlap the messages of the next, and only its throughput counts. A call
/// of one piece has nothing to overlap: each reduction's launch and the polling of its event add to the call.
/// Measured on one H200 (bench/results/2026-11-29-h200x1-plan-kernel/, call u11, and 2026-11-29-h200x1-host-traffic/,
/// call v1: 2-4 processes as 2-4 nodes, GPU memory, pieces of 4 MiB; ratio MPI / peerlink, GPU vs host):
///   - one piece: the host wins with a ring's reductions of 1-1.3 MiB (a 4 MiB all-reduce on 3 nodes 0.67 vs
///     0.58, on 4 nodes 0.64 vs 0.49; every 1 MiB call); at 2 MiB (2 nodes) it went either way (all-reduce GPU
///     0.63, 0.54, 0.54 against host 0.56, 0.77, 0.57 in calls u11, v1, v2; reduce-scatter within 0.04), and stays
///     on the GPU;
///   - 2 pieces and more (8-64 MiB) with reductions of 1-2 MiB: the GPU wins on 2, 3 and 4 nodes (64 MiB
///     all-reduce 0.99 vs 0.71, 0.99 vs 0.81, 0.77 vs 0.61).
constexpr std::size_t kGpuReduceMinBytes = std::size_t{2} << 20;

/// The bytes of the largest reduction in `plan`, any rank's (so that every rank chooses alike); 0 where it has none.
std::size_t largestReductionBytes(const coll::Plan& plan);

/// Whether the staged pieces of a call of `pieces` pieces, the first running `plan`, reduce on the host rather than
/// on the GPU the data lives on: they have reductions, the call is one piece, and its largest reduction is below
/// `gpuMinBytes` (kGpuReduceMinBytes). Every rank decides alike (the same call, the same plan). A piece without
/// reductions stays with the GPU's memory (its copies, if any, queue there as before).
bool reducesOnHost(const coll::Plan& plan, std::size_t pieces, std::size_t gpuMinBytes);

/// The nodes of a world from its ranks' host ids (PEERLINK_HOSTID or hostname and boot id): node-major, every
/// node with the same number of ranks. Error(InvalidUsage) naming the ranks and hosts otherwise ("host b has 3
/// ranks, host a 2", "rank 2 (host a) comes after ranks of host b: start ranks grouped by node").
coll::NodeGrid nodeGridOf(const std::vector<PeerIdentity>& peers);

}  // namespace peerlink::net
