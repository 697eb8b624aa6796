// The decisions of a communicator whose ranks live on several hosts (node_world.hpp carries them out), pure and
// tested on CPU: whether a world spans hosts and how its ranks form nodes, how communicator ranks map to MPI ranks,
// which of a hierarchical plan's group calls a rank makes and with which pointers, and how a rank's send/recv group
// splits into the pairs in its node and the pairs across nodes. docs/multinode.md is the users' guide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "net/net_path.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// The nodes of a world from its ranks' host ids (the bootstrap's identities: hostname and boot id, or
/// PEERLINK_HOSTID): nullopt when every rank is on one host (the communicator is a single-host one, unchanged);
/// otherwise N nodes x G ranks, node-major. Error(InvalidUsage) naming the hosts for nodes of different sizes or
/// ranks not grouped by node (net::nodeGridOf).
std::optional<NodeGrid> multiNodeGrid(const std::vector<PeerIdentity>& peers);

/// A communicator across nodes drives one rank per process (the transport between nodes is one MPI rank per
/// process). Error(Unsupported) naming the ranks otherwise.
void checkOneRankPerProcess(const std::vector<int>& localRanks, const NodeGrid& grid);

/// What a rank tells the others before the transport is made (fixed size: one bootstrap all-gather).
struct MpiPlace {
  std::int32_t mpiRank = -1;  ///< its rank in MPI_COMM_WORLD, -1 where MPI could not be used
  std::int32_t mpiSize = 0;
  char problem[2048] = {};  ///< why MPI could not be used here (not loaded, not initialized, ...), or empty
};
/// `problem` set from text (cut to fit).
MpiPlace mpiPlaceOf(int mpiRank, int mpiSize, const std::string& problem);

/// Communicator rank r must be MPI_COMM_WORLD's rank r, in a world of the same size (the transport's messages name
/// MPI ranks). The first rank that cannot use MPI, or is out of place, as one line naming it by its identity in
/// `peers` (the bootstrap's); empty when every rank fits.
std::string mpiPlacementProblem(const std::vector<MpiPlace>& places, const std::vector<PeerIdentity>& peers);

/// The first rank of `places` that cannot use MPI (its problem set), as one line naming it; empty when none
/// (mpiPlacementProblem's first check).
std::string mpiUsabilityProblem(const std::vector<MpiPlace>& places, const std::vector<PeerIdentity>& peers);

/// The path between nodes for the communicator's calls (device memory) from choosePath's: staged as it is. Direct
/// (a CUDA-aware MPI) would need the transport's copies and reductions on GPU memory, which the communicator does not
/// supply yet: staged instead, saying so, or Error(Unsupported) where PEERLINK_NET_CUDA_AWARE=ON (`setting`) asks
/// for direct.
net::PathChoice communicatorNetPath(const net::PathChoice& choice, const std::string& setting);

/// In place as the API defines it for this rank's call (communicator.hpp): all-reduce, broadcast, reduce send ==
/// recv; all-gather send == recv + rank * count; reduce-scatter recv == send + rank * count; never for all-to-all.
bool callInPlace(Collective collective, int rank, const void* send, const void* recv, std::size_t count,
                 std::size_t elementSize);

/// A rank's buffers as the hierarchical plan names them: input, output (the user's, found from where its layout
/// puts the send and recv buffers) and scratch.
struct PlanBuffers {
  std::byte* input = nullptr;
  std::byte* output = nullptr;
  std::byte* scratch = nullptr;
};
/// The plan's input and output bases of a rank from the user's send and recv (null where the rank's layout has
/// none); scratch is the caller's. Error(Internal) where send and recv imply different bases of one buffer.
PlanBuffers planBuffersOf(const RankLayout& layout, const void* send, const void* recv, std::size_t elementSize);

/// One group call a rank makes, as the API call of its group's communicator: the node's communicator (InNode,
/// ranks as local indices) or the transport's rail (AcrossNodes, ranks as rail indices).
struct MemberCall {
  Scope scope = Scope::InNode;
  std::size_t phase = 0;
  const GroupCall* call = nullptr;
  int member = 0;  ///< this rank's index in call->members: its rank in the group
  Collective collective = Collective::AllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  int root = 0;                 ///< a member index
  ReduceOp op = ReduceOp::Sum;  ///< groupReduceOp
  int avgDivisor = 0;           ///< groupAvgDivisor (across nodes; in the node Avg never finishes)
};

/// Every group call of `plan` that names `rank`, in the order the rank makes them (phase by phase, call by call), with
/// its pointers into `buffers`. Error(Unsupported) for send/recv plans (the communicator's send/recv goes through
/// splitPeerCalls) and Error(Internal) for an in-node call that finishes an Avg (the node's communicator would divide
/// by the node's ranks, not the world's).
std::vector<MemberCall> memberCallsOf(const HierarchicalPlan& plan, int rank, ReduceOp op, const PlanBuffers& buffers);

/// One send or recv of a rank's group (communicator.hpp): `count` elements of `elementSize` bytes with `peer`.
struct PeerCall {
  bool send = true;
  int peer = 0;
  void* data = nullptr;
  std::size_t count = 0;
  std::size_t elementSize = 4;
  DataType type = DataType::F32;
  std::size_t index = 0;  ///< its place in the caller's list (which stream it came with)
};

/// A rank's send/recv group split by where its peers are.
struct PeerSplit {
  /// With ranks of its own node (itself included), peers as local indices: the node's communicator's group.
  std::vector<PeerCall> inNode;
  /// With each rank of another node: the pair's calls in the order given, peers left as world ranks. Pairs in
  /// increasing order of (lower rank, higher rank), the same on every rank, so pairs exchanged one at a time cannot
  /// wait on each other in a cycle.
  struct Pair {
    int peer = 0;
    std::vector<PeerCall> calls;
  };
  std::vector<Pair> acrossNodes;
};
PeerSplit splitPeerCalls(const std::vector<PeerCall>& calls, const NodeGrid& grid, int rank);

}  // namespace peerlink::coll
