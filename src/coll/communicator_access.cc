// CommunicatorAccess (communicator_access.hpp).
#include "coll/communicator_access.hpp"

#include <mutex>

#include "coll/communicator_state.hpp"

namespace peerlink::coll {

NodeWorld* CommunicatorAccess::nodes(Communicator& communicator) {
  return communicator.state_->nodes.get();
}

std::size_t CommunicatorAccess::openWindowMappings(Communicator& communicator) {
  const std::lock_guard<std::mutex> lock(communicator.state_->mutex);
  return communicator.state_->comm.windows.openMappings();
}

}  // namespace peerlink::coll
