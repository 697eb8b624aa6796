// The arena ring's calls (arena_ring.hpp).
#include "coll/arena_ring.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::coll {

ArenaRingMode arenaRingModeNamed(const std::string& value) {
  if (value == "AUTO") return ArenaRingMode::Auto;
  if (value == "OFF") return ArenaRingMode::Off;
  if (value == "ON") return ArenaRingMode::On;
  throw Error(ErrorCode::InvalidInput, "PEERLINK_COLL_ARENA_RING '" + value + "': AUTO, OFF or ON");
}

const char* arenaRingModeName(ArenaRingMode mode) noexcept {
  switch (mode) {
    case ArenaRingMode::Auto: return "AUTO";
    case ArenaRingMode::Off: return "OFF";
    case ArenaRingMode::On: return "ON";
  }
  return "?";
}

bool arenaRingRuns(Collective collective, int nranks) {
  switch (collective) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::Broadcast:
    case Collective::Reduce: return nranks > 1;
    case Collective::AllToAll: return nranks == 2;
    default: return false;
  }
}

std::size_t arenaRingAutoMinBytes(Collective collective) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  switch (collective) {
    case Collective::AllReduce:
    case Collective::Reduce: return 8 * kMiB;
    case Collective::Broadcast: return 128 * kMiB;
    case Collective::ReduceScatter: return 512 * kMiB;
    default: return 0;
  }
}

bool runsAsArenaRing(Collective collective, std::size_t count, DataType type, int nranks, ArenaRingMode mode) {
  if (mode == ArenaRingMode::Off || count == 0 || !arenaRingRuns(collective, nranks)) return false;
  if (mode == ArenaRingMode::On) return true;
  const std::size_t least = arenaRingAutoMinBytes(collective);
  return least > 0 && hostRingCallBytes(collective, count, type, nranks) >= least;
}

std::optional<HostRingShape> arenaRingShapeNamed(const std::string& name) {
  return ringShapeNamed(name, kernels::kArenaRingSlotBytes, "arena ring", "32x256K");
}

HostRingShape arenaRingShape(std::size_t callBytes, const std::optional<HostRingShape>& chosen, int maxBlocks) {
  HostRingShape shape =
      chosen ? *chosen
             : HostRingShape{callBytes <= kArenaRingLeanMaxBytes ? kArenaRingLeanBlocks : kArenaRingWideBlocks,
                             kernels::kArenaRingSlotBytes};
  shape.blocks = std::max(1, std::min(shape.blocks, maxBlocks));
  return shape;
}

std::string describeArenaRing(const HostRingShape& shape) {
  return fmt::format(
      "as the arena ring ({} blocks of {} threads a rank, each through {} slots of {} KiB in the next rank's arena: "
      "one kernel touching only the rank's own buffers)",
      shape.blocks, kernels::kArenaRingThreads, kernels::kHostRingSlots, shape.slotBytes >> 10);
}

kernels::HostRingArgs arenaRingCallArgs(Collective collective, std::size_t count, DataType type, int nranks, int rank,
                                        int root, const HostRingShape& shape, void* const* areas) {
  std::vector<int> order(static_cast<std::size_t>(nranks));
  std::iota(order.begin(), order.end(), 0);
  kernels::HostRingArgs args = hostRingCallArgs(collective, count, type, order, rank, root, shape);
  args.ownArea = static_cast<unsigned char*>(areas[args.next]);
  args.prevArea = static_cast<unsigned char*>(areas[rank]);
  args.regionBytes = kernels::ringRegionBytes(kernels::kArenaRingSlotBytes);
  args.threads = kernels::kArenaRingThreads;
  args.stallStep = kernels::kStepArenaRing;
  return args;
}

}  // namespace peerlink::coll
