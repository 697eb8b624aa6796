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

namespace {

// The exchange of the ranks' cards holds each process's host until every rank has reached the call (some 30 us on
// 2x H200), which a 4 MiB call did not win back and a 16 MiB call won back in one run and not in another (all-reduce
// eager 63.7 and 98.0 us, NCCL 92.8 and 81.5; the staging windows replay graphs there and are ahead too); from 64
// MiB every collective gained over the staging windows in both runs (bench/results/2026-11-30-h200x2-shared-calls/,
// c3-c4).
constexpr std::size_t kShareFrom = std::size_t{64} << 20;
// An all-to-all's blocks: 2 ranks' 32 MiB blocks shared took 173 us eager where the staging windows' graph took 124
// and NCCL 140 (c4); 128 MiB blocks 383 us shared against NCCL's 475 (c4), where staged they took 438 (c5) and 0.93x
// NCCL's time under nccl-tests (c6).
constexpr std::size_t kShareAllToAllFrom = std::size_t{128} << 20;
// A broadcast's: its staged form copies the root's whole input into the root's window before the peer reads it, so
// sharing gains more: at 32 MiB 1.08x NCCL plain's time shared against 0.99x staged side by side (c8), and 1.08x
// under nccl-tests where staged it was 0.87x (c9, c6). At 16 MiB (some 55 us on the GPU) a shared call's host part
// (some 90 us: the exchange, the cards, the launch) is the longer, so back-to-back calls wait on the host: 1.12x in
// c8 but 0.68x under nccl-tests (c9).
constexpr std::size_t kShareBroadcastFrom = std::size_t{32} << 20;

}  // namespace

std::size_t shareFromBytes(Collective collective) {
  switch (collective) {
    case Collective::AllToAll: return kShareAllToAllFrom;
    case Collective::Broadcast: return kShareBroadcastFrom;
    default: return kShareFrom;
  }
}

bool sharesAtCall(BufferSharing mode, Collective collective, std::size_t bytes, bool capturing) {
  if (capturing || bytes == 0) return false;
  switch (mode) {
    case BufferSharing::Off: return false;
    case BufferSharing::On: return true;
    case BufferSharing::Auto: return bytes >= shareFromBytes(collective);
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
