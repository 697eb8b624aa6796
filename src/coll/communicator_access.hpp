// What peerlink's own tools and tests read of a Communicator beyond the public API (`peerlink coll`'s figures of the
// phases across nodes, the registered windows' mappings), kept out of include/peerlink/: no program should depend
// on it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/node_world.hpp"
#include "peerlink/communicator.hpp"

namespace peerlink::coll {

struct CommunicatorAccess {
  /// The communicator's world across hosts, or null where every rank is on one host.
  static NodeWorld* nodes(Communicator& communicator);
  /// How many mappings of other processes' window allocations the communicator holds open (one per allocation
  /// and GPU of this process: user_windows.hpp).
  static std::size_t openWindowMappings(Communicator& communicator);
  /// Whether calls on unregistered buffers may still share them at the call (shared_calls.hpp): false where the
  /// setting is OFF, the world cannot (everyProcessOnOneGpu) or a process could not open the others' buffers.
  static bool sharesAtCall(Communicator& communicator);
  /// Staged calls captured into graphs and replayed from them so far (staged_graphs.hpp); {0, 0} without graphs.
  struct StagedGraphCounts {
    std::uint64_t captures = 0;
    std::uint64_t replays = 0;
  };
  static StagedGraphCounts stagedGraphCounts(Communicator& communicator);
};

}  // namespace peerlink::coll
