// The parameters of `peerlink plan`'s latency-bandwidth model, as data: what each kernel costs beyond the bytes
// its plan moves (a fixed cost per call, the fraction of the links' bandwidth it reaches), what a synchronized
// step between ranks costs, and the hardware figures the topology does not carry (memory bandwidth per GPU
// model, the link between CPU sockets). Fitted from committed `peerlink coll` runs (fit.hpp) and stored as JSON
// (src/plan/model.json, built into the binary; docs/plan.md says how to refit).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peerlink/collective_choice.hpp"
#include "peerlink/collectives.hpp"
#include "plan/arena_way.hpp"
#include "plan/host_path.hpp"

namespace peerlink::plan {

/// What one kernel costs beyond its plan's bytes.
struct KernelCost {
  /// A call's fixed cost in a CUDA graph with no peer, in µs: the kernel's launch, its first flag wait and its end
  /// (CostModel::peerUs adds each peer's part).
  double launchUs = 2.5;
  /// The fraction of the links' bandwidth (the link model's, topology.hpp) the kernel reaches while its data
  /// moves; 1 would be the signalling rate.
  double efficiency = 0.75;
  /// Measured cells the fit had for this kernel (0: the values are priors, not fitted).
  int cells = 0;
  /// Where the values come from: "fit" or "prior: ..." (why that value).
  std::string source = "prior";
};

/// A kernel's costs, and apart from them those of the collectives whose cells set them apart (the same kernel
/// reduces for one collective and only copies for another).
struct KernelCosts {
  KernelCost all;
  std::map<Collective, KernelCost> byCollective;
};

/// The whole model.
struct CostModel {
  /// A synchronized step of a plan beyond the first (a barrier between ranks: each rank's flag stores and the
  /// wait for its peers'), in µs.
  double stepUs = 1.0;
  /// What each peer adds to a call's fixed cost, in µs: the fixed cost is launchUs + peerUs * (ranks - 1). One
  /// figure for every kernel, as calls in 20-call graphs show it: more peers' flags to wait on, and one graph over
  /// more GPUs dearer to launch, spread over its calls (docs/plan.md).
  double peerUs = 0.5;
  /// What each process beyond the first adds to a kernel's fixed cost where every GPU has its own process, in µs:
  /// the processes' graphs do not start their calls together (processes.hpp). 0 for one process.
  double processUs = 0.5;
  /// A copy into or out of a staging window (a call on unregistered buffers across processes, processes.hpp): its
  /// fixed cost (one copy node in the graph), and the fraction of the GPU memory's bandwidth it reaches reading and
  /// writing each byte.
  KernelCost stagingCopy{2.5, 0.8, 0, "prior"};
  /// Every kernel's costs, indexed by Kernel.
  std::array<KernelCosts, kKernelCount> kernels{};
  /// Where GPUs reach each other only through host memory (host_traffic.hpp): each way's costs, indexed by HostPath,
  /// its efficiency a fraction of the GPUs' PCIe links' rate; a kernel's fixed cost has no per-peer part here (no run
  /// of more than 2 ranks through host memory was measured).
  std::array<KernelCosts, kHostPathCount> hostPaths{};
  /// A step of a staged plan beyond the first (the barrier kernel's meeting of the ranks through their flags in host
  /// memory), in µs.
  double hostStepUs = 20;
  /// What each process beyond the first adds to a call through host memory where every GPU has its own process, in µs:
  /// one figure for every way, added once a call (processes.hpp). 0 for one process, and for a model written before it
  /// existed.
  double hostProcessUs = 0;
  /// The arena ring (arena_predict.hpp): each way's costs, indexed by ArenaWay, its efficiency a fraction of the link
  /// model's bandwidth as a kernel's; its fixed cost has the peers' and processes' parts a kernel's has.
  std::array<KernelCosts, kArenaWayCount> arenaWays{};
  /// What a slot of the arena ring costs a block beyond its bytes' time, in µs per slot of data the block moves (the
  /// fence that waits for the slot's stores to land and the flag's trip; a slot partly filled in proportion).
  double arenaSlotUs = 5;
  /// A call across nodes on MPI's staged path (net_staged.hpp): its fixed cost, in µs, beyond its pieces' copies and
  /// messages (the transport's start and end on its thread, the waits for the copies' and reductions' events).
  double netCallUs = 20;
  /// Cells of calls across nodes the fit had for netCallUs (0: the prior).
  int netCallCells = 0;
  /// Device memory bandwidth in GB/s by GPU name (the vendors' data sheets), for local copies and reductions.
  std::map<std::string, double> memoryGBps;
  /// For a GPU name not in memoryGBps.
  double defaultMemoryGBps = 2000;
  /// The link between CPU sockets, per direction, that PCIe peer traffic between sockets crosses (an assumption:
  /// such platforms rarely allow peer access at all).
  double socketLinkGBps = 20;
  /// Where the fitted values come from: the runs (file, commit, machine), and the fit's own error.
  nlohmann::json provenance = nlohmann::json::object();

  const KernelCosts& costs(Kernel kernel) const { return kernels[static_cast<std::size_t>(kernel)]; }
  KernelCosts& costs(Kernel kernel) { return kernels[static_cast<std::size_t>(kernel)]; }
  const KernelCosts& costs(HostPath path) const { return hostPaths[static_cast<std::size_t>(path)]; }
  KernelCosts& costs(HostPath path) { return hostPaths[static_cast<std::size_t>(path)]; }
  const KernelCosts& costs(ArenaWay way) const { return arenaWays[static_cast<std::size_t>(way)]; }
  KernelCosts& costs(ArenaWay way) { return arenaWays[static_cast<std::size_t>(way)]; }
  /// The costs of `kernel` serving `collective`: the collective's own where the model has them, else the kernel's.
  const KernelCost& cost(Kernel kernel, Collective collective) const;
  /// The same for a way through host memory.
  const KernelCost& cost(HostPath path, Collective collective) const;
  /// The same for a way of the arena ring.
  const KernelCost& cost(ArenaWay way, Collective collective) const;
  /// A call's fixed cost before its synchronized steps: `cost`'s launch and `ranks` - 1 peers' parts.
  double launchOf(const KernelCost& cost, int ranks) const { return cost.launchUs + peerUs * (ranks - 1); }
  /// memoryGBps for `gpuName`, or defaultMemoryGBps.
  double memoryBandwidthOf(const std::string& gpuName) const;
};

/// The model as a "peerlink.plan_model" JSON document (version 1).
nlohmann::json costModelToJson(const CostModel& model);
/// Reads one back; throws Error(InvalidInput) naming `origin` and the first problem (wrong schema, an unknown
/// kernel, a missing field, a value that is not a positive finite number or an efficiency above 1.5). A document
/// without "peer_us" (written before the model had a per-peer cost) reads as 0: its launch costs are whole; one
/// without "process_us" as 0 and without "staging_copy" with the copy's priors (it predicts one process); one without
/// "host_paths" and "host_step_us" (written before the model covered host memory) with those priors, one without
/// "host_process_us" as 0 (calls through host memory cost the same in any number of processes), one without
/// "arena_ways" and "arena_slot_us" (written before the model covered the arena ring) with those, and one without
/// "net_call_us" (written before the model covered MPI's staged path) with its prior.
CostModel costModelFromJson(const nlohmann::json& document, const std::string& origin);
/// Reads a model file; throws Error(InvalidInput) when it is missing or malformed.
CostModel loadCostModel(const std::string& path);
/// The model built into the binary (src/plan/model.json).
const CostModel& builtInCostModel();

}  // namespace peerlink::plan
