// detectLaunch and chooseLaunchRendezvous: pure functions over a launcher's environment variables.
#include <algorithm>
#include <cctype>
#include <climits>

#include <fmt/format.h>

#include "bootstrap/tcp.hpp"
#include "core/text.hpp"
#include "peerlink/launch.hpp"

namespace peerlink {
namespace {

using Variables = std::map<std::string, std::string>;

const std::string* lookup(const Variables& variables, const std::string& name) {
  const auto found = variables.find(name);
  return found == variables.end() ? nullptr : &found->second;
}

// The first of `names` that is set, or nullptr.
const std::string* firstOf(const Variables& variables, std::initializer_list<const char*> names,
                           const char** which = nullptr) {
  for (const char* name : names) {
    if (const std::string* value = lookup(variables, name)) {
      if (which != nullptr) *which = name;
      return value;
    }
  }
  return nullptr;
}

int parseCount(const std::string& name, const std::string& raw, int minimum) {
  const std::string text = trimSpace(raw);
  const bool digits = !text.empty() && text.size() <= 9 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  const int value = digits ? std::stoi(text) : -1;
  if (!digits || value < minimum) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}='{}' is not valid: expected an integer of at least {}", name, raw, minimum));
  }
  return value;
}

std::optional<int> optionalCount(const Variables& variables, std::initializer_list<const char*> names, int minimum) {
  const char* name = nullptr;
  const std::string* value = firstOf(variables, names, &name);
  if (value == nullptr) return std::nullopt;
  return parseCount(name, *value, minimum);
}

// A launcher's rank and size, which must come together; std::nullopt when neither is set.
bool readRankAndSize(const Variables& variables, const char* rankName, std::initializer_list<const char*> sizeNames,
                     LaunchEnvironment& launch) {
  const std::string* rank = lookup(variables, rankName);
  const char* sizeName = nullptr;
  const std::string* size = firstOf(variables, sizeNames, &sizeName);
  if (rank == nullptr && size == nullptr) return false;
  if (rank == nullptr || size == nullptr) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} is set but {} is not: a launcher sets both", rank != nullptr ? rankName : sizeName,
                            rank != nullptr ? *sizeNames.begin() : rankName));
  }
  launch.rank = parseCount(rankName, *rank, 0);
  launch.size = parseCount(sizeName, *size, 1);
  if (launch.rank >= launch.size) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}={} is outside {}={}", rankName, launch.rank, sizeName, launch.size));
  }
  launch.source = fmt::format("{}={}", rankName, launch.rank);
  return true;
}

void readLocal(const Variables& variables, std::initializer_list<const char*> rankNames,
               std::initializer_list<const char*> sizeNames, LaunchEnvironment& launch) {
  launch.localRank = optionalCount(variables, rankNames, 0);
  launch.localSize = optionalCount(variables, sizeNames, 1);
  if (launch.localRank && launch.localSize && *launch.localRank >= *launch.localSize) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("local rank {} is outside the local size {} ({}, {})", *launch.localRank, *launch.localSize,
                            *rankNames.begin(), *sizeNames.begin()));
  }
  if (launch.localSize && *launch.localSize > launch.size) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} ranks on this machine but {} in the world ({})",
                                                     *launch.localSize, launch.size, *sizeNames.begin()));
  }
}

// Slurm's tasks per node, "2(x3),1": node `node`'s count.
std::optional<int> slurmTasksOnNode(const std::string& name, const std::string& text, int node) {
  int first = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    int tasks = 0;
    int repeat = 1;
    const std::size_t open = part.find("(x");
    if (open == std::string::npos) {
      tasks = parseCount(name, part, 1);
    } else {
      if (part.back() != ')') throw Error(ErrorCode::InvalidUsage, fmt::format("{}='{}' is not valid", name, text));
      tasks = parseCount(name, part.substr(0, open), 1);
      repeat = parseCount(name, part.substr(open + 2, part.size() - open - 3), 1);
    }
    if (node < first + repeat) return tasks;
    first += repeat;
    at = end + 1;
  }
  return std::nullopt;
}

