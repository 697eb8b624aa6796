// Worlds started by a launcher (torchrun, mpirun, srun) without a unique id passed: what the launcher's
// environment says (rank, size, local rank and size, a key naming this run of the job), and the bootstrap
// built from it alone. docs/bootstrap.md, "Under a launcher", says what each mode authenticates.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/bootstrap.hpp"
#include "peerlink/params.hpp"

namespace peerlink {

enum class Launcher {
  None,      ///< no launcher's variables: a single process
  Torchrun,  ///< RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
  OpenMpi,   ///< OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE
  Pmi,       ///< MPICH, Intel MPI and other PMI launchers: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
  Slurm,     ///< srun: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_JOB_ID, SLURM_STEP_ID
};
/// "torchrun", "Open MPI", "PMI", "Slurm", "none".
const char* launcherName(Launcher launcher) noexcept;

/// What a launcher's environment says about this process.
struct LaunchEnvironment {
  Launcher launcher = Launcher::None;
  int rank = 0;
  int size = 1;
  std::optional<int> localRank;  ///< rank among this machine's ranks, where the launcher says
  std::optional<int> localSize;  ///< ranks on this machine, where the launcher says
  /// Names this run of the job, equal on all its ranks and different for other runs (job and step ids,
  /// torchrun's run id and master address); empty where the launcher gives none (MPICH's Hydra).
  std::string jobKey;
  std::string masterAddr;                   ///< MASTER_ADDR, when set
  std::optional<std::uint16_t> masterPort;  ///< MASTER_PORT, when set
  /// TORCHELASTIC_USE_AGENT_STORE: torchrun's agent serves its own store on MASTER_PORT.
  bool masterPortTaken = false;
  /// Which variables said so, for messages ("OMPI_COMM_WORLD_RANK=1").
  std::string source;
};

/// Every variable detectLaunch reads.
const std::vector<std::string>& launchVariableNames();
/// Pure. The innermost launcher wins: torchrun (it may run under srun or mpirun), then Open MPI, PMI, and Slurm
/// (a job step only: SLURM_STEP_ID set; an sbatch script's own shell is not a rank). Error(InvalidUsage) naming
/// the variable for a malformed or inconsistent value (RANK without WORLD_SIZE, a rank outside the size).
LaunchEnvironment detectLaunch(const std::map<std::string, std::string>& variables);
/// detectLaunch over this process's environment.
LaunchEnvironment detectLaunchFromEnvironment();

/// How ranks started by a launcher meet without an id passed.
struct LaunchRendezvous {
  enum class Kind {
    File,     ///< one machine: rank 0 writes a random id to a private file keyed by the job key
    Address,  ///< rank 0's root listens at a well-known address; the token derives from the job key
  };
  Kind kind = Kind::File;
  std::string address;  ///< Address: host:port
  std::string reason;   ///< why this kind, for the INIT log and errors
};
/// Pure. PEERLINK_BOOTSTRAP_ADDR (`bootstrapAddr`) with a port: Address there. Else, when every rank is on this
/// machine (local size == size): File, which authenticates with a random token and needs no port. Else
/// MASTER_ADDR with MASTER_PORT (+1 where torchrun's agent holds MASTER_PORT): Address. Else
/// Error(InvalidUsage) saying what to set.
LaunchRendezvous chooseLaunchRendezvous(const LaunchEnvironment& launch, const std::string& bootstrapAddr);

struct LaunchBootstrapOptions {
  BootstrapOptions bootstrap;
  /// Where File mode's private directory goes; empty: $XDG_RUNTIME_DIR, else /tmp.
  std::string directory;
};

/// Joins the world the launcher started, as chooseLaunchRendezvous decides (the INIT log says which). A job key
/// the launcher does not give is the parent process id (all of one machine's ranks are children of one
/// launcher daemon). Error(InvalidUsage) when no launcher is detected.
std::unique_ptr<Bootstrap> connectLaunchBootstrap(const LaunchEnvironment& launch, const Params& params,
                                                  const LaunchBootstrapOptions& options);

/// Starts `processes` copies of the program `arguments[0]` with `arguments` on this machine as torchrun would
/// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and a TORCHELASTIC_RUN_ID naming this run, so
/// connectLaunchBootstrap joins them), sharing this process's standard output and error, and waits for all of
/// them. Returns 0 when every copy exited 0, else the first failing copy's exit code (128 + signal for one
/// killed by a signal); once a copy fails the others get `grace` to finish, then are killed, so a copy stuck
/// waiting for a dead one never holds this up. Error(SystemError) when a copy cannot be started (the others are
/// killed).
int runLocalWorld(const std::vector<std::string>& arguments, int processes, std::chrono::milliseconds grace);

}  // namespace peerlink
