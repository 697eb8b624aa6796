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

// A shared call is a meeting of the processes' hosts (shared_calls.hpp): where the ranks issue their calls in step,
// as nccl-tests does, sharing was ahead of the staging windows from a count of 2 MiB (4 MiB for broadcasts, reduces
// and all-to-all blocks) and ahead of NCCL at every size (bench/results/2026-11-30-h200x2-call-exchange/, s1, s3:
// all-reduce 32 MiB 107 us shared against 141 staged). Where they do not -- a training step's ranks reach each
// gradient bucket's all-reduce some 0.3-0.5 ms apart -- the host a rank loses waiting outweighs what sharing saves:
// PyTorch DDP's steps took 0.4-1.4 ms longer with its 7 MiB buckets shared than staged (s3-s5), even with the
// exchange's patience (sharing_patience.hpp). So AUTO shares from 32 MiB, above DDP's default buckets (25 MiB): the
// all-gathers and reduce-scatters of large shards, the large all-reduces, where sharing saves the most.
constexpr std::size_t kShareFrom = std::size_t{32} << 20;

}  // namespace

std::size_t shareFromBytes() {
  return kShareFrom;
}

bool sharesAtCall(BufferSharing mode, std::size_t bytes, bool capturing) {
  if (capturing || bytes == 0) return false;
  switch (mode) {
    case BufferSharing::Off: return false;
    case BufferSharing::On: return true;
    case BufferSharing::Auto: return bytes >= shareFromBytes();
  }
  return false;
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
