// `peerlink coll --explain` (coll_explain.hpp).
#include "coll_explain.hpp"

#include <cctype>

#include <fmt/format.h>

#include "coll/algorithm_select.hpp"
#include "coll_bench/coll_bench.hpp"

namespace peerlink::cli {
namespace {

// PEERLINK_ALGO's spelling: "AUTO", "ONE_SHOT", "TWO_SHOT", "RING".
std::string algorithmSetting(Algorithm algorithm) {
  std::string name = algorithmName(algorithm);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::string settingsLine(const coll::ChoiceSettings& settings) {
  return fmt::format("PEERLINK_ALGO={} PEERLINK_PROTO={} PEERLINK_COLL_PUSH={} PEERLINK_COLL_CE={}",
                     algorithmSetting(settings.forced), coll::protocolName(settings.protocol),
                     coll::pushModeName(settings.push), coll::copyEngineModeName(settings.copyEngine));
}

}  // namespace

CollExplain explainColl(Collective collective, DataType type, const std::vector<std::size_t>& sizes,
                        const Topology& topology, const std::vector<int>& devices,
                        const coll::ChoiceSettings& settings) {
  CollExplain explain;
  explain.collective = collective;
  explain.type = type;
  explain.devices = devices;
  explain.nvlinkMesh = coll::isNvlinkMesh(topology, devices);
  explain.settings = settings;
  const int ranks = static_cast<int>(devices.size());
  for (const std::size_t size : sizes) {
    const coll::CollSizing sizing = coll::collSizing(collective, size, type, ranks);
    CollExplainRow row;
    row.size = sizing.bytes;
    row.callBytes = sizing.count * dataTypeSize(type);
    row.outOfPlace = coll::chooseCallKernel(collective, row.callBytes, false, topology, devices, settings);
    row.inPlace = coll::chooseCallKernel(collective, row.callBytes, true, topology, devices, settings);
    explain.rows.push_back(row);
  }
  return explain;
}

std::string formatCollExplain(const CollExplain& explain) {
  std::string text =
      fmt::format("# peerlink coll --explain: {}, {}, {} ranks ({}), {}\n", collectiveName(explain.collective),
                  dataTypeName(explain.type), explain.devices.size(),
                  explain.nvlinkMesh ? "an NVLink mesh" : "not an NVLink mesh", settingsLine(explain.settings));
  text +=
      "# Out of place (in place where it differs). Assumes 16-byte aligned buffers: otherwise the rings and the\n"
      "# push reduction step aside for direct kernels, and the COLL log says so.\n";
  text += fmt::format("# {:>10} {:>12}  {:<9} {:<19} {}\n", "size", "call bytes", "algorithm", "kernel", "why");
  for (const CollExplainRow& row : explain.rows) {
    std::string why = row.outOfPlace.reason;
    if (row.inPlace.kernel != row.outOfPlace.kernel) {
      why += fmt::format(" [in place: {}, {}]", algorithmName(row.inPlace.algorithm),
                         coll::kernelName(row.inPlace.kernel));
    }
    text += fmt::format("  {:>10} {:>12}  {:<9} {:<19} {}\n", row.size, row.callBytes,
                        algorithmName(row.outOfPlace.algorithm), coll::kernelName(row.outOfPlace.kernel), why);
  }
  return text;
}

nlohmann::json collExplainToJson(const CollExplain& explain) {
  nlohmann::json document;
  document["schema"] = "peerlink.coll_explain";
  document["version"] = 1;
  document["collective"] = collectiveName(explain.collective);
  document["datatype"] = dataTypeName(explain.type);
  document["devices"] = explain.devices;
  document["nvlink_mesh"] = explain.nvlinkMesh;
  document["settings"] = {{"PEERLINK_ALGO", algorithmSetting(explain.settings.forced)},
                          {"PEERLINK_PROTO", coll::protocolName(explain.settings.protocol)},
                          {"PEERLINK_COLL_PUSH", coll::pushModeName(explain.settings.push)},
                          {"PEERLINK_COLL_CE", coll::copyEngineModeName(explain.settings.copyEngine)}};
  nlohmann::json rows = nlohmann::json::array();
  for (const CollExplainRow& row : explain.rows) {
    const auto choice = [](const coll::KernelChoice& c) {
      return nlohmann::json{
          {"algorithm", algorithmName(c.algorithm)}, {"kernel", coll::kernelName(c.kernel)}, {"reason", c.reason}};
    };
    rows.push_back({{"size", row.size},
                    {"call_bytes", row.callBytes},
                    {"out_of_place", choice(row.outOfPlace)},
                    {"in_place", choice(row.inPlace)}});
  }
  document["rows"] = rows;
  return document;
}

}  // namespace peerlink::cli
