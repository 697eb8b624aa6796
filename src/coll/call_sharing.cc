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

// Measured on 2x H200 under nccl-tests (mpirun -np 2, -R 0), sharing ON, OFF and AUTO in one run with NCCL beside
// them (bench/results/2026-11-30-h200x2-call-exchange/, s1), the cards exchanged through shared memory. From a count
// of 2 MiB the all-reduce, all-gather and reduce-scatter were faster shared than through the staging windows
// (all-reduce 2 MiB 18.0 us against 21.5, 32 MiB 107 against 141); at 1 MiB level (the calls there mostly go in LL
// lines, which do not stage).
constexpr std::size_t kShareFrom = std::size_t{2} << 20;
// An all-to-all's blocks to each peer: 2 MiB blocks 19.1 us shared against 18.6 staged, 4 MiB blocks 25.3 against
// 27.8 and every larger block ahead (128 MiB: 378 against 497).
constexpr std::size_t kShareAllToAllFrom = std::size_t{4} << 20;
// A broadcast's and a reduce's: a broadcast of 2 MiB took 16.4 us shared against 17.2 staged and 15.7 in the AUTO
// run, of 4 MiB 18.0 against 25.5 (its staged form copies the root's whole input into the root's window before the
// peer reads it); a reduce of 2 MiB shared took 14.1 to 35.8 us from one run and column to the next (s1, s2) against
// 15.6-19.4 staged, of 4 MiB 22.3-24.7 against 22.9-27.3.
constexpr std::size_t kShareRootedFrom = std::size_t{4} << 20;

}  // namespace

std::size_t shareFromBytes(Collective collective) {
  switch (collective) {
    case Collective::AllToAll: return kShareAllToAllFrom;
    case Collective::Broadcast:
    case Collective::Reduce: return kShareRootedFrom;
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
