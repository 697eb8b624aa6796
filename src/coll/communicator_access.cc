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

bool CommunicatorAccess::sharesAtCall(Communicator& communicator) {
  const std::lock_guard<std::mutex> lock(communicator.state_->mutex);
  return communicator.state_->comm.shared.mode != BufferSharing::Off;
}

CommunicatorAccess::StagedGraphCounts CommunicatorAccess::stagedGraphCounts(Communicator& communicator) {
  const std::lock_guard<std::mutex> lock(communicator.state_->mutex);
  const StagedGraphs* graphs = communicator.state_->comm.stagedGraphs.get();
  if (graphs == nullptr) return {};
  return {graphs->captures, graphs->replays};
}

}  // namespace peerlink::coll
