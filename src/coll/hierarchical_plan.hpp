// Collectives across nodes as plans (issue 36): N nodes of G ranks each, rank r on node r / G with local index
// r % G. A collective is a sequence of phases; a phase is a set of group calls that run at the same time, each one
// collective of one group: the G ranks of a node (in the node: peerlink's NVLink kernels on GPUs) or a rail, the N
// ranks of one local index, one per node (across nodes: the net transport, src/net/). The phases say exactly which
// ranges each call reads and writes, so the communicator makes the same calls; `plan` is the phases expanded into
// the steps of each call's flat plan (plan.hpp), remapped onto the N x G ranks, which the host executor runs and
// race-checks against the closed forms. docs/multinode.md draws each shape.
//
//   all-reduce      reduce-scatter in the node (shard l of the count to local rank l), all-reduce of shard l
//                   across nodes on rail l, all-gather in the node (each shard broadcast from its owner)
//   reduce-scatter  reduce-scatter in the node of each node's blocks (N calls, into scratch), reduce-scatter
//                   across nodes on every rail
//   all-gather      all-gather across nodes on every rail (into scratch), all-gather in the node of each node's
//                   blocks (N calls)
//   broadcast       broadcast across nodes on the root's rail, broadcast in every node from the root's local index
//   reduce          reduce in every node to the root's local index (into scratch), reduce across nodes on the
//                   root's rail
//   all-to-all      all-to-all across nodes on every rail (G blocks at a time, into scratch), all-to-all in the
//                   node (N calls)
//   send/recv       the ring shift: pairs within a node and pairs between nodes at the same time
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "coll/plan.hpp"

namespace peerlink::coll {

/// N nodes of G ranks, node-major: rank = node * ranksPerNode + local index.
struct NodeGrid {
  int nodes = 1;
  int ranksPerNode = 1;
  int size() const { return nodes * ranksPerNode; }
  int rankOf(int node, int local) const { return node * ranksPerNode + local; }
  int nodeOf(int rank) const { return rank / ranksPerNode; }
  int localOf(int rank) const { return rank % ranksPerNode; }
};

/// Where a group call runs.
enum class Scope {
  InNode,       ///< the G ranks of one node
  AcrossNodes,  ///< a rail: the N ranks of one local index (or, for send/recv, any two ranks of two nodes)
};
/// "in the node", "across nodes".
const char* scopeName(Scope scope) noexcept;

/// One collective call of one group, as the API would make it (communicator.hpp's count, root, in place), with
/// every member's buffers named as ranges of the hierarchical plan's buffers.
struct GroupCall {
  Scope scope = Scope::InNode;
  int group = 0;             ///< the node (InNode) or the rail's local index (AcrossNodes; send/recv: the sender's)
  std::vector<int> members;  ///< the plan's ranks, in the group's rank order
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::OneShot;  ///< the flat plan the expansion uses
  std::size_t count = 0;
  int root = 0;  ///< a member index (broadcast, reduce)
  bool inPlace = false;
  /// Per member: where its send and recv buffers begin, as a caller passes them (in place, one is the other as the
  /// API says: all-gather's send is block m of the recv); ignored where the API ignores them.
  std::vector<BufferRef> sends;
  std::vector<BufferRef> recvs;
  /// Its reductions are the collective's last: ReduceOp::Avg divides by every rank of the plan (not the group's)
  /// here; earlier calls reduce Avg as Sum (groupReduceOp).
  bool finishes = false;
};

/// The op a group call reduces with for the user's `op`: Sum for Avg in a call that does not finish.
ReduceOp groupReduceOp(const GroupCall& call, ReduceOp op) noexcept;
/// What Avg divides by in `call`: the plan's ranks where it finishes, 1 (a sum) where it does not.
int groupAvgDivisor(const GroupCall& call, const NodeGrid& grid) noexcept;

/// Calls that run at the same time, in one scope.
struct Phase {
  std::string name;  ///< "reduce-scatter in the node"
  Scope scope = Scope::InNode;
  std::vector<GroupCall> calls;
  /// Runs at the same time as the phase before (send/recv: the pairs in the node and between nodes).
  bool withPrevious = false;
  std::size_t firstStep = 0;  ///< its steps in plan.steps: [firstStep, endStep)
  std::size_t endStep = 0;
};

/// Ranks a reduce-scatter across nodes runs one shot among at most: each rank's reduction reads every rank's chunk, no
/// more sources than the kernels that reduce a copy out take (kernels::kCollMaxRanks).
constexpr int kOneShotReduceScatterRanksMax = 8;
/// The flat algorithm of a call across `nodes` nodes (the net transport's, net/net_call.hpp): one shot where it moves
/// the ring's bytes in one step (an all-reduce of 2 nodes, a reduce-scatter of up to kOneShotReduceScatterRanksMax),
/// each rank's reductions then the last thing it does, which a copy out can make (net/deferred_reductions.hpp); else
/// the ring where the collective has one, else its only algorithm. Pure.
Algorithm acrossNodesAlgorithm(Collective collective, int nodes);

/// The flat algorithm of each scope's group calls. Auto: one-shot in the node, acrossNodesAlgorithm across nodes
/// (what the net transport runs); a collective that lacks the algorithm asked for uses its first (algorithmsOf).
struct HierarchyAlgorithms {
  Algorithm inNode = Algorithm::Auto;
  Algorithm acrossNodes = Algorithm::Auto;
};

struct HierarchicalPlan {
  NodeGrid grid;
  std::vector<Phase> phases;  ///< in order; calls with nothing to do are left out, and phases without calls
  Plan plan;                  ///< over grid.size() ranks, ranksPerNode = grid.ranksPerNode
};

/// The hierarchical plan of `collective` over `grid` with the API's `count` (communicator.hpp), as buildPlan takes
/// it (root a rank of the grid; chunkElements passed to every group call's flat plan). Scratch holds the
/// intermediate results the shapes above name, then the flat plans' own. Throws Error(InvalidUsage) for a grid
/// of fewer than 1 node or rank per node, and what buildPlan throws (a root out of range, in place all-to-all).
HierarchicalPlan buildHierarchicalPlan(Collective collective, NodeGrid grid, std::size_t count, int root, bool inPlace,
                                       std::size_t chunkElements, DataType type, HierarchyAlgorithms algorithms = {});

/// Elements each rank sends to other nodes over the whole plan (what its NIC carries out): sources on another
/// node than a transfer's executor go to it, and its result to a destination on another node.
std::vector<std::size_t> elementsSentAcrossNodes(const Plan& plan);

/// The phases, one line per group call: "phase 1 across nodes: all_reduce ring of ranks 1, 3: count 500, ...".
std::string describePhases(const HierarchicalPlan& plan);

}  // namespace peerlink::coll
