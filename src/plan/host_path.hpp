// The ways a communicator whose GPUs reach each other only through host memory runs a call (docs/collectives.md,
// "Machines without P2P"; coll/comm_launch_plan.hpp): each is costed by the model as a kernel is (cost_model.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace peerlink::coll {
enum class StagedWay;  // coll/planned_calls.hpp
}  // namespace peerlink::coll

namespace peerlink::plan {

/// What runs a call of a communicator with staged plans: the ways of coll::StagedWay the model costs, in its order.
enum class HostPath {
  Lines,       ///< up to 256 KiB a rank: one LL kernel a rank, 16-byte lines through the LL areas in host memory
  Ring,        ///< the host ring's rounds (all-reduce, all-gather, reduce-scatter): slots in pinned host memory
  Chain,       ///< the host ring's chain (broadcast, reduce) from or to the root along the ring
  PlanKernel,  ///< a staged plan of up to 4 MiB as one kernel a rank (plan_run.cu), its steps between barriers
  PlanSteps,   ///< a staged plan step by step on the copy engines, a barrier kernel between steps
  PairByPair,  ///< a send/recv group across processes: each rank copies its chunks into its stage, the peer out of it
};

inline constexpr std::size_t kHostPathCount = 6;

/// The settings a communicator with staged plans runs its calls with (every rank gives the same); hostSettingsOf
/// (host_traffic.hpp) reads them.
struct HostSettings {
  std::size_t ringMaxBytes = std::size_t{8} << 20;  ///< PEERLINK_COLL_HOST_RING
  int ringBlocks = 0;                               ///< PEERLINK_COLL_HOST_RING_SHAPE's grid (0: AUTO, per call)
  std::size_t ringSlotBytes = 0;                    ///< and its slot
  std::size_t chunkBytes = std::size_t{4} << 20;    ///< the staged plans' chunk (PEERLINK_COLL_STAGED_CHUNK)
  bool oneKernel = true;                            ///< PEERLINK_COLL_STAGED_KERNEL
  std::vector<std::pair<int, int>> forcedPairs;     ///< PEERLINK_COLL_HOST_STAGED: pairs of ranks (both ways)
};

/// "host_lines", "host_ring", "host_chain", "plan_kernel", "plan_steps", "pair_by_pair".
const char* hostPathName(HostPath path) noexcept;

/// The path named `name` (hostPathName's), or nullopt.
std::optional<HostPath> parseHostPath(const std::string& name);

/// The path the model costs for the communicator's `way` (every way it has, today).
std::optional<HostPath> costedHostPath(coll::StagedWay way) noexcept;

}  // namespace peerlink::plan
