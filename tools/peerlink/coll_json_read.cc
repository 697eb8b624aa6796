#include "coll_json_read.hpp"

#include <fmt/format.h>

#include "peerlink/error.hpp"
#include "saved_json_read.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;
using nlohmann::json;

template <typename T>
T parsed(const std::optional<T>& value, const std::string& what, const std::string& text) {
  if (!value) throw Error(ErrorCode::InvalidInput, fmt::format("unknown {} \"{}\"", what, text));
  return *value;
}

CollMeasurement measurementFromJson(const json& entry) {
  CollMeasurement m;
  const std::string status = entry.at("status").get<std::string>();
  if (status == "ok") {
    m.status = CollMeasurement::Status::Ok;
    m.timeUs = entry.at("time_us").get<double>();
    m.algbwGBps = entry.at("algbw_gbps").get<double>();
    m.busbwGBps = entry.at("busbw_gbps").get<double>();
    if (entry.contains("iteration_us")) m.iterationUs = entry.at("iteration_us").get<std::vector<double>>();
  } else if (status == "failed") {
    m.status = CollMeasurement::Status::Failed;
  } else if (status != "not_run") {
    throw Error(ErrorCode::InvalidInput, fmt::format("unknown measurement status \"{}\"", status));
  }
  m.reason = entry.value("reason", std::string());
  m.wrong = entry.contains("wrong") && !entry.at("wrong").is_null() ? entry.at("wrong").get<std::int64_t>() : -1;
  return m;
}

coll::CollBenchOptions optionsFromJson(const json& entry) {
  coll::CollBenchOptions o;
  const std::string collective = entry.at("collective").get<std::string>();
  const std::string type = entry.at("datatype").get<std::string>();
  const std::string op = entry.at("op").get<std::string>();
  o.collective = parsed(parseCollective(collective), "collective", collective);
  o.type = parsed(parseDataType(type), "datatype", type);
  o.op = parsed(parseReduceOp(op), "op", op);
  o.root = entry.at("root").get<int>();
  o.sizes = entry.at("sizes").get<std::vector<std::size_t>>();
  o.iterations = entry.at("iterations").get<int>();
  o.warmup = entry.at("warmup").get<int>();
  o.check = entry.at("check").get<bool>();
  o.gpus = entry.value("gpus", 0);
  o.peerlink = entry.value("peerlink", true);
  o.nccl = entry.value("nccl", true);
  o.capture = entry.value("capture", std::string("joined")) == "per-rank" ? coll::GraphCapture::PerRank
                                                                          : coll::GraphCapture::Joined;
  o.iterationTimes = entry.value("iteration_times", false);
  return o;
}

}  // namespace

SavedColl collFromJson(const json& document, const std::string& origin) {
  SavedColl saved;
  coll::CollRun& run = saved.run;
  saved.generatedBy = readSavedRun(document, "coll", origin, [&] {
    if (document.value("version", 0) != 1) {
      throw Error(ErrorCode::InvalidInput, fmt::format("unsupported version {}", document.value("version", 0)));
    }
    run.options = optionsFromJson(document.at("options"));
    run.ranks = document.at("ranks").get<int>();
    run.devices = document.at("devices").get<std::vector<int>>();
    run.deviceNames = document.value("device_names", std::vector<std::string>());
    run.deviceBusIds = document.value("device_bus_ids", std::vector<std::string>());
    const json& nccl = document.at("nccl");
    run.nccl.loaded = nccl.at("loaded").get<bool>();
    run.nccl.path = nccl.value("path", std::string());
    run.nccl.version = nccl.value("version", std::string());
    run.nccl.versionCode = nccl.value("version_code", 0);
    run.nccl.reason = nccl.value("reason", std::string());
    run.nccl.nvls = nccl.value("nvls", std::string());
    run.nccl.searched = nccl.value("searched", std::vector<std::string>());
    run.nccl.initMilliseconds = nccl.value("init_ms", 0.0);  // files before round 49 have neither time
    run.creationMilliseconds = document.value("creation_ms", 0.0);
    for (const json& entry : document.at("configurations")) {
      const std::string name = entry.at("name").get<std::string>();
      const CollConfig config = parsed(coll::parseCollConfig(name), "configuration", name);
      run.configs[static_cast<int>(config)] = {entry.at("available").get<bool>(), entry.value("reason", std::string())};
    }
    for (const json& entry : document.at("rows")) {
      coll::CollRow row;
      row.bytes = entry.at("bytes").get<std::size_t>();
      row.count = entry.at("count").get<std::size_t>();
      row.peerlinkChoice = entry.value("peerlink_algorithm", std::string());
      for (const char* side : {"out_of_place", "in_place"}) {
        auto& measurements = std::string(side) == "in_place" ? row.inPlace : row.outOfPlace;
        for (CollConfig config : coll::kCollConfigs) {
          measurements[static_cast<int>(config)] = measurementFromJson(entry.at(side).at(coll::collConfigName(config)));
        }
      }
      run.rows.push_back(row);
    }
  });
  return saved;
}

SavedColl loadCollFile(const std::string& path) {
  return collFromJson(readJsonFile(path), path);
}

}  // namespace peerlink::cli
