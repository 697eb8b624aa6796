// MPI's own point-to-point bandwidth on the path a hierarchical call's phase across nodes takes, the reference that
// `peerlink coll` puts beside that phase (docs/multinode.md): every rank sends `bytes` of pinned host memory to the
// next rank of its rail (its local index on every node, node by node, the transport's ring) and receives as many from
// the one before, both at once, every rail at the same time, as the ring's steps move data. Nothing but MPI_Isend,
// MPI_Irecv and MPI_Test (through PointToPoint): no copies to or from the GPU, no reduction, one message per direction
// (cut only where MPI's int count needs it).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "net/point_to_point.hpp"

namespace peerlink::net {

/// The ranks a rank sends to and receives from on its rail's ring.
struct RingNeighbours {
  int next = 0;
  int previous = 0;
};
/// Pure. Rank `rank`'s neighbours on its rail of `grid` (node n+1 and node n-1 at its local index, around); itself
/// both where there is one node. Error(InvalidUsage) for a rank outside the grid.
RingNeighbours railRingNeighbours(const coll::NodeGrid& grid, int rank);

/// Pure. `bytes` cut into messages of at most `maxMessage` bytes (MPI counts are int): none for 0 bytes.
std::vector<std::size_t> messageSizes(std::size_t bytes, std::size_t maxMessage);

struct RailExchange {
  PointToPoint* p2p = nullptr;
  RingNeighbours neighbours;
  int tag = 1;
  std::chrono::milliseconds timeout{300000};  ///< each exchange's deadline
  std::size_t maxMessage = std::size_t{1} << 30;
  /// "rank 3 (host b, pid 42)" for a PointToPoint rank; the rank's number where empty.
  std::function<std::string(int)> describe;
};

/// One exchange: `bytes` from `send` to the next rank and as many into `recv` from the previous, every message posted
/// at once, then polled until all completed. Error(Timeout) naming the ranks not heard from (or not taking the sends)
/// after `timeout`; Error(RemoteError) for a transfer that failed, Error(Internal) for a message of another length.
void exchangeOnce(const RailExchange& exchange, const void* send, void* recv, std::size_t bytes);

/// `warmup` untimed exchanges, then `iterations` timed ones: this rank's seconds per exchange (its own clock: the
/// caller starts the ranks together and takes the slowest).
double timeExchanges(const RailExchange& exchange, const void* send, void* recv, std::size_t bytes, int warmup,
                     int iterations);

}  // namespace peerlink::net
