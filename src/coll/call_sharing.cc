// The rules of shared calls (call_sharing.hpp).
#include "coll/call_sharing.hpp"

#include <algorithm>

#include "peerlink/error.hpp"

namespace peerlink::coll {

static_assert(sizeof(CallCard) == 2 * sizeof(WindowCard) + 8, "a call card travels as bytes: no padding inside");

BufferSharing bufferSharingNamed(const std::string& value) {
  if (value == "AUTO") return BufferSharing::Auto;
  if (value == "OFF") return BufferSharing::Off;
  if (value == "ON") return BufferSharing::On;
  throw Error(ErrorCode::InvalidUsage, "PEERLINK_COLL_SHARE_BUFFERS: AUTO, OFF or ON, not '" + value + "'");
}

bool sharesAtCall(BufferSharing mode, Collective collective, std::size_t bytes, bool capturing) {
  if (capturing || bytes == 0) return false;
  switch (mode) {
    case BufferSharing::Off: return false;
    case BufferSharing::On: return true;
    case BufferSharing::Auto:
      return bytes >= (collective == Collective::AllToAll ? kShareAllToAllFrom : kShareBuffersFrom);
  }
  return false;
}

UsedBuffers usedBuffersOf(Collective collective, int rank, int root) {
  UsedBuffers used;
  if (collective == Collective::Broadcast) used.send = rank == root;
  if (collective == Collective::Reduce) used.recv = rank == root;
  return used;
}

const SharedCallCache::Entry* SharedCallCache::find(const std::vector<std::uint8_t>& key) {
  const auto hit = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) { return entry.key == key; });
  if (hit == entries_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, hit);
  return &entries_.front();
}

std::optional<SharedCallCache::Entry> SharedCallCache::add(Entry entry) {
  std::optional<Entry> evicted;
  if (capacity_ > 0 && entries_.size() >= capacity_) {
    evicted = std::move(entries_.back());
    entries_.pop_back();
  }
  entries_.push_front(std::move(entry));
  return evicted;
}

}  // namespace peerlink::coll
