// A communicator's creation: the local ranks' GPUs set up (contexts, counters, every collective
// kernel loaded, so no first launch waits behind a spinning kernel), the world gathered from every rank's card
// and checked (world.hpp), each rank's arena allocated and zeroed, peer access enabled between local ranks,
// arenas of ranks in other processes mapped (arena_sharing.hpp), the failure records in mapped host memory. Its end
// is comm_teardown.hpp's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/comm_state.hpp"
#include "coll/world_exchange.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

/// The size of the staging window of a rank whose peers live in other processes (PEERLINK_COLL_STAGING_WINDOW):
/// calls whose buffers the peers cannot map go through it, half a window's worth at a time.
inline std::size_t stagingWindowBytes(const Params& params) {
  return static_cast<std::size_t>(params.getInt("PEERLINK_COLL_STAGING_WINDOW"));
}

/// This process's part of a world.
struct WorldSpec {
  int nranks = 0;
  std::vector<int> ranks;    ///< the ranks this process drives, ascending
  std::vector<int> devices;  ///< their GPUs (CUDA ordinals of this process), ranks[i] on devices[i]
  std::uint64_t hostId = 0;  ///< this machine (bootstrap host identity; any constant in one process)
  WorldExchange* exchange = nullptr;
  std::chrono::milliseconds shareTimeout{30000};  ///< each wait while sharing arenas with other processes
};

/// Fills `state` for the ranks `spec` gives this process. Throws Error naming the problem: a device out of
/// range or repeated, ranks that are not a part of the world (InvalidUsage), no GPU (NoDevice), ranks that
/// disagree (world.hpp), a pair without peer access (Unsupported), a CUDA failure, a peer that does not come.
void setupCommunicator(CommState& state, const WorldSpec& spec, const Params& params);

}  // namespace peerlink::coll
