// The way a collective of a communicator whose ranks live in different processes goes, beside the kernels' choice
// (peerlink/collective_choice.hpp): where that choice needs the peers' buffers, across processes they are the peers'
// only once registered or shared; otherwise the call runs as the arena ring or through the staging windows. Pure:
// submitCollective (communicator.cc) takes the ways in this order on the call's real buffers; describeChoice and
// `peerlink coll --explain --procs` say which a call of a given size takes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "coll/arena_ring.hpp"
#include "coll/call_sharing.hpp"
#include "peerlink/collective_choice.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink {
class Params;
}

namespace peerlink::coll {

enum class CrossProcessWay {
  OwnBuffers,         ///< the kernels work through their stages (LL lines): each rank touches only its own buffers
  RegisteredWindows,  ///< the buffers are windows registered with every rank: the kernels reach the peers' directly
  SharedAtCall,       ///< eager: the buffers are shared with the peers at the call (shared_calls.hpp)
  ArenaRing,          ///< unregistered: the host ring's kernel through slots in the ranks' arenas (arena_ring.hpp)
  StagingWindows,     ///< unregistered: copied through the staging windows, half a window at a time
};

/// "own_buffers", "registered_windows", "shared_at_call", "arena_ring", "staging_windows".
const char* crossProcessWayName(CrossProcessWay way) noexcept;

/// The communicator's settings that decide the way, the same on every rank.
struct CrossProcessSettings {
  BufferSharing sharing = BufferSharing::Auto;    ///< PEERLINK_COLL_SHARE_BUFFERS
  ArenaRingMode arenaRing = ArenaRingMode::Auto;  ///< PEERLINK_COLL_ARENA_RING
  std::optional<HostRingShape> arenaRingShape;    ///< PEERLINK_COLL_ARENA_RING_SHAPE (nullopt: AUTO)
  bool hasRingArea = false;                       ///< the arenas hold the arena ring's area
  std::size_t windowBytes = 0;                    ///< a rank's staging window
  bool stageSerially = false;                     ///< PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL
  int maxBlocks = 1;                              ///< the communicator's grid cap
};

/// The settings a communicator across processes of one GPU each reads from `params` (comm_setup.cc reads them here);
/// the grid cap is the caller's to set.
CrossProcessSettings crossProcessSettingsFrom(const Params& params);

/// The way of a call of `collective` whose count is `bytes` (the count times the element size) on `nranks` ranks,
/// when the kernels' choice for it moves data as `flow`, its buffers are registered with every rank or not, and it
/// is captured into a CUDA graph or not.
CrossProcessWay crossProcessWay(const CrossProcessSettings& settings, Collective collective, std::size_t bytes,
                                int nranks, DataFlow flow, bool registered, bool capturing);

/// One phrase for `way` ("on registered windows, reaching the peers' buffers directly", "as the arena ring (32
/// blocks ...)"), for a call as crossProcessWay's arguments describe it.
std::string describeCrossProcessWay(CrossProcessWay way, const CrossProcessSettings& settings, Collective collective,
                                    std::size_t bytes, int nranks);

}  // namespace peerlink::coll
