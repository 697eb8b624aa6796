// The ranks of a `peerlink coll` run: every rank in this process (as nccl-tests -g N in one process), or one
// rank per process started by a launcher (mpirun, srun, torchrun, or `peerlink coll --procs N`), the processes
// meeting through the launch's bootstrap: rank 0's communicator ids to every rank, the slowest rank's time and
// the wrong elements of all, a barrier before each timed run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peerlink/bootstrap.hpp"

namespace peerlink::coll {

class CollWorld {
 public:
  /// Ranks 0..ranks-1 on GPUs 0..ranks-1 of this process.
  static CollWorld singleProcess(int ranks);
  /// This process's one rank of the launch's world (`job`'s rank and size), on GPU `device` of this process.
  static CollWorld launched(std::unique_ptr<Bootstrap> job, int device);

  int size() const noexcept { return size_; }
  /// The ranks this process drives, ascending, and their GPUs (CUDA ordinals here), by local index.
  const std::vector<int>& localRanks() const noexcept { return local_; }
  const std::vector<int>& devices() const noexcept { return devices_; }
  bool spansProcesses() const noexcept { return job_ != nullptr; }
  /// Prints and writes files: the process of rank 0.
  bool leads() const noexcept { return local_.front() == 0; }
  /// The launch's bootstrap; null in one process.
  Bootstrap* job() const noexcept { return job_.get(); }

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
};

}  // namespace peerlink::coll
