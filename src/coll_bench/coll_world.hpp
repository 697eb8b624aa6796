// The ranks of a `peerlink coll` run: every rank in this process (as nccl-tests -g N in one process), or one
// rank per process started by a launcher (mpirun, srun, torchrun, or `peerlink coll --procs N`), the processes
// meeting through the launch's bootstrap: rank 0's communicator ids to every rank, the slowest rank's time and
// the wrong elements of all, a barrier before each timed run. Ranks on several hosts (their bootstrap host ids
// differ: docs/multinode.md) make a world across nodes: it holds MPI for the run (net::MpiStartup: the process links
// no MPI, so libpeerlink_mpi.so initializes it), which a one-host world never loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "net/mpi_startup.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

class CollWorld {
 public:
  /// Ranks 0..ranks-1 on GPUs 0..ranks-1 of this process.
  static CollWorld singleProcess(int ranks);
  /// This process's one rank of the launch's world (`job`'s rank and size), on GPU `device` of this process. Ranks on
  /// several hosts: MPI started on every rank (net::MpiStartup's errors, the same on every rank), and nodes of
  /// different sizes refused (multiNodeGrid's error).
  static CollWorld launched(std::unique_ptr<Bootstrap> job, int device, const Params& params);

  int size() const noexcept { return size_; }
  /// The ranks this process drives, ascending, and their GPUs (CUDA ordinals here), by local index.
  const std::vector<int>& localRanks() const noexcept { return local_; }
  const std::vector<int>& devices() const noexcept { return devices_; }
  bool spansProcesses() const noexcept { return job_ != nullptr; }
  /// Prints and writes files: the process of rank 0.
  bool leads() const noexcept { return local_.front() == 0; }
  /// The launch's bootstrap; null in one process.
  Bootstrap* job() const noexcept { return job_.get(); }
  /// Ranks on several hosts: N nodes x G ranks; nullopt on one host.
  const std::optional<NodeGrid>& nodes() const noexcept { return nodes_; }
  /// The MPI of a world across nodes; null on one host.
  const net::MpiStartup* mpi() const noexcept { return mpi_.get(); }
  /// MPI_Finalize where the world initialized MPI: on every rank, once the run's communicators are destroyed. Not
  /// called after an error (the process ends, and its launcher the job).
  void finishMpi();

  /// Rank 0's `bytes` at every rank (`mine` is read on rank 0 only).
  std::vector<std::uint8_t> fromRankZero(const void* mine, std::size_t bytes) const;
  /// The largest of every process's values / their sum.
  double slowest(double mine) const;
  std::int64_t total(std::int64_t mine) const;
  /// Every rank's `text` (at most 256 bytes each), by rank: for one process its local ranks' given in order.
  std::vector<std::string> gatherText(const std::vector<std::string>& mine) const;
  /// Returns once every process has called it (at once in one process).
  void barrier() const;

 private:
  int size_ = 0;
  std::vector<int> local_;
  std::vector<int> devices_;
  std::unique_ptr<Bootstrap> job_;
  std::optional<NodeGrid> nodes_;
  std::unique_ptr<net::MpiStartup> mpi_;  ///< after job_: destroyed first (MpiStartup leaves MPI as it is)
};

}  // namespace peerlink::coll
