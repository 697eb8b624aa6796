// Which calls of a world that spans processes share their buffers with the peers at the call instead of going
// through the staging windows, which of a rank's buffers the peers then need, and the calls whose buffers stay
// open (shared_calls.hpp does the sharing). The rules are pure and every rank applies them alike: whether a call
// is shared follows from the setting (which every rank must give alike), the call's shape and the cards every
// rank sees after the exchange, never from what one process alone knows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coll/window_mappings.hpp"
#include "coll/world.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::coll {

/// PEERLINK_COLL_SHARE_BUFFERS.
enum class BufferSharing { Auto, Off, On };
BufferSharing bufferSharingNamed(const std::string& value);
/// "AUTO", "OFF", "ON": the setting's value for `sharing`.
const char* bufferSharingName(BufferSharing sharing) noexcept;

/// Whether every process of `world` drives its ranks on one GPU, as a world that shares at the call must: legacy IPC
/// maps another process's allocation once per process, for the GPU that opened it -- a second GPU's open fails with
/// cudaErrorAlreadyMapped, and the first GPU's mapping is an illegal address on the second -- so a process with ranks
/// on two GPUs could not reach the others' buffers from both. (Measured on 2x H200, driver 580.159, with two
/// processes each driving a rank on both GPUs; where a process's GPUs hold none of the allocations it opens it was
/// not measured, and is taken to be alike.)
bool everyProcessOnOneGpu(const World& world);

/// Which of rank `rank`'s buffers some rank's kernel touches: a broadcast's input only on the root, a reduce's
/// output only on the root (NCCL lets the other ranks pass anything there, NULL too); every other buffer.
struct UsedBuffers {
  bool send = true;
  bool recv = true;
};
UsedBuffers usedBuffersOf(Collective collective, int rank, int root);

/// What a rank tells every other at a shared call: its two buffers as window cards (a card of 0 bytes for a
/// buffer no kernel touches), and whether it could share them at all (cudaMalloc memory of its GPU; memory of
/// cuMem's virtual memory API, as PyTorch's expandable segments, or from elsewhere cannot).
struct CallCard {
  WindowCard send;
  WindowCard recv;
  std::uint8_t shareable = 0;
  std::uint8_t reserved[7] = {};
};

/// The calls whose buffers stay open, the latest first, each by every rank's cards (the key, the same on every
/// rank): a call on the same buffers as one of them uses its windows again. At most `capacity`; adding beyond
/// that evicts the least recent. Every rank sees the same keys in the same order, so hits, misses and evictions
/// are the same everywhere.
class SharedCallCache {
 public:
  struct Entry {
    std::vector<std::uint8_t> key;
    int sendWindow = 0;
    int recvWindow = 0;
  };
  explicit SharedCallCache(std::size_t capacity) : capacity_(capacity) {}
  /// The entry whose key is `key`, made the latest; null if none.
  const Entry* find(const std::vector<std::uint8_t>& key);
  /// Adds `entry` as the latest; returns the entry it evicts, if the cache was full.
  std::optional<Entry> add(Entry entry);
  /// Lets every entry go; returns them, the latest first.
  std::list<Entry> clear();
  std::size_t size() const noexcept { return entries_.size(); }
  /// Every entry, the latest first (for the teardown).
  const std::list<Entry>& entries() const noexcept { return entries_; }

 private:
  std::size_t capacity_;
  std::list<Entry> entries_;
};

/// Calls whose buffers the communicator keeps open.
constexpr std::size_t kSharedCallsKept = 16;

/// A communicator's state for shared calls (CommState::shared).
struct SharedCalls {
  BufferSharing mode = BufferSharing::Auto;
  SharedCallCache cache{kSharedCallsKept};
  /// By an entry's send window: an event per local rank, recorded behind its latest call, so an evicted entry's
  /// windows are closed only once no kernel uses them.
  std::map<int, std::vector<Event>> lastUse;
  /// This process's allocations already turned into IPC handles, by CU_POINTER_ATTRIBUTE_BUFFER_ID (unique for
  /// the process's life: an allocation freed and made again at the same address gets another).
  std::map<std::uint64_t, IpcHandleBytes> handles;
  /// Whether the COLL log said once that some rank's buffers could not be shared.
  bool unshareableLogged = false;
  /// Calls that shared their buffers, and calls AUTO staged because some rank came later than its patience (the
  /// teardown's COLL log).
  std::uint64_t calls = 0;
  std::uint64_t late = 0;
};

}  // namespace peerlink::coll
