// The measurement harness of `peerlink coll`: collectives in nccl-tests' shape, peerlink's communicator
// (eager and captured in a CUDA graph) beside NCCL in its three configurations (plain, CUDA graph,
// symmetric window registration + graph), all in one run on the same buffers and sizes.
//
// Sizes mean what nccl-tests means (its getCollByteCount): the size of a row is the larger of a rank's
// send and receive buffers; all-gather and reduce-scatter round the per-rank part down to 16 bytes,
// all-to-all the per-peer part. algbw is nccl-tests' base bandwidth (all-reduce, broadcast, reduce,
// send/recv: count x type size / time; all-gather, reduce-scatter, all-to-all: that x ranks), busbw is
// algbw times the bus factor (all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
// broadcast, reduce, send/recv 1). Time is per iteration: CUDA events around all timed iterations on each
// GPU, divided by the iterations, the slowest GPU reported.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "coll_bench/coll_world.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/launch.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

/// What is measured; the peerlink configurations first.
enum class CollConfig { Peerlink, PeerlinkGraph, Nccl, NcclGraph, NcclSymmetric };
constexpr int kCollConfigCount = 5;
constexpr std::array<CollConfig, kCollConfigCount> kCollConfigs = {CollConfig::Peerlink, CollConfig::PeerlinkGraph,
                                                                   CollConfig::Nccl, CollConfig::NcclGraph,
                                                                   CollConfig::NcclSymmetric};
/// "peerlink", "peerlink_graph", "nccl", "nccl_graph", "nccl_symmetric".
const char* collConfigName(CollConfig config) noexcept;
std::optional<CollConfig> parseCollConfig(const std::string& name);
/// One line: "peerlink, eager (one call per rank per iteration)".
/// What a configuration runs; `processes` > 1: one process per rank (each process makes its own calls).
const char* collConfigDescription(CollConfig config, int processes = 1) noexcept;
/// NCCL's creation call in a run of that many processes: ncclCommInitAll (one) or ncclCommInitRank.
const char* ncclCreationCall(int processes) noexcept;
bool isNcclConfig(CollConfig config) noexcept;

enum class Placement { OutOfPlace, InPlace };

/// nccl-tests' getCollByteCount for one row, in elements and bytes.
struct CollSizing {
  std::size_t count = 0;                     ///< the count argument of the call (nccl-tests' "count")
  std::size_t sendCount = 0, recvCount = 0;  ///< elements of each rank's send and receive buffer
  std::size_t sendInPlaceOffset = 0;         ///< in place: send = buffer + rank x this (elements)
  std::size_t recvInPlaceOffset = 0;         ///< in place: recv = buffer + rank x this (elements)
  std::size_t bytes = 0;                     ///< the row's size: max(send, recv) bytes
  std::size_t bandwidthBytes = 0;            ///< what algbw divides by time
};

/// The sizing of a requested size, as nccl-tests computes it for `ranks` ranks.
CollSizing collSizing(Collective collective, std::size_t requestedBytes, DataType type, int ranks);
/// nccl-tests' bus bandwidth factor.
double busBandwidthFactor(Collective collective, int ranks);
/// Whether nccl-tests checks the in-place variant (not for all-to-all and send/recv; peerlink does not
/// run those in place either).
bool hasInPlace(Collective collective) noexcept;

/// How graph configurations are captured: all ranks' streams into one graph (forked from rank 0's stream
/// and joined back), or one graph per rank's stream as nccl-tests does (-G).
enum class GraphCapture { Joined, PerRank };