std::string joinKey(std::initializer_list<const std::string*> parts, const char* prefix) {
  std::string key = prefix;
  bool any = false;
  for (const std::string* part : parts) {
    key += ":";
    if (part != nullptr) {
      key += *part;
      any = true;
    }
  }
  return any ? key : "";
}

}  // namespace

const char* launcherName(Launcher launcher) noexcept {
  switch (launcher) {
    case Launcher::None: return "none";
    case Launcher::Torchrun: return "torchrun";
    case Launcher::OpenMpi: return "Open MPI";
    case Launcher::Pmi: return "PMI";
    case Launcher::Slurm: return "Slurm";
  }
  return "unknown";
}

const std::vector<std::string>& launchVariableNames() {
  static const std::vector<std::string> names = {"RANK",
                                                 "WORLD_SIZE",
                                                 "LOCAL_RANK",
                                                 "LOCAL_WORLD_SIZE",
                                                 "MASTER_ADDR",
                                                 "MASTER_PORT",
                                                 "TORCHELASTIC_RUN_ID",
                                                 "TORCHELASTIC_RESTART_COUNT",
                                                 "TORCHELASTIC_USE_AGENT_STORE",
                                                 "OMPI_COMM_WORLD_RANK",
                                                 "OMPI_COMM_WORLD_SIZE",
                                                 "OMPI_COMM_WORLD_LOCAL_RANK",
                                                 "OMPI_COMM_WORLD_LOCAL_SIZE",
                                                 "PMIX_NAMESPACE",
                                                 "OMPI_MCA_ess_base_jobid",
                                                 "PMI_RANK",
                                                 "PMI_SIZE",
                                                 "MPI_LOCALRANKID",
                                                 "MPI_LOCALNRANKS",
                                                 "PMI_LOCAL_RANK",
                                                 "PMI_LOCAL_SIZE",
                                                 "PALS_APID",
                                                 "SLURM_PROCID",
                                                 "SLURM_NTASKS",
                                                 "SLURM_STEP_NUM_TASKS",
                                                 "SLURM_LOCALID",
                                                 "SLURM_NODEID",
                                                 "SLURM_STEP_TASKS_PER_NODE",
                                                 "SLURM_TASKS_PER_NODE",
                                                 "SLURM_JOB_ID",
                                                 "SLURM_STEP_ID",
                                                 "SLURM_STEPID"};
  return names;
}

LaunchEnvironment detectLaunch(const Variables& variables) {
  LaunchEnvironment launch;
  if (const std::string* addr = lookup(variables, "MASTER_ADDR")) launch.masterAddr = trimSpace(*addr);
  if (const std::string* port = lookup(variables, "MASTER_PORT")) {
    const int value = parseCount("MASTER_PORT", *port, 1);
    if (value > 65535) throw Error(ErrorCode::InvalidUsage, fmt::format("MASTER_PORT={} is not a port", value));
    launch.masterPort = static_cast<std::uint16_t>(value);
  }
  if (const std::string* store = lookup(variables, "TORCHELASTIC_USE_AGENT_STORE")) {
    std::string value = trimSpace(*store);
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
    launch.masterPortTaken = value == "true" || value == "1";
  }

  if (readRankAndSize(variables, "RANK", {"WORLD_SIZE"}, launch)) {
    launch.launcher = Launcher::Torchrun;
    readLocal(variables, {"LOCAL_RANK"}, {"LOCAL_WORLD_SIZE"}, launch);
    launch.jobKey = joinKey({lookup(variables, "TORCHELASTIC_RUN_ID"), lookup(variables, "MASTER_ADDR"),
                             lookup(variables, "MASTER_PORT"), lookup(variables, "TORCHELASTIC_RESTART_COUNT")},
                            "torchrun");
  } else if (readRankAndSize(variables, "OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_SIZE"}, launch)) {
    launch.launcher = Launcher::OpenMpi;
    readLocal(variables, {"OMPI_COMM_WORLD_LOCAL_RANK"}, {"OMPI_COMM_WORLD_LOCAL_SIZE"}, launch);
    if (const std::string* job = firstOf(variables, {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})) {
      launch.jobKey = "ompi:" + *job;
    }
  } else if (readRankAndSize(variables, "PMI_RANK", {"PMI_SIZE"}, launch)) {
    launch.launcher = Launcher::Pmi;
    readLocal(variables, {"MPI_LOCALRANKID", "PMI_LOCAL_RANK"}, {"MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"}, launch);
    if (const std::string* job = firstOf(variables, {"PMIX_NAMESPACE", "PALS_APID"})) launch.jobKey = "pmi:" + *job;
  } else if (firstOf(variables, {"SLURM_STEP_ID", "SLURM_STEPID"}) != nullptr &&
             readRankAndSize(variables, "SLURM_PROCID", {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, launch)) {
    launch.launcher = Launcher::Slurm;
    launch.localRank = optionalCount(variables, {"SLURM_LOCALID"}, 0);
    const char* perNodeName = nullptr;
    const std::string* perNode =
        firstOf(variables, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}, &perNodeName);
    const std::optional<int> node = optionalCount(variables, {"SLURM_NODEID"}, 0);
    if (perNode != nullptr && node) launch.localSize = slurmTasksOnNode(perNodeName, *perNode, *node);
    if (launch.localRank && launch.localSize && *launch.localRank >= *launch.localSize) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("SLURM_LOCALID={} is outside this node's {} tasks ({}={})",
                                                       *launch.localRank, *launch.localSize, perNodeName, *perNode));
    }
    launch.jobKey =
        joinKey({lookup(variables, "SLURM_JOB_ID"), firstOf(variables, {"SLURM_STEP_ID", "SLURM_STEPID"})}, "slurm");
  }
  return launch;
}

