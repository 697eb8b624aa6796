// Non-blocking point-to-point messages between the processes of a world: what the transport between nodes needs
// from MPI, and nothing more (MPI_Isend, MPI_Irecv, MPI_Test, MPI_Cancel). MpiPointToPoint (mpi_library.hpp)
// carries them over the user's MPI; loopbackWorld over memory, for tests of everything above it in one process.
//
// Messages between two ranks under one tag are matched in the order they were posted, as MPI does. Nothing here
// waits: callers poll test() against their own deadline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace peerlink::net {

class PointToPoint {
 public:
  using Request = std::uintptr_t;

  virtual ~PointToPoint() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// The largest tag (MPI_TAG_UB; at least 32767).
  virtual int maxTag() const = 0;

  /// Starts sending `bytes` bytes at `data` to `peer`; the memory must stay valid and unchanged until test() says
  /// the request completed. Throws Error(RemoteError) naming the call when the transport refuses.
  virtual Request isend(int peer, int tag, const void* data, std::size_t bytes) = 0;
  /// Starts receiving at most `bytes` bytes from `peer` into `data`.
  virtual Request irecv(int peer, int tag, void* data, std::size_t bytes) = 0;
  /// True once the request completed (it is then gone, and `received`, when given, holds the bytes a receive got).
  /// Throws Error(RemoteError) for a transfer that failed (a peer that died, a message longer than the receive).
  virtual bool test(Request request, std::size_t* received = nullptr) = 0;
  /// Gives a request up (after a failure): a receive is cancelled, a send left to the transport to finish; either
  /// way the request is gone. Its memory must outlive the world (it may still be read or written).
  virtual void abandon(Request request) noexcept = 0;
};

/// `nranks` ranks of one world in this process, joined through memory: for tests, one thread per rank. Sends
/// complete at once (the data is copied); a receive completes when a matching message is there.
std::vector<std::unique_ptr<PointToPoint>> loopbackWorld(int nranks);

}  // namespace peerlink::net
