// The phases across nodes on MPI's staged path (docs/multinode.md, net/net_call.hpp): where MPI cannot read GPU
// memory (an MPI that is not CUDA-aware, no GPUDirect RDMA), the transport cuts a call into pieces of
// PEERLINK_NET_CHUNK_BYTES of every block, copies each piece from the GPU into pinned host memory, runs the piece's
// flat plan (ring where the collective has one, direct for all-to-all) over MPI's point-to-point messages, and copies
// the result back; the copies go one after another on one stream of the transport's, kPiecesInFlight pieces move
// their messages at once. Pure functions: a cost per piece, pipelined.
//
//   copy in, copy out  = copy launch + bytes / the GPU's PCIe link at the copies' efficiency (each, per piece)
//   MPI                = messages x latency + bytes sent x time per byte (per piece)
//   copies             = copy in + copy out (one rank makes both), else the longer of the two
//   period             = max(copies, MPI's bytes' time, MPI / pieces in flight)
//   time               = a call's fixed cost + copy in + MPI + copy out + (pieces - 1) x period
//
// The first piece goes through end to end; each further one adds the busiest stage's share: the one copy stream
// carries both copies of every piece, and the pieces in flight overlap their messages' latencies but share MPI's
// bandwidth. The reductions (on the GPU over PCIe, or on the host for a call of one piece) are not modelled apart:
// what they cost beyond the fixed cost shows as error (docs/plan.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "peerlink/collectives.hpp"

namespace peerlink::plan {

/// How the phases across nodes reach the GPUs' memory (`peerlink plan --net-path`).
enum class NetworkPath {
  GpuDirect,  ///< the NIC reads and writes GPU memory (GPUDirect RDMA, a CUDA-aware MPI): no copy through the host
  Staged,     ///< MPI moves pinned host memory: every piece copied from the GPU and back (net/net_call.hpp)
};

/// "gpudirect", "staged".
const char* networkPathName(NetworkPath path) noexcept;
/// The path named `name` (networkPathName's), or nullopt.
std::optional<NetworkPath> parseNetworkPath(const std::string& name);

/// MPI's point-to-point between nodes as one rank sees it while every rank sends at once.
struct MpiLink {
  double latencyUs = 0;  ///< one message's fixed time
  double usPerByte = 0;  ///< each byte a rank sends (1 / its share of the bandwidth)
};

/// What one rank does per piece of a call across nodes on the staged path, the busiest rank's.
struct StagedPieces {
  std::size_t pieces = 1;
  double copyInBytes = 0;   ///< per piece, the GPU to pinned memory (0: no copy, as a broadcast's other ranks)
  double copyOutBytes = 0;  ///< per piece, pinned memory to the GPU
  double messages = 0;      ///< per piece, one after another: the plan's steps on the critical path
  double sentBytes = 0;     ///< per piece, over all its messages
  /// Whether one rank makes both copies of a piece (on its one copy stream); false where the copy in and the copy
  /// out are different ranks' (a broadcast's root copies in, the others out).
  bool copiesOnOneRank = true;
};

/// The pieces of `collective` over `nodes` ranks (one per node, a rail) for a call of `bytes` bytes of each block
/// (the API's count: an all-reduce's buffer, an all-gather's send, a reduce-scatter's recv, an all-to-all's block to
/// each rank), cut into pieces of `chunkBytes` of every block as runCall cuts it. A call of 0 bytes has 0 pieces.
StagedPieces stagedPiecesOf(Collective collective, int nodes, double bytes, std::size_t chunkBytes);

/// The costs the staged path's time is made of.
struct StagedCosts {
  double copyLaunchUs = 0;   ///< a copy's fixed cost
  double copyGBps = 0;       ///< a copy's rate between the GPU and pinned memory, GB/s
  MpiLink mpi;               ///< MPI's messages
  double callUs = 0;         ///< a call's fixed cost across nodes (the transport's start, waits and end)
  std::size_t inFlight = 2;  ///< pieces whose messages move at once (net::kPiecesInFlight)
};

/// What sets a staged call's time.
enum class StagedBound {
  FixedCost,     ///< the call's fixed cost is more than the rest
  Copies,        ///< the copies between the GPU and pinned memory (the period's copies)
  MpiBandwidth,  ///< MPI's bytes
  MpiLatency,    ///< MPI's messages' latency
};

/// A staged call's time, and its parts.
struct StagedNetTime {
  double timeUs = 0;
  double copyInUs = 0;  ///< one piece's
  double copyOutUs = 0;
  double mpiUs = 0;     ///< one piece's messages
  double periodUs = 0;  ///< what each piece after the first adds
  StagedBound bound = StagedBound::FixedCost;
  std::string bottleneck;  ///< for people: "MPI's bandwidth (3.3 GB/s a rank) through pinned host memory, 64 pieces"
};

/// The time of `pieces` run with `costs` (the formula above). Pure.
StagedNetTime stagedNetTime(const StagedPieces& pieces, const StagedCosts& costs);

}  // namespace peerlink::plan
