// The arena ring as the model predicts it (coll/arena_ring.hpp): a call on unregistered buffers across processes,
// whose kernel would touch a peer's buffers, runs as the host ring's kernel (kernels/host_ring.cuh) with its ring
// areas in the ranks' arenas: one kernel a rank, its blocks moving the data slot by slot to the next rank around the
// ring 0, 1, ..., n-1 (a rank's stores cross the route to the next rank's GPU).
//
// What it moves, from the kernel's schedule: the data cut into n chunks (the rounds) or one (the chain), each chunk
// into the grid's block parts. The rounds run 2(n-1) steps of a chunk an all-reduce (n-1 of the reduce-scatter, then
// n-1 of the all-gather), n-1 a reduce-scatter, an all-gather or the exchange of an all-to-all of two ranks: every rank
// sends a chunk to the next each step, all at once. The chain sends the whole buffer hop by hop from the root (a
// reduce: to it), every hop at once, the last rank's first slot n-1 hops behind the root's.
//
//   time = launch + peer_us x (n - 1) (+ process_us x (processes - 1), processes.hpp)
//          + (busiest resource's bytes + the chain's fill) / (its rate x efficiency)
//          + arena_slot_us x the slots each block moves (steps x its part of a chunk / the slot, plus the chain's fill)
//
// The steps are pipelined slot by slot (a slice goes on as soon as it has landed), so they share one launch and no
// barrier; a slot's fixed cost -- the fence that waits for a block's stores to land and the flag's trip -- is paid for
// every slot a block moves, which is what makes fewer, larger blocks slower than more (bench/results/2026-11-30-h200x2-
// arena-ring/). `launch` and `efficiency` are fitted per way and per collective, `arena_slot_us` once (fit.hpp).
#pragma once

#include "coll/host_ring_call.hpp"
#include "plan/arena_way.hpp"
#include "plan/cost_model.hpp"
#include "plan/fabric_model.hpp"
#include "plan/predict.hpp"

namespace peerlink::plan {

/// The steps of the arena ring's schedule for `collective` on `ranks` ranks: 2(n-1) for the all-reduce, n-1 for the
/// others (the chain's hops).
int arenaRingSteps(Collective collective, int ranks) noexcept;

/// What a call of the arena ring puts on the fabric and on each block.
struct ArenaRingTraffic {
  ArenaWay way = ArenaWay::Ring;
  int steps = 0;
  std::vector<double> bytes;  ///< per resource of the fabric (Fabric::resources), the whole call's
  double fillBytes = 0;       ///< the chain's fill on its busiest resource: one grain per hop beyond the first
  double slots = 0;           ///< the slots each block moves, partly filled ones in proportion, with the chain's fill
};

/// The traffic of `call` as the arena ring in `shape` over `fabric` (NVLink or PCIe peer routes).
ArenaRingTraffic arenaRingTraffic(const Call& call, const coll::HostRingShape& shape, const Fabric& fabric);

/// "as the arena ring: 32 blocks, 2 steps, 4 slots of 256 KiB a block": how the call runs, for the plan's rows.
std::string describeArenaRing(const coll::HostRingShape& shape, int steps);

/// The time of `call` as the arena ring in `shape` on `fabric` (without the processes' part, which predictCall adds as
/// for any kernel). Its algorithm is the ring, its kernel `kernel` (what it would run on registered windows).
Prediction predictArenaRing(const Call& call, Kernel kernel, const coll::HostRingShape& shape, const Fabric& fabric,
                            const CostModel& model);

}  // namespace peerlink::plan
