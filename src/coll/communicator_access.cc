// CommunicatorAccess (communicator_access.hpp).
#include "coll/communicator_access.hpp"

#include "coll/communicator_state.hpp"

namespace peerlink::coll {

NodeWorld* CommunicatorAccess::nodes(Communicator& communicator) {
  return communicator.state_->nodes.get();
}

}  // namespace peerlink::coll
