// The arena ring: calls on unregistered buffers of a world that spans processes -- those whose kernels would need a
// peer's buffers, which needsStaging sends through the staging windows -- run instead as the host ring's kernel
// (kernels/host_ring.cuh) with its ring areas in the ranks' arenas: one kernel a rank that touches only the rank's
// own buffers and the arenas, slot by slot along the ring, with no staging copies before or after it and no more SMs
// than its grid. Which calls, in what shape, and each rank's arguments: pure, the same answer on every rank (the
// call's shape, the world's size and the settings every rank must give alike).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "coll/host_ring_call.hpp"
#include "kernels/host_ring.cuh"
#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// PEERLINK_COLL_ARENA_RING.
enum class ArenaRingMode { Auto, Off, On };
ArenaRingMode arenaRingModeNamed(const std::string& value);
/// "AUTO", "OFF", "ON": the setting's value for `mode`.
const char* arenaRingModeName(ArenaRingMode mode) noexcept;

/// Whether the arena ring runs `collective` on `nranks` ranks: all-reduce, reduce-scatter, all-gather, broadcast and
/// reduce; the all-to-all of two ranks (the ring's exchange: with more, a rank's blocks go to different ranks).
bool arenaRingRuns(Collective collective, int nranks);

/// The smallest call (hostRingCallBytes) of `collective` AUTO runs as the arena ring rather than through the staging
/// windows, or 0 for none: where it was faster eager on 2x H200, two processes (bench/results/2026-11-30-h200x2-
/// arena-ring/, calls c1 and e1). An all-reduce or reduce from 8 MiB (the all-reduce 43.2 us against the windows' 43.6
/// there, 407 against 446 at 128 MiB; 22.2 against 16.8 at 2 MiB, where a block's part is less than a slot; the
/// reduce 33.6 against 60.0 at 8 MiB), a broadcast from 128 MiB (0.88x at 32 MiB), a reduce-scatter from 512 MiB
/// (0.77-0.96x from 8 to 128 MiB, 1.10x at 512). Not the all-gather (1.03x at 512 MiB, 0.78-0.95x below) nor the
/// all-to-all (0.77-0.91x at every size), which only move data: the windows' copy engines and full grid carry that
/// faster than 32-64 blocks of slots.
std::size_t arenaRingAutoMinBytes(Collective collective);

/// Whether a call of `count` elements of `type` that must go through the staging windows runs as the arena ring
/// under `mode`: ON every one it runs (arenaRingRuns), AUTO those from arenaRingAutoMinBytes, OFF none.
bool runsAsArenaRing(Collective collective, std::size_t count, DataType type, int nranks, ArenaRingMode mode);

/// The shape PEERLINK_COLL_ARENA_RING_SHAPE names (slots of at most kArenaRingSlotBytes), or nullopt for AUTO.
std::optional<HostRingShape> arenaRingShapeNamed(const std::string& name);

/// The largest call (hostRingCallBytes) AUTO runs on kArenaRingLeanBlocks blocks; larger ones take
/// kArenaRingWideBlocks.
constexpr std::size_t kArenaRingLeanMaxBytes = std::size_t{32} << 20;
constexpr int kArenaRingLeanBlocks = 32;
constexpr int kArenaRingWideBlocks = 64;

/// A call's shape: `chosen` where given; else slots of kArenaRingSlotBytes on kArenaRingLeanBlocks blocks up to
/// kArenaRingLeanMaxBytes (a training step's gradient buckets, whose all-reduces run beside the backward pass's
/// kernels: the fewer SMs they hold, the sooner those start) and kArenaRingWideBlocks above (2x H200, all-reduce of
/// 256 MiB: 791 us on 64 blocks, 856 on 32; bench/results/2026-11-30-h200x2-arena-ring/). Either way at most
/// `maxBlocks` blocks (the communicator's grid cap, the same on every rank: PEERLINK_COLL_MAX_BLOCKS, and a GPU's SMs
/// shared among the ranks on it, whose ring kernels must all be resident at once).
HostRingShape arenaRingShape(std::size_t callBytes, const std::optional<HostRingShape>& chosen, int maxBlocks);

/// "as the arena ring (32 blocks of 512 threads a rank, ...)": how a call of `shape` runs, for describeChoice.
std::string describeArenaRing(const HostRingShape& shape);

/// Rank `rank`'s arguments for such a call of `nranks` ranks around the ring 0, 1, ..., nranks - 1: `areas[p]` is
/// rank p's ring area as this rank's GPU addresses it. The area a rank fills is the one in the next rank's arena
/// (its stores cross the link, the next rank loads its own memory), and the one in its own arena it empties.
/// Buffers, the block states, the failure record and the deadline are the caller's.
kernels::HostRingArgs arenaRingCallArgs(Collective collective, std::size_t count, DataType type, int nranks, int rank,
                                        int root, const HostRingShape& shape, void* const* areas);

}  // namespace peerlink::coll
