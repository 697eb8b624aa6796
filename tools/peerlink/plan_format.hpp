// `peerlink plan` output: the predicted sweep in `peerlink coll`'s table shape (size, count, type, then time,
// algbw and busbw out of place and in place) with a row per algorithm, the chosen one marked, and the bottleneck;
// the check of the model against measured runs; the fitted model's summary. Text for people, JSON for programs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peerlink/collective_choice.hpp"
#include "plan/accuracy.hpp"
#include "plan/hierarchy.hpp"
#include "plan/predict.hpp"

namespace peerlink::cli {

/// One size of the sweep.
struct PlanRow {
  std::size_t size = 0;                                   ///< nccl-tests' size of the row
  std::size_t count = 0;                                  ///< the call's count
  std::size_t bandwidthBytes = 0;                         ///< what algbw divides by the time (nccl-tests')
  std::vector<plan::Candidate> candidates;                ///< within one node
  std::vector<plan::HierarchicalPrediction> acrossNodes;  ///< with --nodes >= 2
};

/// A predicted sweep and what it was predicted for.
struct PlanSweep {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::F32;
  int root = 0;
  std::string topology;  ///< where the topology came from ("discovered", a file)
  std::string gpuName;   ///< the first GPU's
  int ranksPerNode = 0;
  bool nvlinkMesh = false;
  bool throughHost = false;  ///< some pair of GPUs reaches the other only through host memory
  ChoiceSettings settings;
  plan::Network network;
  plan::ProcessMode mode;   ///< how the ranks' calls are made
  double busFactor = 1;     ///< nccl-tests' for every rank of every node
  std::string modelOrigin;  ///< "built in" or the --model file
  nlohmann::json modelProvenance = nlohmann::json::object();
  std::vector<PlanRow> rows;
};

std::string formatPlanText(const PlanSweep& sweep);
/// Schema "peerlink.plan" version 1; the caller adds "generated_by".
nlohmann::json planToJson(const PlanSweep& sweep);

/// Every machine's cells: the summary (cells, median absolute error, the worst cell), then per collective each
/// size with the kernel that ran, measured and predicted times and the error, out of place and in place.
std::string formatCheckText(const std::vector<plan::MachineAccuracy>& machines, const std::string& modelOrigin);
/// Schema "peerlink.plan_check" version 1.
nlohmann::json checkToJson(const std::vector<plan::MachineAccuracy>& machines, const std::string& modelOrigin);

/// The kernel of a prediction, or its way through host memory ("host_ring").
std::string kernelLabel(const plan::Prediction& prediction);
/// What ran a checked cell: its way through host memory where it went so, else the kernel the run recorded.
std::string ranName(const plan::CellCheck& check);

/// One line per kernel of a fitted model: launch cost, efficiency, cells, source; the step cost first.
std::string formatModelText(const plan::CostModel& model);

}  // namespace peerlink::cli
