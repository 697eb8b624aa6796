// Measured collective times as the model's fit and check read them: each cell a call, the kernel that ran it and
// its time in a CUDA graph, grouped by run (one `peerlink coll --json` file) with the fabric of the run's GPUs and
// how its processes drove them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/collective_choice.hpp"
#include "plan/fabric_model.hpp"
#include "plan/host_path.hpp"
#include "plan/net_staged.hpp"
#include "plan/predict.hpp"

namespace peerlink::plan {

/// One measured cell.
struct Measurement {
  std::size_t size = 0;  ///< nccl-tests' size of the row (for tables)
  Call call;             ///< what was called (count, placement, ...)
  CollectiveChoice ran;  ///< the algorithm, kernel and protocol that ran, as the run recorded them
  /// Through host memory: the way the call took, where the run recorded it (`peerlink coll` since the ways were
  /// named in its rows); older runs' cells take the way the current code chooses.
  std::optional<HostPath> hostPath;
  /// One process per GPU, buffers not registered: the arena ring's shape where the run recorded that the call ran so
  /// (its row's choice: "... as the arena ring (32 blocks of ..."); else such a call went through the staging
  /// windows, as every run from before the arena ring did.
  std::optional<coll::HostRingShape> arenaRing;
  double timeUs = 0;  ///< measured, per call in a CUDA graph (across nodes: eager, as those calls run)
  /// Across nodes: the phases across nodes alone (the row's across_nodes_us), where the run measured them.
  std::optional<double> acrossNodesUs;
  /// Across nodes: MPI's messages as the run measured them beside this row (its across_nodes.mpi_us).
  std::optional<MpiLink> mpi;
};

/// The cells of one run.
struct MeasuredRun {
  std::string origin;   ///< the file
  std::string machine;  ///< what the cells ran on, the key runs are grouped by: "4x NVIDIA H200, one process"
  std::string commit;   ///< the commit that measured
  std::string skipped;  ///< why its cells were left out (empty: they were not)
  Fabric fabric;
  ChoiceContext context;  ///< what its communicator chose with (a staged call's chunks' kernels)
  ProcessMode mode;       ///< one process, or one per GPU with its buffers registered or not
  /// Across nodes: how many (the fabric and context are then one node's, its ranks the run's first ranksPerNode),
  /// predicted on MPI's staged path (net_staged.hpp); 1 on one host.
  int nodes = 1;
  std::vector<Measurement> cells;
};

}  // namespace peerlink::plan