struct CollBenchOptions {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  std::vector<std::size_t> sizes;  ///< requested sizes (nccl-tests' -b/-e/-f), ascending
  int iterations = 20;             ///< -n
  int warmup = 5;                  ///< -w
  bool check = true;               ///< -c 1: one more run per configuration, checked on the host
  int gpus = 0;                    ///< -g: GPUs 0..g-1 of this process; 0 all
  bool peerlink = true;            ///< measure peerlink's communicator
  bool nccl = true;                ///< measure NCCL (when it loads)
  std::string ncclLibrary;         ///< PEERLINK_NCCL_LIBRARY
  GraphCapture capture = GraphCapture::Joined;
  /// --register: peerlink's send and recv buffers registered as windows with every rank (Communicator::
  /// registerWindow), so a world of processes reaches the peers' buffers directly instead of staging them.
  bool registerBuffers = false;
  /// --iteration-times: time each eager iteration on its own too (CollMeasurement::iterationUs).
  bool iterationTimes = false;
  /// Called before each measurement with a short description, for progress lines; may be empty.
  std::function<void(const std::string&)> progress;
};

/// One configuration, one placement, one size.
struct CollMeasurement {
  enum class Status { NotRun, Ok, Failed };
  Status status = Status::NotRun;
  std::string reason;  ///< NotRun: why (configuration unavailable, no in-place); Failed: the error
  double timeUs = 0;   ///< per iteration, slowest rank
  double algbwGBps = 0;
  double busbwGBps = 0;
  std::int64_t wrong = -1;  ///< elements that differ from the host reference over all ranks; -1 not checked
  /// With CollBenchOptions::iterationTimes, an eager configuration's iterations one by one (us, each the
  /// slowest rank's time from the end of the iteration before; the first from the timed run's start), in
  /// order; empty otherwise (graphs are timed whole).
  std::vector<double> iterationUs;
  /// A run across nodes, peerlink eager: per iteration, the time its calls across nodes took (the transport's, from
  /// start to data in place: AcrossNodesTime), the slowest rank's; 0 otherwise.
  double acrossNodesUs = 0;
  bool ok() const noexcept { return status == Status::Ok; }
  bool failed() const noexcept { return status == Status::Failed || wrong > 0; }
};

/// A row of a run across nodes: what a rank sends to other nodes in one call, and MPI's own point-to-point
/// bandwidth on that path (net/rail_exchange.hpp: every rank sends that much to the next rank of its rail and receives
/// as much from the one before, both at once, every rail at once, pinned host memory), timed in the same run.
struct CollAcrossNodes {
  std::size_t bytesPerRank = 0;  ///< the most any rank sends to other nodes in one call (elementsSentAcrossNodes)
  double mpiUs = 0;              ///< MPI's exchange of bytesPerRank, per iteration, the slowest rank; 0: not measured
  std::string mpiReason;         ///< why MPI's exchange was not measured, where it was not
};

struct CollRow {
  std::size_t bytes = 0;                       ///< nccl-tests' size
  std::size_t count = 0;                       ///< nccl-tests' count
  std::string peerlinkChoice;                  ///< Communicator::describeChoice for this size; empty without peerlink
  std::optional<CollAcrossNodes> acrossNodes;  ///< runs across nodes only
  std::array<CollMeasurement, kCollConfigCount> outOfPlace;
  std::array<CollMeasurement, kCollConfigCount> inPlace;
  const std::array<CollMeasurement, kCollConfigCount>& at(Placement placement) const {
    return placement == Placement::InPlace ? inPlace : outOfPlace;
  }
};

/// Why a configuration did not run at all ("" when it ran).
struct CollConfigStatus {
  bool available = false;
  std::string reason;
};

struct NcclStatus {
  bool loaded = false;
  std::string path;
  std::string version;  ///< "2.28.9"
  int versionCode = 0;
  std::string reason;  ///< why not loaded / not initialized
  std::string nvls;    ///< the NCCL_NVLS_ENABLE line
  std::vector<std::string> searched;
  double initMilliseconds = 0;  ///< creating every rank (ncclCreationCall) (the GPUs' contexts made before); 0: not run
};

