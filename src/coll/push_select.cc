// The push form of a two-shot reduction (pushInstead, algorithm_select.hpp): whether an all-reduce's or a
// reduce-scatter's data crosses NVLink as stores into the owners' stages instead of its peers' loads.
#include <algorithm>

#include "coll/algorithm_select.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {
namespace {

constexpr std::size_t kKiB = 1024;

// From here an all-reduce on 3 or more ranks of an NVLink mesh pushes in two phases (coll_push_phased.cu: every
// byte crosses as a store, into the owners' stages and then as their results into every output) instead of
// the direct two-shot's loads and stores, while its largest shard fits a push stage slot
// (kernels::collPushPhasedFits: up to 64 MiB on 4 ranks). On 4x H100 (round 54 calls A-B, 50-iteration
// graphs) 78.1-78.3 us at 16 MiB against the direct reads' 82.9-83.3, 149.7-150.8 against 164.3-165.3 at
// 32 MiB, 292.7-293.8 against 308.1-310.0 at 64 MiB (the split kernels); below it lost, 46.8-47.1 against
// 43.8-44.6 at 8 MiB. A reduce-scatter pushed lost at every size (16 MiB: 46.6-47.1 against 44.6-44.7 us:
// its second phase only reads and writes local memory, which no link traffic overlaps). A larger shard would
// take a launch per slot (PEERLINK_COLL_PUSH=1 runs that), which AUTO leaves to the split kernels and rings.
constexpr std::size_t kAutoPushFrom = 16 * kKiB * kKiB;

// The largest shard of a two-shot over `nranks` ranks of a `bytes` message, at most: partitionRange cuts at
// 16-byte boundaries.
std::size_t largestShardBytes(std::size_t bytes, int nranks) {
  const std::size_t parts = static_cast<std::size_t>(std::max(1, nranks));
  return ((bytes + parts - 1) / parts + 15) / 16 * 16;
}

}  // namespace

std::optional<KernelChoice> pushInstead(Collective collective, Kernel kernel, std::size_t bytes, int nranks,
                                        bool nvlinkMesh, bool forced, PushMode push, const std::string& why) {
  const bool twoShot = kernel == Kernel::TwoShot || kernel == Kernel::SplitTwoShot;
  if (!twoShot && kernel != Kernel::ReduceScatter) return std::nullopt;
  const Algorithm algorithm = twoShot ? Algorithm::TwoShot : Algorithm::OneShot;
  if (push == PushMode::Push) {
    return KernelChoice{algorithm, Kernel::PushReduce,
                        why +
                            "; pushed (PEERLINK_COLL_PUSH=1): each rank stores its pieces into the owners' stages and "
                            "they reduce locally"};
  }
  if (push != PushMode::Auto || collective != Collective::AllReduce || !twoShot || forced || !nvlinkMesh ||
      nranks < 3 || bytes < kAutoPushFrom || !kernels::collPushPhasedFits(largestShardBytes(bytes, nranks))) {
    return std::nullopt;
  }
  return KernelChoice{algorithm, Kernel::PushReduce,
                      why + "; pushed in two phases (>= " + formatBytes(kAutoPushFrom) +
                          " on 3+ ranks of an NVLink mesh, every shard within a " +
                          formatBytes(kernels::kCollPushSlotBytes) +
                          " stage slot): each rank stores its pieces into the owners' stages, they reduce locally and "
                          "store the result into every output (stores only)"};
}

}  // namespace peerlink::coll
