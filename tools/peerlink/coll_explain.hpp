// `peerlink coll --explain`: what the communicator would run at each size of a sweep, and why, from the
// topology and the PEERLINK_* settings alone (no GPU needed with --topo-file): algorithm, kernel, reasons.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coll/comm_launch_plan.hpp"
#include "coll/cross_process_way.hpp"
#include "peerlink/collective_choice.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::cli {

struct CollExplainRow {
  std::size_t size = 0;       ///< nccl-tests' size of the row
  std::size_t callBytes = 0;  ///< the count the call passes, in bytes (what the choice is made on)
  CollectiveChoice outOfPlace;
  CollectiveChoice inPlace;
  coll::StagedCallShape staged;  ///< what runs instead where some pair is not direct (CollExplain::stagedPlans)
  coll::CrossProcessWay eager = coll::CrossProcessWay::OwnBuffers;  ///< across processes (CollExplain::processes)
  coll::CrossProcessWay graph = coll::CrossProcessWay::OwnBuffers;  ///< the same call captured in a CUDA graph
};

struct CollExplain {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::F32;
  std::vector<int> devices;  ///< CUDA ordinals of the ranks
  CollectiveFabric fabric;
  ChoiceSettings settings;
  ChoiceResources resources;
  std::vector<CollExplainRow> rows;
  std::string pairTable;     ///< each GPU pair's way and why (coll/pair_transport.hpp's formatPairTransport)
  nlohmann::json pairsJson;  ///< the same as JSON: {"verdicts": line, "pairs": [...]}
  bool stagedPlans = false;  ///< some pair of ranks is not direct: a communicator runs every call as a staged plan
  int processes = 0;         ///< 0: the ranks in one process; else one process a rank (coll --procs)
  bool registered = false;   ///< across processes: the buffers registered as windows (coll --register)
  coll::CrossProcessSettings crossProcess;
};

/// The choices for `sizes` over `devices` of `topology` under `params`, for 16-byte aligned buffers, and each GPU
/// pair's way (peer access, relay or host staging) from the topology, the settings and the doctor's cached
/// verdicts (unless PEERLINK_VERIFY=off). With `processes` (one a rank, as `coll --procs` starts them), also the
/// way each call goes across them, eager and captured, for buffers `registered` as windows or not.
CollExplain explainColl(Collective collective, DataType type, const std::vector<std::size_t>& sizes,
                        const Topology& topology, const std::vector<int>& devices, const Params& params,
                        int processes = 0, bool registered = false);

std::string formatCollExplain(const CollExplain& explain);
/// "PEERLINK_ALGO=AUTO PEERLINK_PROTO=AUTO PEERLINK_COLL_PUSH=AUTO PEERLINK_COLL_CE=AUTO": the settings a choice read.
std::string choiceSettingsLine(const ChoiceSettings& settings);
/// The same as a JSON object, a key per variable.
nlohmann::json choiceSettingsJson(const ChoiceSettings& settings);
nlohmann::json collExplainToJson(const CollExplain& explain);

}  // namespace peerlink::cli
