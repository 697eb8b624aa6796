// Ranks in other processes reach a rank's arena through a mapping of it: each process exports its local
// ranks' arenas (cuMem with a POSIX fd over a 0600 Unix socket whose peer uid is checked, or legacy IPC
// where the GPUs cannot export POSIX fds), tells every rank where to fetch them, and maps every other
// process's arenas for each of its local ranks' GPUs. docs/cross-process.md has the handshake.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "coll/arena_address.hpp"
#include "coll/comm_state.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

/// How this world's arenas are shared: cuMem where every GPU of the world can export POSIX fds, else IPC.
ShareKind arenaShareKind(const World& world);

/// Exchanges the local ranks' arenas (already allocated as exportable) with every rank of the other
/// processes, maps theirs into state.imports and fills every local rank's table (state.tables). Each wait
/// is bounded by `timeout`; a peer that does not come is Error(Timeout) naming it.
void shareArenas(CommState& state, WorldExchange& exchange, std::chrono::milliseconds timeout);

}  // namespace peerlink::coll
