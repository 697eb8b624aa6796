// The all-gather of small blobs between the processes of one host through shared memory: what each call that shares
// its buffers exchanges (shared_calls.hpp), in about a microsecond where the bootstraps' sockets take tens (a
// message wakes the receiver's watchdog thread, which wakes the caller).
//
// Each rank's segment (host_segments.hpp) holds a ring of kRing slots and the count of exchanges the rank has
// finished. The n-th exchange writes each local rank's blob to its slot n % kRing and stamps the slot n, once every
// rank has finished exchange n - kRing (so no slot is written while a process may still read it).
//
// An exchange may also be left early (allGatherWithin): where not every rank has come within a process's patience,
// that process decides the exchange failed; where every rank has come, the process that sees it decides it
// succeeded. The first decision stands -- a compare-and-swap on one word of rank 0's segment per slot -- and every
// process reads it, so all take the same way, and a process never waits for the others past its patience.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "coll/host_segments.hpp"
#include "coll/world.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

class SharedMemoryExchange {
 public:
  /// The largest blob it carries.
  static constexpr std::size_t kMaxBytes = 448;
  /// Exchanges a process may be ahead of the slowest before it waits for room.
  static constexpr std::uint64_t kRing = 64;

  /// Collective over the world, through `sockets` (the bootstraps' all-gather): maps every rank's segment. Throws as
  /// mapHostSegments, alike on every process.
  SharedMemoryExchange(const World& world, const WorldAllGather& sockets);
  /// Logs (COLL INFO) how many exchanges there were, how many were left early, and how long this process waited.
  ~SharedMemoryExchange();
  SharedMemoryExchange(const SharedMemoryExchange&) = delete;
  SharedMemoryExchange& operator=(const SharedMemoryExchange&) = delete;

  /// WorldExchange::allGather for blobs of at most kMaxBytes (Error(Internal) beyond). Waits at most `timeout` for
  /// the other ranks, calling `checkAlive` (which throws to stop the wait: a peer lost, an abort) now and then while
  /// it waits; Error(Timeout) names the ranks that did not come. Once a wait has failed, every later call throws
  /// Error(RemoteError) (the processes' counts no longer agree).
  std::vector<std::uint8_t> allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs, std::size_t bytes,
                                      std::chrono::nanoseconds timeout, const std::function<void()>& checkAlive);

  /// allGather, but where some rank has not come within `patience` of this process's arrival (or of another's
  /// that decided first), nullopt -- on every process alike. Waits longer only for room in the ring.
  std::optional<std::vector<std::uint8_t>> allGatherWithin(const std::vector<std::vector<std::uint8_t>>& localBlobs,
                                                           std::size_t bytes, std::chrono::nanoseconds patience,
                                                           std::chrono::nanoseconds timeout,
                                                           const std::function<void()>& checkAlive);

 private:
  std::uint64_t begin(const std::vector<std::vector<std::uint8_t>>& localBlobs, std::size_t bytes,
                      std::chrono::nanoseconds timeout, const std::function<void()>& checkAlive);
  std::vector<std::uint8_t> gather(std::uint64_t count, std::size_t bytes);
  void finish(std::uint64_t count, std::chrono::steady_clock::time_point start);
  [[noreturn]] void fail(Error error);

  std::vector<int> localRanks_;
  std::vector<HostSegment> segments_;  ///< by rank
  std::uint64_t count_ = 0;            ///< exchanges so far
  std::uint64_t leftEarly_ = 0;        ///< of them, decided failed (allGatherWithin)
  bool failed_ = false;
  std::chrono::nanoseconds waited_{0};   ///< for the other ranks, in all (said at the end, COLL INFO)
  std::chrono::nanoseconds longest_{0};  ///< the longest of those waits
};

}  // namespace peerlink::coll
