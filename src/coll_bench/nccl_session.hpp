// NCCL's side of a `peerlink coll` run (coll_session.hpp): the communicators of this process's ranks and, for the
// symmetric configuration, ncclMemAlloc buffers registered as windows.
#pragma once

#include <cstddef>
#include <vector>

#include "coll_bench/coll_world.hpp"
#include "coll_bench/reference_nccl.hpp"

namespace peerlink::coll {

/// Rank-indexed device pointers: the plain buffers (peerlink, NCCL plain and graph) or NCCL's symmetric ones.
struct BufferSet {
  std::vector<void*> send;
  std::vector<void*> recv;
};

/// NCCL's communicators of this process's ranks (by local index) and, for the symmetric configuration,
/// ncclMemAlloc buffers registered as windows; destroyed with the object.
struct NcclSession {
  ReferenceNccl library;
  std::vector<int> devices;  ///< by local index
  std::vector<ncclComm_t> comms;
  BufferSet symmetric;
  std::vector<ncclWindow_t> windows;  ///< send windows then recv windows, local index order

  NcclSession() = default;
  NcclSession(const NcclSession&) = delete;
  NcclSession& operator=(const NcclSession&) = delete;
  ~NcclSession();

  /// Error(RemoteError) naming `call` unless `result` is success.
  void check(ncclResult_t result, const char* call) const;
  /// One process: ncclCommInitAll; one rank per process: ncclCommInitRank with rank 0's id.
  void init(const CollWorld& world);
  /// ncclMemAlloc + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) of `bytes` for every local rank, grouped (the
  /// ranks of one thread register together, as nccl-tests -R 2 does).
  void setUpSymmetric(std::size_t bytes);
};

}  // namespace peerlink::coll