LaunchEnvironment detectLaunchFromEnvironment() {
  return detectLaunch(readForeignEnvironment(launchVariableNames()));
}

LaunchRendezvous chooseLaunchRendezvous(const LaunchEnvironment& launch, const std::string& bootstrapAddr) {
  LaunchRendezvous choice;
  if (!bootstrapAddr.empty()) {
    const bootstrap::HostPort parts = bootstrap::splitHostPort(bootstrapAddr, "PEERLINK_BOOTSTRAP_ADDR");
    if (parts.port) {
      choice.kind = LaunchRendezvous::Kind::Address;
      choice.address = bootstrapAddr;
      choice.reason = "PEERLINK_BOOTSTRAP_ADDR names the root's address";
      return choice;
    }
  }
  if (launch.localSize && *launch.localSize == launch.size) {
    choice.kind = LaunchRendezvous::Kind::File;
    choice.reason = fmt::format("all {} ranks are on this machine ({})", launch.size, launcherName(launch.launcher));
    return choice;
  }
  if (!launch.masterAddr.empty() && launch.masterPort) {
    // torchrun's agent serves its store on MASTER_PORT itself; the next port is the convention here.
    const int port = *launch.masterPort + (launch.masterPortTaken ? 1 : 0);
    if (port > 65535) {
      throw Error(ErrorCode::InvalidUsage,
                  "MASTER_PORT=65535 is held by torchrun's agent and there is no next port: "
                  "set PEERLINK_BOOTSTRAP_ADDR=host:port");
    }
    const bool v6 = launch.masterAddr.find(':') != std::string::npos && launch.masterAddr.front() != '[';
    choice.kind = LaunchRendezvous::Kind::Address;
    choice.address =
        v6 ? fmt::format("[{}]:{}", launch.masterAddr, port) : fmt::format("{}:{}", launch.masterAddr, port);
    choice.reason = launch.masterPortTaken ? "MASTER_ADDR with MASTER_PORT + 1 (torchrun's agent holds MASTER_PORT)"
                                           : "MASTER_ADDR and MASTER_PORT";
    return choice;
  }
  throw Error(ErrorCode::InvalidUsage,
              fmt::format("{} started {} ranks{} and gave no rendezvous address: set MASTER_ADDR and MASTER_PORT, or "
                          "PEERLINK_BOOTSTRAP_ADDR=host:port (an address of the machine of rank 0)",
                          launcherName(launch.launcher), launch.size,
                          launch.localSize ? fmt::format(", {} on this machine", *launch.localSize)
                                           : std::string(" (how many on this machine it does not say)")));
}

}  // namespace peerlink
