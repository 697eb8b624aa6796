// MPI for a program that links none (`peerlink coll` under mpirun or srun, its ranks on several hosts):
// libpeerlink_mpi.so loaded on every rank of a bootstrap's world, MPI initialized with MPI_THREAD_MULTIPLE where the
// program has not done so, every rank's MPI_COMM_WORLD rank checked to be its bootstrap rank, and MPI finalized at the
// end only where it was initialized here. Each step's outcome is gathered over the bootstrap (whose waits have
// deadlines) before the next step, so every rank fails alike, naming the rank at fault, rather than some waiting in MPI
// for ranks that gave up.
#pragma once

#include <string>
#include <vector>

#include "coll/node_decisions.hpp"
#include "net/mpi_library.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/params.hpp"

namespace peerlink::net {

/// Every rank's MpiPlace, by rank: collective over `bootstrap`.
std::vector<coll::MpiPlace> gatherMpiPlaces(Bootstrap& bootstrap, const coll::MpiPlace& mine);

class MpiStartup {
 public:
  /// Collective over `bootstrap`'s ranks. Error(InvalidUsage) "<what>: <the first rank's problem>" on every rank where
  /// any rank cannot load libpeerlink_mpi.so, gets MPI without MPI_THREAD_MULTIPLE (the library's message, naming the
  /// MPI), or is not MPI_COMM_WORLD's rank of its bootstrap rank in a world of the same size; Error(SystemError)
  /// where MPI_Init_thread fails on this rank.
  MpiStartup(Bootstrap& bootstrap, const Params& params, const std::string& what);
  MpiStartup(const MpiStartup&) = delete;
  MpiStartup& operator=(const MpiStartup&) = delete;
  /// Leaves MPI as it is: finish() was called, or an error ends the process, whose launcher then ends the job
  /// (MPI_Finalize could wait for a rank that is stuck).
  ~MpiStartup() = default;

  /// The MPI in use (initialized, MPI_THREAD_MULTIPLE, this rank's place).
  const MpiFacts& facts() const { return facts_; }
  /// Whether this object initialized MPI (then finish() finalizes it).
  bool initializedHere() const { return initializedHere_; }
  /// MPI_Finalize where this object initialized MPI, once: after everything that uses MPI is destroyed, on every rank.
  void finish();

 private:
  Params params_;
  MpiFacts facts_;
  bool initializedHere_ = false;
};

}  // namespace peerlink::net
