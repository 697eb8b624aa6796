// The user's MPI, reached through libpeerlink_mpi.so (mpi_abi.h), loaded at run time: libpeerlink links no MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/net_path.hpp"
#include "net/point_to_point.hpp"
#include "peerlink/params.hpp"

namespace peerlink::net {

/// What the loaded MPI says of itself.
struct MpiFacts {
  std::string library;  ///< "Open MPI v4.1.4", MPI_Get_library_version's first line
  std::string path;     ///< the libpeerlink_mpi.so loaded
  bool initialized = false;
  int threadLevel = 0;   ///< PEERLINK_MPI_THREAD_* (mpi_abi.h)
  int cudaSupport = -1;  ///< 1, 0, -1 (cannot say)
  int worldRank = -1;    ///< this process's rank in MPI_COMM_WORLD (initialized MPI only)
  int worldSize = 0;     ///< MPI_COMM_WORLD's size (initialized MPI only)
};

/// Loads libpeerlink_mpi.so once per process (PEERLINK_MPI_LIBRARY, else beside the program, else the loader's
/// path) and asks the MPI. Error(Unsupported) naming every place tried and how to build it.
MpiFacts mpiFacts(const Params& params);

/// The places libpeerlink_mpi.so is looked for, in order (PEERLINK_MPI_LIBRARY alone when it is set).
std::vector<std::string> mpiLibraryCandidates(const std::string& setting, const std::string& programDirectory);

/// This process's rank of a duplicate of the communicator whose Fortran handle is `fortranComm` (MPI_Comm_c2f;
/// -1: MPI_COMM_WORLD), over the loaded MPI. Error(InvalidUsage) when MPI is not initialized, or initialized
/// below MPI_THREAD_MULTIPLE (the transport calls MPI from its progress thread), naming the MPI.
std::unique_ptr<PointToPoint> openMpiPointToPoint(const Params& params, std::int64_t fortranComm = -1);

/// For a program that links no MPI (`peerlink coll` under mpirun): MPI initialized through libpeerlink_mpi.so with
/// MPI_THREAD_MULTIPLE asked, where it is not initialized yet. True where this call initialized it (finalizeMpi then
/// ends it), false where MPI was initialized before. Whether MPI_THREAD_MULTIPLE was granted is mpiFacts'
/// (mpiUnusableReason). Error(Unsupported) as mpiFacts where the library is missing; Error(SystemError) naming the MPI
/// where MPI was finalized already or MPI_Init_thread failed.
bool initializeMpiThreadMultiple(const Params& params);
/// MPI_Finalize where initializeMpiThreadMultiple initialized MPI (once); nothing otherwise. Collective: every process,
/// once nothing uses MPI. Error(SystemError) where MPI_Finalize fails.
void finalizeMpi(const Params& params);

/// The facts choosePath needs: the MPI's name and CUDA awareness, PEERLINK_NET_CUDA_AWARE, where the callers'
/// buffers are. The start-up check is the caller's to run (wantsStartupCheck, checkDirectPath) and record.
PathFacts pathFactsOf(const MpiFacts& mpi, const Params& params, bool callerMemoryIsHost);

/// The message for an MPI this transport cannot use, or empty: not initialized, or without MPI_THREAD_MULTIPLE.
std::string mpiUnusableReason(const MpiFacts& facts);

}  // namespace peerlink::net