/// A run whose ranks are on several hosts (docs/multinode.md).
struct CollNodes {
  int nodes = 0;  ///< 0: every rank on one host
  int ranksPerNode = 0;
  std::string mpi;                  ///< MPI_Get_library_version's first line
  std::string mpiLibrary;           ///< the libpeerlink_mpi.so loaded
  bool mpiInitializedHere = false;  ///< MPI initialized (and finalized) by peerlink, not by the program
};

struct CollRun {
  CollBenchOptions options;  ///< without the progress callback
  int ranks = 0;
  CollNodes nodes;
  int processes = 1;  ///< 1: one process drove every rank; else one process per rank (a launcher's world)
  /// Across processes, what a staged call copied through the windows (PEERLINK_COLL_STAGE_COPIES: "PEERS" or
  /// "ALL"); empty in one process, and in runs saved before the setting existed (which copied every byte).
  std::string stagedCopies;
  /// Across processes, the staging windows' bytes (PEERLINK_COLL_STAGING_WINDOW); 0 in one process and in runs
  /// saved before the setting existed (whose windows were 64 MiB).
  std::size_t stagingWindowBytes = 0;
  std::vector<int> devices;
  std::vector<std::string> deviceNames;   ///< "NVIDIA H200", per rank
  std::vector<std::string> deviceBusIds;  ///< "0000:00:06.0", per rank
  /// The peerlink Communicator's creation (the GPUs' contexts made before, as for NCCL's); 0: not created.
  double creationMilliseconds = 0;
  NcclStatus nccl;
  std::array<CollConfigStatus, kCollConfigCount> configs;
  std::vector<CollRow> rows;
};

/// The GPUs a run's ranks were on: its distinct bus ids (fewer than its ranks where ranks shared a GPU), its ranks
/// where it did not save one per rank.
int gpusOf(const CollRun& run);

/// The NCCL configuration with the shortest time at this row and placement, if any ran.
std::optional<CollConfig> bestNccl(const CollRow& row, Placement placement);
/// best NCCL time / `config`'s time (> 1: peerlink faster); nullopt when either did not run.
std::optional<double> ratioToBestNccl(const CollRow& row, Placement placement, CollConfig config);

/// A run across nodes: MPI's exchange time / peerlink's eager time across nodes at this row and placement (1: the
/// phases across nodes move data as fast as MPI itself on that path); nullopt where either was not measured.
std::optional<double> acrossNodesRatio(const CollRow& row, Placement placement);

/// Rejects what no GPU is needed to reject: empty sizes, iterations < 1, warmup < 0, gpus < 0, a negative
/// root, avg on integer types. Throws Error(InvalidUsage).
void validateCollOptions(const CollBenchOptions& options);

/// The ranks of a run in this process: every GPU (options.gpus 0) or GPUs 0..gpus-1. Throws Error(NoDevice)
/// without a GPU, Error(InvalidUsage) for -g beyond the GPUs.
CollWorld singleProcessWorld(const CollBenchOptions& options);

/// The ranks of a run a launcher started (mpirun, srun, torchrun, `peerlink coll --procs`): this process's one
/// rank, on the GPU its local rank names (or the only one it sees; local rank modulo the GPUs seen with
/// PEERLINK_COLL_SHARE_GPUS), joined through the launch's bootstrap, and MPI started where the ranks' hosts differ
/// (CollWorld::launched). Error(InvalidUsage) when the GPU cannot be told (several GPUs, no local rank).
CollWorld launchedWorld(const LaunchEnvironment& launch, const Params& params);

/// Measures every size with every available configuration on `world`'s ranks (every process of a world runs it
/// with the same options; rank 0's run holds the results). Throws Error(InvalidUsage) for a root beyond the
/// ranks, Error(Timeout) when a wait passes its deadline (PEERLINK_TIMEOUT_MS per collective waited for). Other
/// failures of one measurement are recorded in it.
CollRun runCollBench(const Params& params, const CollBenchOptions& options, const CollWorld& world);
/// The same in this process alone (singleProcessWorld(options)).
CollRun runCollBench(const Params& params, const CollBenchOptions& options);

}  // namespace peerlink::coll
