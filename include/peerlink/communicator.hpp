// A communicator: collectives over a world of ranks, one GPU each. One process may drive every rank (like
// ncclCommInitAll), or each process some of them (like ncclCommInitRank: torchrun, mpirun), the processes
// meeting through a unique id. Every rank's flags, lines and stages live in one arena on its GPU, reached
// by the other GPUs through peer access or, from another process, through a mapping of it (cuMem or IPC).
// Across processes a call whose kernel would touch a peer's buffers goes through the ranks' staging windows, unless
// its buffers lie in registered windows (registerWindow), which every GPU of every process reaches directly.
//
// Calling convention (as NCCL's with one thread and several GPUs): every collective is called once per rank
// this process drives, with that rank's buffers and a stream of that rank's GPU. Calls are matched by order:
// the k-th call of every rank must be the same collective with the same count, type, op and root. In one
// process a set that disagrees throws Error(InvalidUsage) naming the mismatch at the call that completes it --
// nothing is launched, every call not yet launched is discarded, and the communicator stays usable; across
// processes each process checks its own ranks' calls, and ranks that disagree meet the kernels' deadline.
// Kernels are launched when the last local rank's call arrives, so the call order of ranks does not matter
// and no call blocks. send/recv between groupStart() and groupEnd() are matched at groupEnd(); a send/recv
// outside a group is its own group.
//
// Every call is stream-ordered and capturable in a CUDA graph (all local ranks' streams captured together).
// Kernels synchronize through flags with a deadline (PEERLINK_TIMEOUT_MS): a stalled peer becomes a
// device-side error naming the rank and step, reported by the next call or by checkHealth(). A rank of
// another process that exits is reported by the next call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/bootstrap.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink {

namespace coll {
struct CommunicatorAccess;  // peerlink's own tools reach internals through it (src/coll/communicator_access.hpp)
}

class Communicator {
 public:
  /// Ranks 0..n-1 on `devices` (CUDA ordinals of this process, each at most once). Enables peer access
  /// between every pair, allocates and maps each rank's staging buffers and flags. Throws Error naming
  /// the problem (a device out of range or repeated, a pair without peer access).
  explicit Communicator(const std::vector<int>& devices, Params params = Params::fromEnvironment());
  /// Rank `rank` of a world of `nranks` ranks that spans processes (one process per GPU: torchrun, mpirun),
  /// on `device` (a CUDA ordinal of this process). Every rank passes the same `id` (makeUniqueId() in one
  /// process, handed to the others: bootstrap.hpp) and `nranks`; returns once every rank has arrived, the
  /// ranks have agreed on the world (the same peerlink build, the same settings that choose kernels, one GPU
  /// each) and each has mapped the others' buffers. Throws Error naming the ranks for anything else, or when
  /// a rank does not come within PEERLINK_BOOTSTRAP_TIMEOUT_MS.
  ///
  /// Ranks on several hosts (docs/multinode.md): the ranks of each host form a communicator of their own, joined
  /// over MPI; MPI must be initialized with MPI_THREAD_MULTIPLE first, `rank` must be the MPI_COMM_WORLD rank and
  /// `nranks` its size, one rank per process. Its calls then run eagerly and return once their phases between
  /// hosts are done; inside a CUDA graph capture they throw Error(Unsupported); split() is unsupported.
  Communicator(const UniqueId& id, int nranks, int rank, int device, Params params = Params::fromEnvironment());
  /// Several ranks of such a world in this process: ranks[i] on devices[i].
  Communicator(const UniqueId& id, int nranks, const std::vector<int>& ranks, const std::vector<int>& devices,
               Params params = Params::fromEnvironment());
  /// The same, with the bootstrap's options given rather than made from `params` (BootstrapOptions::fromParams):
  /// the NCCL API says there whether this process can follow a root that sends the world to the real NCCL.
  Communicator(const UniqueId& id, int nranks, const std::vector<int>& ranks, const std::vector<int>& devices,
               Params params, const BootstrapOptions& bootstrap);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int size() const noexcept;
  /// The ranks this process drives, ascending (every rank when one process drives them all).
  std::vector<int> localRanks() const;
  /// The CUDA ordinal of a local rank's GPU; Error(InvalidUsage) for a rank of another process.
  int device(int rank) const;

