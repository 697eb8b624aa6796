// How many elements each rank's send and recv buffers hold for a collective call with `count` (the count
// argument of the Communicator API, include/peerlink/communicator.hpp). Shared by the plans and the
// closed-form reference so both read the API's count semantics the same way.
#pragma once

#include <cstddef>

#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// Elements of `rank`'s send buffer: 0 where the API ignores it (broadcast off the root).
inline std::size_t sendElementsOf(Collective collective, int nranks, std::size_t count, int rank, int root) {
  const auto n = static_cast<std::size_t>(nranks > 0 ? nranks : 0);
  switch (collective) {
    case Collective::Broadcast: return rank == root ? count : 0;
    case Collective::ReduceScatter:
    case Collective::AllToAll: return n * count;
    case Collective::AllReduce:
    case Collective::Reduce:
    case Collective::AllGather:
    case Collective::SendRecv: return count;
  }
  return count;
}

/// Elements of `rank`'s recv buffer: 0 where the API ignores it (reduce off the root). For send/recv this
/// is the ring shift nccl-tests runs: rank r receives `count` elements from rank r - 1.
inline std::size_t recvElementsOf(Collective collective, int nranks, std::size_t count, int rank, int root) {
  const auto n = static_cast<std::size_t>(nranks > 0 ? nranks : 0);
  switch (collective) {
    case Collective::Reduce: return rank == root ? count : 0;
    case Collective::AllGather:
    case Collective::AllToAll: return n * count;
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::ReduceScatter:
    case Collective::SendRecv: return count;
  }
  return count;
}

/// Whether the collective has a root (broadcast, reduce).
inline bool hasRoot(Collective collective) {
  return collective == Collective::Broadcast || collective == Collective::Reduce;
}

/// Whether the collective reduces (so a ReduceOp applies).
inline bool reduces(Collective collective) {
  return collective == Collective::AllReduce || collective == Collective::Reduce ||
         collective == Collective::ReduceScatter;
}

}  // namespace peerlink::coll
