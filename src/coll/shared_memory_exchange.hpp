// The all-gather of small blobs between the processes of one host through shared memory: what each call that shares
// its buffers exchanges (shared_calls.hpp), in about a microsecond where the bootstraps' sockets take tens (a
// message wakes the receiver's watchdog thread, which wakes the caller).
//
// Each rank's segment (host_segments.hpp) holds two slots. The n-th all-gather writes each local rank's blob to its
// slot n % 2, then stamps the slot n; every process reads each other rank's slot n % 2 once it is stamped n. Two
// slots suffice: a process writes its (n+2)-th blob only after reading every rank's (n+1)-th, which each rank wrote
// only after reading every n-th, so no slot is written while another process may still read it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "coll/host_segments.hpp"
#include "coll/world.hpp"
#include "coll/world_exchange.hpp"

namespace peerlink::coll {

class SharedMemoryExchange {
 public:
  /// The largest blob it carries.
  static constexpr std::size_t kMaxBytes = 448;

  /// Collective over the world, through `sockets` (the bootstraps' all-gather): maps every rank's segment. Throws as
  /// mapHostSegments, alike on every process.
  SharedMemoryExchange(const World& world, const WorldAllGather& sockets);
  /// Logs (COLL INFO) how many all-gathers there were and how long this process waited in them for the others.
  ~SharedMemoryExchange();
  SharedMemoryExchange(const SharedMemoryExchange&) = delete;
  SharedMemoryExchange& operator=(const SharedMemoryExchange&) = delete;

  /// WorldExchange::allGather for blobs of at most kMaxBytes (Error(Internal) beyond). Waits at most `timeout` for
  /// the other ranks, calling `checkAlive` (which throws to stop the wait: a peer lost, an abort) now and then while
  /// it waits; Error(Timeout) names the ranks that did not come. Once a wait has failed, every later call throws
  /// Error(RemoteError) (the processes' counts no longer agree).
  std::vector<std::uint8_t> allGather(const std::vector<std::vector<std::uint8_t>>& localBlobs, std::size_t bytes,
                                      std::chrono::nanoseconds timeout, const std::function<void()>& checkAlive);

 private:
  std::vector<int> localRanks_;
  std::vector<HostSegment> segments_;  ///< by rank
  std::uint64_t count_ = 0;            ///< all-gathers so far
  bool failed_ = false;
  std::chrono::nanoseconds waited_{0};   ///< for the other ranks, in all (said at the end, COLL INFO)
  std::chrono::nanoseconds longest_{0};  ///< the longest of those waits
};

}  // namespace peerlink::coll