  /// recv[i] = op over ranks of send[i], i < count. In place when send == recv.
  void allReduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 cudaStream_t stream);
  /// recv = root's send on every rank (root's recv too; in place when send == recv on root).
  void broadcast(int rank, const void* send, void* recv, std::size_t count, DataType type, int root,
                 cudaStream_t stream);
  /// root's recv = op over ranks of send; recv is ignored (may be null) on other ranks.
  void reduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
              cudaStream_t stream);
  /// recv[r * sendCount + i] = rank r's send[i]; recv holds size() * sendCount elements. In place when
  /// send == recv + rank * sendCount.
  void allGather(int rank, const void* send, void* recv, std::size_t sendCount, DataType type, cudaStream_t stream);
  /// recv[i] = op over ranks of send[rank * recvCount + i]; send holds size() * recvCount elements. In place
  /// when recv == send + rank * recvCount.
  void reduceScatter(int rank, const void* send, void* recv, std::size_t recvCount, DataType type, ReduceOp op,
                     cudaStream_t stream);
  /// recv[r * count + i] = rank r's send[rank * count + i]; both hold size() * count elements; send and
  /// recv must not overlap.
  void allToAll(int rank, const void* send, void* recv, std::size_t count, DataType type, cudaStream_t stream);
  /// Point to point: `count` elements from `rank` to `peer`; matched with peer's recv(.., rank, ..).
  void send(int rank, const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream);
  void recv(int rank, void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream);
  void groupStart();
  void groupEnd();

  /// The algorithm and kernel the next call of `collective` with `bytes` per rank would use, and why:
  /// "algorithm (kernel): reason", e.g. "one_shot (ce_copy): ..." (`peerlink coll --explain`'s names).
  std::string describeChoice(Collective collective, std::size_t bytes) const;

  /// Throws Error(Timeout) naming the rank and step if a kernel reported a stalled peer since the last check;
  /// Error(RemoteError) naming it once a rank of another process was lost, or after abort().
  void checkHealth();

  /// Registers a buffer of each local rank with every rank (as NCCL's window registration): collective, every
  /// rank registers at the same point (buffers[i] of bytes[i] for localRanks()[i]). Afterwards a call whose
  /// buffers all lie in windows reaches the peers' buffers directly -- no staging copies across processes; a
  /// reduce excepted, whose output the other ranks do not know; buffers only the root uses need not be in one --
  /// provided every rank's call uses the same offsets into its window (NCCL's contract for symmetric windows;
  /// ranks that break it read and write wrong places). Across processes a buffer must be cudaMalloc memory of
  /// its rank's GPU (shared as a legacy IPC handle of its allocation). Returns the window's id, the same on
  /// every rank. All or nothing across the world: where a process cannot share its buffers or open the others',
  /// it throws its own error and every other process Error(RemoteError) naming its ranks, and no rank keeps the
  /// window. Error(InvalidUsage) from a later call whose local ranks' buffers are not at the same offsets.
  int registerWindow(const std::vector<void*>& buffers, const std::vector<std::size_t>& bytes);
  /// Removes a window: collective, every rank at the same point; returns once no rank maps the others' buffers,
  /// so each may free its own. Calls that use the window must be complete first (their streams synchronized):
  /// the others' buffers are unmapped here at once, as NCCL's ncclCommWindowDeregister requires of its callers.
  void deregisterWindow(int window);

  /// What checkHealth() would throw, without throwing (NCCL's ncclCommGetAsyncError): nullopt while all is
  /// well; once a kernel reported a stall, that error on every later call, whether or not a call threw it already.
  /// Safe from another thread while calls are made, and never waits for one.
  std::optional<Error> asyncError();

  /// Splits the world, as ncclCommSplit: every rank of the world takes part, each process once for all of its
  /// local ranks (colors[i] and keys[i] for localRanks()[i]). The ranks of one color (>= 0) form a new
  /// communicator, ranked by key, then by their rank here; a rank of a negative color joins none. Returns, for
  /// each local rank, its new communicator (local ranks of one color share it; null for a negative color).
  /// The new communicators have this one's settings. Blocks until every rank has called it.
  std::vector<std::shared_ptr<Communicator>> split(const std::vector<int>& colors, const std::vector<int>& keys);

  /// Gives up: every kernel of the communicator still waiting stops at its next check (within microseconds),
  /// the ranks of other processes are told (their kernels stop too, and their calls fail naming this rank),
  /// and every later call throws Error(RemoteError). What remains to do is to destroy the communicator, which
  /// then does not wait for the other ranks. Never throws; may be called from any thread.
  void abort() noexcept;

 private:
  friend struct coll::CommunicatorAccess;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace peerlink
