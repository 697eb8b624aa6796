// Staged calls replayed from CUDA graphs (staged_graphs.hpp).
#include "coll/staged_graphs.hpp"

#include <algorithm>
#include <utility>

namespace peerlink::coll {

bool StagedCallKey::operator==(const StagedCallKey& other) const {
  return collective == other.collective && count == other.count && type == other.type && op == other.op &&
         root == other.root && sends == other.sends && recvs == other.recvs;
}

StagedGraphPolicy::Decision StagedGraphPolicy::decide(const StagedCallKey& key) {
  ++clock_;
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if (slots_[slot] && *slots_[slot] == key) {
      lastUse_[slot] = clock_;
      return {Action::Replay, slot};
    }
  }
  const auto seen = std::find(recent_.begin(), recent_.end(), key);
  if (seen == recent_.end()) {
    if (recent_.size() == kRecentCalls) recent_.erase(recent_.begin());
    recent_.push_back(key);
    return {Action::Eager, 0};
  }
  // An empty slot has lastUse_ 0, older than any in use.
  const std::size_t slot =
      static_cast<std::size_t>(std::min_element(lastUse_.begin(), lastUse_.end()) - lastUse_.begin());
  recent_.erase(seen);
  if (slots_[slot] && clock_ - lastUse_[slot] <= kColdAfter) {  // every graph still in use: stays eager, and recent
    recent_.push_back(key);
    return {Action::Eager, 0};
  }
  slots_[slot] = key;
  lastUse_[slot] = clock_;
  return {Action::Capture, slot};
}

void StagedGraphPolicy::forget(std::size_t slot) {
  if (slot >= kSlots) return;
  slots_[slot].reset();
  lastUse_[slot] = 0;
}

GraphExec::~GraphExec() {
  if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
}

GraphExec::GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

}  // namespace peerlink::coll
