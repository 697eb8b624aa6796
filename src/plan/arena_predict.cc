// A call's predicted time as the arena ring (arena_predict.hpp), and the names of its ways (arena_way.hpp).
#include "plan/arena_predict.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/host_ring.cuh"

namespace peerlink::plan {
namespace {

constexpr const char* kArenaWayNames[kArenaWayCount] = {"arena_ring", "arena_chain"};

double microseconds(double bytes, double gbps) {
  return bytes / (gbps * 1e3);
}

// `bytes` from rank `from` to rank `to`: over their route, or through the GPU's memory where they share one.
void flow(const Fabric& fabric, int from, int to, double bytes, std::vector<double>& load) {
  const std::vector<int>& route = fabric.route(from, to);
  if (route.empty()) {
    load[static_cast<std::size_t>(fabric.memory[static_cast<std::size_t>(from)])] += bytes;
    return;
  }
  for (const int resource : route) load[static_cast<std::size_t>(resource)] += bytes;
}

}  // namespace

const char* arenaWayName(ArenaWay way) noexcept {
  return kArenaWayNames[static_cast<std::size_t>(way)];
}

std::optional<ArenaWay> parseArenaWay(const std::string& name) {
  for (std::size_t i = 0; i < kArenaWayCount; ++i) {
    if (name == kArenaWayNames[i]) return static_cast<ArenaWay>(i);
  }
  return std::nullopt;
}

ArenaWay arenaWayOf(Collective collective) noexcept {
  return collective == Collective::Broadcast || collective == Collective::Reduce ? ArenaWay::Chain : ArenaWay::Ring;
}

int arenaRingSteps(Collective collective, int ranks) noexcept {
  return collective == Collective::AllReduce ? 2 * (ranks - 1) : ranks - 1;
}

ArenaRingTraffic arenaRingTraffic(const Call& call, const coll::HostRingShape& shape, const Fabric& fabric) {
  const int n = fabric.ranks();
  ArenaRingTraffic traffic;
  traffic.way = arenaWayOf(call.collective);
  traffic.steps = arenaRingSteps(call.collective, n);
  traffic.bytes.assign(fabric.resources.size(), 0.0);
  const double slot = static_cast<double>(shape.slotBytes);
  const double blocks = static_cast<double>(std::max(shape.blocks, 1));
  if (traffic.way == ArenaWay::Chain) {
    // The whole buffer along the ring, from the root to the rank before it (a reduce: from the rank after the root
    // round to the root); every hop forwards each slot as it lands.
    const double bytes = static_cast<double>(call.count * dataTypeSize(call.type));
    const int first = call.collective == Collective::Broadcast ? call.root : (call.root + 1) % n;
    for (int hop = 0; hop + 1 < n; ++hop) flow(fabric, (first + hop) % n, (first + hop + 1) % n, bytes, traffic.bytes);
    const double part = bytes / blocks;  // a block's part of the buffer
    // The last rank's first slot is n - 1 hops behind the root's: n - 2 slots (grains, on the links) of fill.
    traffic.slots = part / slot + (n - 2) * std::min(1.0, part / slot);
    traffic.fillBytes = (n - 2) * std::min(blocks * slot, bytes);
    return traffic;
  }
  // The rounds: every step each rank sends one chunk (a shard of the call's buffer) to the next rank.
  const double chunk = static_cast<double>(coll::hostRingCallBytes(call.collective, call.count, call.type, n)) / n;
  for (int r = 0; r < n; ++r) flow(fabric, r, (r + 1) % n, traffic.steps * chunk, traffic.bytes);
  traffic.slots = traffic.steps * chunk / blocks / slot;
  return traffic;
}

std::string describeArenaRing(const coll::HostRingShape& shape, int steps) {
  return fmt::format("as the arena ring: {} blocks, {} step(s), {} slots of {} KiB a block", shape.blocks, steps,
                     kernels::kHostRingSlots, shape.slotBytes >> 10);
}

Prediction predictArenaRing(const Call& call, Kernel kernel, const coll::HostRingShape& shape, const Fabric& fabric,
                            const CostModel& model) {
  Prediction p;
  p.algorithm = Algorithm::Ring;
  p.kernel = kernel;
  p.arenaWay = arenaWayOf(call.collective);
  if (call.count == 0) {
    p.bottleneck = "nothing to move";
    p.phase = "a call of 0 elements returns at once";
    return p;
  }
  const ArenaRingTraffic traffic = arenaRingTraffic(call, shape, fabric);
  const KernelCost& cost = model.cost(traffic.way, call.collective);
  int busiest = -1;
  double busiestUs = 0;
  for (std::size_t r = 0; r < traffic.bytes.size(); ++r) {
    const double us = microseconds(traffic.bytes[r], fabric.resources[r].gbps);
    if (us > busiestUs) {
      busiestUs = us;
      busiest = static_cast<int>(r);
    }
  }
  if (busiest >= 0 && traffic.fillBytes > 0) {
    busiestUs += microseconds(traffic.fillBytes, fabric.resources[static_cast<std::size_t>(busiest)].gbps);
  }
  const double linkUs = busiestUs / cost.efficiency;
  const double slotsUs = model.arenaSlotUs * traffic.slots;
  p.steps = 1;  // pipelined slot by slot: no barrier between the ring's steps
  p.arenaSlots = traffic.slots;
  p.dataUs = linkUs + slotsUs;
  p.fixedUs = model.launchOf(cost, fabric.ranks());
  p.timeUs = p.fixedUs + p.dataUs;
  const std::string how = describeArenaRing(shape, traffic.steps);
  if (p.fixedUs >= p.dataUs || busiest < 0) {
    p.bottleneck = "latency";
    p.phase = "launch and slot waits, " + how;
  } else if (linkUs >= slotsUs) {
    p.bottleneck = fabric.resources[static_cast<std::size_t>(busiest)].name;
    p.phase = "each step, " + how;
  } else {
    p.bottleneck = "each block's slot waits";
    p.phase = "each step, " + how;
  }
  return p;
}

}  // namespace peerlink::plan
