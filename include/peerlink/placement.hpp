// Which GPUs to group, and where each rank's CPU threads should run (`peerlink place`, docs/place.md).
//
// placeGpus is a pure function of the topology and, when known, the doctor's verdicts: the partition of the
// GPUs into groups of one size that is best for traffic inside each group (tensor-parallel style: every
// member talks to every other), why, how much worse the next-best partition is, and per rank the lines to
// paste (CUDA_VISIBLE_DEVICES=..., numactl / taskset). It measures nothing: the link model and path classes
// judge; `peerlink bench` measures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// What to place.
struct PlacementRequest {
  int groupSize = 0;  ///< GPUs per group, at least 1
  int groups = 0;     ///< how many groups; 0: as many as the GPUs fill (their count must be a multiple of groupSize)
  /// The doctor's verdicts of directed pairs, when known (peerlink doctor's cache): a pair BROKEN in either
  /// direction is never grouped, one DEGRADED counts against its group. nullopt: none known (the notes say so).
  std::optional<std::vector<PairVerdict>> verdicts;
  /// Where the verdicts came from ("the cache in /home/me/.cache/peerlink"), or why there are none, for the notes.
  std::string verdictsFrom;
  /// The most partitions tried one by one (every partition of up to 16 GPUs fits the default); past it, a
  /// greedy grouping improved by swaps, which the result says is not proven best.
  std::uint64_t exhaustiveLimit = 5000000;
};

/// How good a group is for traffic inside it. Groups compare on these fields in this order: the worst pair's
/// link (NVLink first, then PCIe through one switch, several switches, a host bridge, a NUMA node's host
/// bridges, the sockets' interconnect, and last no P2P at all), the weakest pair's expected bandwidth (more is
/// better), pairs the doctor found DEGRADED (fewer), pairs at the worst link (fewer), the bandwidth of every
/// pair summed (more). A partition is as good as its weakest group, then its next weakest, and so on.
struct GroupScore {
  PathClass worstPath = PathClass::LOC;  ///< the worst pair's path class (LOC: a group of one GPU)
  bool worstWithoutP2p = false;          ///< some pair has no P2P: its traffic goes through host memory
  double weakestGBps = 0;                ///< the least expected bandwidth of a pair (link model; 0: unknown, no P2P)
  int degradedPairs = 0;                 ///< pairs the doctor found DEGRADED
  int pairsAtWorst = 0;                  ///< pairs at the worst link
  double totalGBps = 0;                  ///< the expected bandwidth of every pair (one direction each), summed
};

/// -1 when `a` is the better group, 1 when `b` is, 0 when they are equal (bandwidths within a millionth).
int compareGroupScores(const GroupScore& a, const GroupScore& b);

/// "PIX", "NVL", or "no P2P" for the worst link of a score.
std::string worstLinkName(const GroupScore& score);

/// One rank: a GPU of a group, and how to start its process near it.
struct RankPlacement {
  int rank = 0;               ///< within its group
  int gpu = -1;               ///< index into Topology::gpus (this process's CUDA ordinal)
  std::string visibleDevice;  ///< how CUDA_VISIBLE_DEVICES names it: the ordinal, or the UUID (see the notes)
  int numaNode = -1;          ///< the GPU's NUMA node; -1 unknown
  std::string cpus;           ///< the GPU's local CPUs ("0-23,48-71"); empty when unknown
  std::string numactl;        ///< "numactl --cpunodebind=N --membind=N"; empty when the node is unknown
  std::string taskset;        ///< "taskset -c CPUS"; empty when the CPUs are unknown
  std::string line;  ///< to paste before the rank's command: CUDA_VISIBLE_DEVICES=... and numactl, else taskset
};

/// One group of the chosen partition.
struct PlacedGroup {
  std::vector<int> gpus;  ///< indices into Topology::gpus, ascending
  GroupScore score;
  std::string reason;          ///< one line: the links inside the group
  std::string visibleDevices;  ///< CUDA_VISIBLE_DEVICES for one process driving the whole group ("1,2")
  std::vector<RankPlacement> ranks;
};

/// A partition other than the chosen one, and how it compares.
struct PlacementAlternative {
  std::vector<std::vector<int>> groups;  ///< each ascending, ordered by their first GPU
  std::vector<GroupScore> scores;        ///< weakest group first
  std::string difference;                ///< one line: where it is worse than the chosen partition
};

/// What placeGpus found.
struct GpuPlacement {
  int groupSize = 0;
  int groupCount = 0;
  std::vector<PlacedGroup> groups;  ///< the best partition, groups ordered by their first GPU; empty with `refusal`
  std::vector<int> unused;          ///< GPUs in no group (fewer groups asked than the GPUs fill)
  bool exhaustive = true;           ///< every partition was tried; else the best of a heuristic, not proven best
  double partitions = 0;            ///< how many partitions there are
  std::uint64_t partitionsTried = 0;
  std::uint64_t equallyGood = 0;  ///< tried partitions as good as the chosen one, itself included
  /// The best tried partition that is worse than the chosen one; nullopt when every one tried is as good.
  std::optional<PlacementAlternative> nextBest;
  std::string summary;  ///< one line: why this partition
  /// What could not be judged (unknown PCIe links, NUMA nodes, PCI paths; no verdicts), how the doctor's
  /// verdicts were used, and what discovery noted.
  std::vector<std::string> notes;
  std::vector<std::pair<int, int>> brokenPairs;    ///< pairs (a < b) the verdicts call BROKEN either way
  std::vector<std::pair<int, int>> degradedPairs;  ///< pairs (a < b) DEGRADED either way and BROKEN neither
  /// Set when no partition avoids the BROKEN pairs (then `groups` is empty): which pairs, and what to do.
  std::string refusal;
};

/// The best partition of `topology`'s GPUs into `request.groups` groups of `request.groupSize`. Throws
/// Error(InvalidUsage) for a size of zero or less, larger than the GPU count, not dividing it (groups = 0), or
/// groups that need more GPUs than there are; Error(InvalidInput) for a topology without GPUs.
GpuPlacement placeGpus(const Topology& topology, const PlacementRequest& request);

}  // namespace peerlink
