// `peerlink coll --explain` (coll_explain.hpp).
#include "coll_explain.hpp"

#include <fmt/format.h>

#include "coll/pair_transport.hpp"
#include "coll/peer_verdicts.hpp"
#include "coll/plan_staged.hpp"
#include "coll/rank_transport.hpp"
#include "coll_bench/coll_bench.hpp"

namespace peerlink::cli {
namespace {

CollectiveChoice choiceFor(const CollExplain& explain, std::size_t bytes, Fact inPlace, Fact aligned = Fact::Yes) {
  CallShape call;
  call.collective = explain.collective;
  call.bytes = bytes;
  call.nranks = static_cast<int>(explain.devices.size());
  call.inPlace = inPlace;
  call.aligned = aligned;
  return chooseCollective(call, explain.fabric, explain.resources, explain.settings);
}

nlohmann::json choiceToJson(const CollectiveChoice& choice) {
  return {{"algorithm", algorithmName(choice.algorithm)},
          {"kernel", kernelName(choice.kernel)},
          {"protocol", protocolName(choice.protocol)},
          {"engine", engineName(choice.engine)},
          {"flow", dataFlowName(choice.flow)},
          {"reason", reasonText(choice)},
          {"reasons", choice.reasons}};
}

nlohmann::json pairTransportToJson(const coll::PairTransport& transport) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const coll::PairChoice& choice : transport.pairs) {
    pairs.push_back({{"src_rank", choice.srcRank},
                     {"dst_rank", choice.dstRank},
                     {"src_gpu", choice.srcGpu},
                     {"dst_gpu", choice.dstGpu},
                     {"link", choice.link},
                     {"way", coll::pairWayName(choice.way)},
                     {"mode", routeModeName(choice.mode)},
                     {"relay_gpu", choice.relayGpu >= 0 ? nlohmann::json(choice.relayGpu) : nlohmann::json()},
                     {"verdict", choice.verdict ? nlohmann::json(verdictName(*choice.verdict)) : nlohmann::json()},
                     {"why", choice.why}});
  }
  return {{"verdicts", transport.verdicts}, {"pairs", pairs}};
}

// The doctor's verdicts a communicator of `devices` in one process would use: the ones cached for this boot (none
// for a topology file of another machine). --explain probes nothing: under PEERLINK_VERIFY=quick it reads the
// cache as `cached` does.
coll::PeerVerdicts cachedVerdictsFor(const Topology& topology, const std::vector<int>& devices, const Params& params) {
  Params cacheOnly = params;
  if (coll::verifyPolicy(params) == coll::VerifyPolicy::Quick) cacheOnly.set("PEERLINK_VERIFY", "cached");
  return coll::gatherPeerVerdicts(topology, devices, cacheOnly);
}

// "LL lines through host memory (one kernel a rank)" or "plan: 37 steps, 32 chunks of 4096 KiB per block".
std::string describeStaged(const coll::StagedCallShape& shape) {
  if (shape.lines) return "LL lines through host memory (one kernel a rank, no step)";
  if (shape.hostRing) return "host ring: slots through host memory (one kernel a rank, no step)";
  std::string text = fmt::format("plan: {} steps, ", shape.steps);
  text += shape.chunks > 1 ? fmt::format("{} chunks of {} KiB per block", shape.chunks, shape.chunkBytes >> 10)
                           : std::string("each block one chunk");
  if (shape.segments > 1) text += fmt::format(", in {} segments", shape.segments);
  return text;
}

nlohmann::json stagedToJson(const coll::StagedCallShape& shape) {
  if (shape.lines) return {{"how", "ll_lines"}};
  if (shape.hostRing) return {{"how", "host_ring"}};
  return {{"how", "plan"},
          {"segments", shape.segments},
          {"steps", shape.steps},
          {"chunks", shape.chunks},
          {"chunk_bytes", shape.chunks > 1 ? shape.chunkBytes : 0}};
}

// The row's way across the processes, under its line: "    across processes: <eager>[; in a graph: <graph>]".
std::string describeWays(const CollExplain& explain, const CollExplainRow& row) {
  const auto say = [&](coll::CrossProcessWay way) {
    return coll::describeCrossProcessWay(way, explain.crossProcess, explain.collective, row.callBytes,
                                         static_cast<int>(explain.devices.size()));
  };
  std::string text = "      across processes: " + say(row.eager);
  if (row.graph != row.eager) text += "; in a graph: " + say(row.graph);
  return text + "\n";
}

