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

const char* bufferSharingName(BufferSharing sharing) noexcept {
  switch (sharing) {
    case BufferSharing::Auto: return "AUTO";
    case BufferSharing::Off: return "OFF";
    case BufferSharing::On: return "ON";
  }
  return "?";
}

bool everyProcessOnOneGpu(const World& world) {
  for (int a = 0; a < world.nranks; ++a) {
    for (int b = a + 1; b < world.nranks; ++b) {
      if (world.sameProcess(a, b) && world.gpu[static_cast<std::size_t>(a)] != world.gpu[static_cast<std::size_t>(b)]) {
        return false;
      }
    }
  }
  return true;
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

std::list<SharedCallCache::Entry> SharedCallCache::clear() {
  std::list<Entry> gone;
  gone.swap(entries_);
  return gone;
}

}  // namespace peerlink::coll
