// What peerlink's own tools read of a Communicator beyond the public API (`peerlink coll`'s figures of the phases
// across nodes), kept out of include/peerlink/: no program should depend on it.
#pragma once

#include "coll/node_world.hpp"
#include "peerlink/communicator.hpp"

namespace peerlink::coll {

struct CommunicatorAccess {
  /// The communicator's world across hosts, or null where every rank is on one host.
  static NodeWorld* nodes(Communicator& communicator);
};

}  // namespace peerlink::coll