nlohmann::json wayToJson(const CollExplain& explain, const CollExplainRow& row, coll::CrossProcessWay way) {
  return {{"way", coll::crossProcessWayName(way)},
          {"how", coll::describeCrossProcessWay(way, explain.crossProcess, explain.collective, row.callBytes,
                                                static_cast<int>(explain.devices.size()))}};
}

}  // namespace

std::string choiceSettingsLine(const ChoiceSettings& settings) {
  return fmt::format("PEERLINK_ALGO={} PEERLINK_PROTO={} PEERLINK_COLL_PUSH={} PEERLINK_COLL_CE={}",
                     algorithmSetting(settings.forced), protocolName(settings.protocol), pushModeName(settings.push),
                     copyEngineModeName(settings.copyEngine));
}

nlohmann::json choiceSettingsJson(const ChoiceSettings& settings) {
  return {{"PEERLINK_ALGO", algorithmSetting(settings.forced)},
          {"PEERLINK_PROTO", protocolName(settings.protocol)},
          {"PEERLINK_COLL_PUSH", pushModeName(settings.push)},
          {"PEERLINK_COLL_CE", copyEngineModeName(settings.copyEngine)}};
}

CollExplain explainColl(Collective collective, DataType type, const std::vector<std::size_t>& sizes,
                        const Topology& topology, const std::vector<int>& devices, const Params& params, int processes,
                        bool registered) {
  CollExplain explain;
  explain.processes = processes;
  explain.registered = registered;
  explain.collective = collective;
  explain.type = type;
  explain.devices = devices;
  explain.fabric = fabricOf(topology, devices);
  explain.settings = choiceSettingsFrom(params);
  explain.resources = communicatorResources(topology, devices, params);
  explain.crossProcess = coll::crossProcessSettingsFrom(params);
  explain.crossProcess.maxBlocks = explain.resources.maxBlocks;
  const int ranks = static_cast<int>(devices.size());
  for (const std::size_t size : sizes) {
    const coll::CollSizing sizing = coll::collSizing(collective, size, type, ranks);
    CollExplainRow row;
    row.size = sizing.bytes;
    row.callBytes = sizing.count * dataTypeSize(type);
    row.outOfPlace = choiceFor(explain, row.callBytes, Fact::No);
    row.inPlace = choiceFor(explain, row.callBytes, Fact::Yes);
    // Across processes every rank chooses without seeing the others' buffers (Communicator::describeChoice).
    const DataFlow flow = kernelInfo(choiceFor(explain, row.callBytes, Fact::Unknown, Fact::Unknown).kernel).flow;
    row.eager = coll::crossProcessWay(explain.crossProcess, collective, row.callBytes, ranks, flow, registered, false);
    row.graph = coll::crossProcessWay(explain.crossProcess, collective, row.callBytes, ranks, flow, registered, true);
    explain.rows.push_back(row);
  }
  const coll::PeerVerdicts verdicts = cachedVerdictsFor(topology, devices, params);
  const coll::PairTransport transport = coll::choosePairTransport(
      topology, devices, params, processes > 0 ? ProcessBoundary::CrossProcess : ProcessBoundary::SameProcess,
      &verdicts);
  std::vector<std::int64_t> rankProcess;  // one process a rank, or all in one
  for (int r = 0; r < ranks; ++r) rankProcess.push_back(processes > 0 ? r : 0);
  const coll::RankLinks links = coll::chooseRankTransport(topology, devices, params, &verdicts, rankProcess).links;
  explain.stagedPlans = coll::needsStagedPlans(links);
  if (explain.stagedPlans) {
    for (CollExplainRow& row : explain.rows) {
      row.staged = coll::stagedCallShape(collective, row.callBytes / dataTypeSize(type), type, links,
                                         coll::stagedChunkBytes(params),
                                         static_cast<std::size_t>(params.getInt("PEERLINK_COLL_HOST_RING")));
    }
  }
  explain.pairTable = coll::formatPairTransport(transport);
  explain.pairsJson = pairTransportToJson(transport);
  return explain;
}

std::string formatCollExplain(const CollExplain& explain) {
  std::string text = fmt::format(
      "# peerlink coll --explain: {}, {}, {} ranks{} ({}), {}\n", collectiveName(explain.collective),
      dataTypeName(explain.type), explain.devices.size(),
      explain.processes > 0 ? fmt::format(" in {} processes", explain.processes) : std::string(),
      explain.fabric.nvlinkMesh ? "an NVLink mesh" : "not an NVLink mesh", choiceSettingsLine(explain.settings));
  text +=
      "# Out of place (in place where it differs), for 16-byte aligned buffers: otherwise the rings and the push\n"
      "# reduction step aside for direct kernels, and the COLL log says so.\n";
  if (explain.processes > 0 && !explain.stagedPlans) {
    text += fmt::format(
        "# Across the processes, for buffers {}: the way each call goes, eager and in a CUDA graph\n"
        "# (PEERLINK_COLL_SHARE_BUFFERS={} PEERLINK_COLL_ARENA_RING={}).\n",
        explain.registered ? "registered as windows with every rank (--register)" : "not registered",
        coll::bufferSharingName(explain.crossProcess.sharing), coll::arenaRingModeName(explain.crossProcess.arenaRing));
  }
  if (explain.stagedPlans) {
    text +=
        "# Some pair is not direct (the table below): a communicator of these GPUs runs every call through host\n"
        "# memory, in LL lines, as the host ring or as a staged plan along the ring below (--json keeps the kernels'\n"
        "# choice for every pair direct).\n";
    text += fmt::format("# {:>10} {:>12}  {}\n", "size", "call bytes", "what runs");
    for (const CollExplainRow& row : explain.rows) {
      text += fmt::format("  {:>10} {:>12}  {}\n", row.size, row.callBytes, describeStaged(row.staged));
    }
    return text + explain.pairTable;
  }
  text += fmt::format("# {:>10} {:>12}  {:<9} {:<19} {}\n", "size", "call bytes", "algorithm", "kernel", "why");
  for (const CollExplainRow& row : explain.rows) {
    std::string why = reasonText(row.outOfPlace);
    if (row.inPlace.kernel != row.outOfPlace.kernel) {
      why += fmt::format(" [in place: {}, {}]", algorithmName(row.inPlace.algorithm), kernelName(row.inPlace.kernel));
    }
    text += fmt::format("  {:>10} {:>12}  {:<9} {:<19} {}\n", row.size, row.callBytes,
                        algorithmName(row.outOfPlace.algorithm), kernelName(row.outOfPlace.kernel), why);
    if (explain.processes > 0) text += describeWays(explain, row);
  }
  return text + explain.pairTable;
}

nlohmann::json collExplainToJson(const CollExplain& explain) {
  nlohmann::json document;
  document["schema"] = "peerlink.coll_explain";
  document["version"] = 5;
  document["collective"] = collectiveName(explain.collective);
  document["datatype"] = dataTypeName(explain.type);
  document["devices"] = explain.devices;
  document["nvlink_mesh"] = explain.fabric.nvlinkMesh;
  document["settings"] = choiceSettingsJson(explain.settings);
  nlohmann::json rows = nlohmann::json::array();
  for (const CollExplainRow& row : explain.rows) {
    nlohmann::json entry = {{"size", row.size},
                            {"call_bytes", row.callBytes},
                            {"out_of_place", choiceToJson(row.outOfPlace)},
                            {"in_place", choiceToJson(row.inPlace)},
                            {"staged", nullptr}};
    if (explain.stagedPlans) entry["staged"] = stagedToJson(row.staged);
    entry["across_processes"] = nullptr;
    if (explain.processes > 0 && !explain.stagedPlans) {
      entry["across_processes"] = {{"eager", wayToJson(explain, row, row.eager)},
                                   {"graph", wayToJson(explain, row, row.graph)}};
    }
    rows.push_back(std::move(entry));
  }
  document["rows"] = rows;
  document["pair_ways"] = explain.pairsJson;
  document["staged_plans"] = explain.stagedPlans;
  document["processes"] = explain.processes;
  document["registered"] = explain.registered;
  return document;
}

}  // namespace peerlink::cli
