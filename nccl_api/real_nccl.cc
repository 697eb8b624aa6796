#include "nccl_api/real_nccl.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "coll_bench/reference_nccl.hpp"
#include "nccl_api/config.hpp"
#include "nccl_api/result.hpp"

namespace peerlink::nccl {
namespace {

template <typename Function>
bool bind(void* handle, const char* name, Function& target) {
  target = reinterpret_cast<Function>(::dlsym(handle, name));
  return target != nullptr;
}

// Binds every function; the names of the required ones that are missing (NCCL before 2.28 lacks some optional
// ones: window registration, the device API, shrink, revoke).
std::vector<std::string> bindAll(void* handle, RealNccl& api) {
  const std::pair<const char*, bool> required[] = {
      {"ncclGetVersion", bind(handle, "ncclGetVersion", api.getVersion)},
      {"ncclGetUniqueId", bind(handle, "ncclGetUniqueId", api.getUniqueId)},
      {"ncclGetErrorString", bind(handle, "ncclGetErrorString", api.getErrorString)},
      {"ncclCommInitRank", bind(handle, "ncclCommInitRank", api.commInitRank)},
      {"ncclCommInitRankConfig", bind(handle, "ncclCommInitRankConfig", api.commInitRankConfig)},
      {"ncclCommInitAll", bind(handle, "ncclCommInitAll", api.commInitAll)},
      {"ncclCommFinalize", bind(handle, "ncclCommFinalize", api.commFinalize)},
      {"ncclCommDestroy", bind(handle, "ncclCommDestroy", api.commDestroy)},
      {"ncclCommAbort", bind(handle, "ncclCommAbort", api.commAbort)},
      {"ncclCommSplit", bind(handle, "ncclCommSplit", api.commSplit)},
      {"ncclCommGetAsyncError", bind(handle, "ncclCommGetAsyncError", api.commGetAsyncError)},
      {"ncclCommCount", bind(handle, "ncclCommCount", api.commCount)},
      {"ncclCommCuDevice", bind(handle, "ncclCommCuDevice", api.commCuDevice)},
      {"ncclCommUserRank", bind(handle, "ncclCommUserRank", api.commUserRank)},
      {"ncclRedOpCreatePreMulSum", bind(handle, "ncclRedOpCreatePreMulSum", api.redOpCreatePreMulSum)},
      {"ncclRedOpDestroy", bind(handle, "ncclRedOpDestroy", api.redOpDestroy)},
      {"ncclAllReduce", bind(handle, "ncclAllReduce", api.allReduce)},
      {"ncclBroadcast", bind(handle, "ncclBroadcast", api.broadcast)},
      {"ncclBcast", bind(handle, "ncclBcast", api.bcast)},
      {"ncclReduce", bind(handle, "ncclReduce", api.reduce)},
      {"ncclAllGather", bind(handle, "ncclAllGather", api.allGather)},
      {"ncclReduceScatter", bind(handle, "ncclReduceScatter", api.reduceScatter)},
      {"ncclSend", bind(handle, "ncclSend", api.send)},
      {"ncclRecv", bind(handle, "ncclRecv", api.recv)},
      {"ncclGroupStart", bind(handle, "ncclGroupStart", api.groupStart)},
      {"ncclGroupEnd", bind(handle, "ncclGroupEnd", api.groupEnd)},
  };
  bind(handle, "ncclGetLastError", api.getLastError);
  bind(handle, "ncclResetDebugInit", api.resetDebugInit);
  bind(handle, "ncclCommInitRankScalable", api.commInitRankScalable);
  bind(handle, "ncclCommRevoke", api.commRevoke);
  bind(handle, "ncclCommShrink", api.commShrink);
  bind(handle, "ncclCommRegister", api.commRegister);
  bind(handle, "ncclCommDeregister", api.commDeregister);
  bind(handle, "ncclCommWindowRegister", api.commWindowRegister);
  bind(handle, "ncclCommWindowDeregister", api.commWindowDeregister);
  bind(handle, "ncclMemAlloc", api.memAlloc);
  bind(handle, "ncclMemFree", api.memFree);
  bind(handle, "ncclAlltoAll", api.allToAll);
  bind(handle, "ncclGather", api.gather);
  bind(handle, "ncclScatter", api.scatter);
  bind(handle, "ncclGroupSimulateEnd", api.groupSimulateEnd);
  bind(handle, "ncclDevCommCreate", api.devCommCreate);
  bind(handle, "ncclDevCommDestroy", api.devCommDestroy);
  bind(handle, "ncclTeamWorld", api.teamWorld);
  bind(handle, "ncclTeamLsa", api.teamLsa);
  bind(handle, "ncclTeamRail", api.teamRail);
  bind(handle, "ncclTeamRankToWorld", api.teamRankToWorld);
  bind(handle, "ncclTeamRankToLsa", api.teamRankToLsa);
  bind(handle, "ncclLsaBarrierCreateRequirement", api.lsaBarrierCreateRequirement);
  bind(handle, "ncclGinBarrierCreateRequirement", api.ginBarrierCreateRequirement);
  bind(handle, "ncclLLA2ACalcSlots", api.llA2ACalcSlots);
  bind(handle, "ncclLLA2ACreateRequirement", api.llA2ACreateRequirement);
  std::vector<std::string> missing;
  for (const auto& [name, found] : required) {
    if (!found) missing.emplace_back(name);
  }
  return missing;
}

// One candidate: the library, or the reason it is not usable.
std::unique_ptr<RealNccl> tryLoad(const std::string& path, const void* self, std::string& why) {
  ::dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    why = error != nullptr ? error : "dlopen failed";
    return nullptr;
  }
  void* version = ::dlsym(handle, "ncclGetVersion");
  if (version == nullptr) {
    why = "not NCCL (no ncclGetVersion)";
    ::dlclose(handle);
    return nullptr;
  }
  if (version == self) {
    why = "this library itself";
    ::dlclose(handle);  // only drops the count the dlopen added
    return nullptr;
  }
  auto api = std::make_unique<RealNccl>();
  const std::vector<std::string> missing = bindAll(handle, *api);
  if (!missing.empty()) {
    why = fmt::format("lacks {} (expected NCCL 2.19 or newer)", missing.front());
    return nullptr;  // not unloaded: a library that started may have threads
  }
  if (api->getVersion(&api->versionCode) != ncclSuccess) {
    why = "its ncclGetVersion failed";
    return nullptr;
  }
  Dl_info info{};
  api->path = ::dladdr(version, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : path;
  return api;
}

}  // namespace

RealNcclLoad loadRealNccl(const std::string& configured, const void* self) {
  RealNcclLoad load;
  for (const std::string& path : coll::ncclCandidates(configured)) {
    std::string why;
    load.api = tryLoad(path, self, why);
    if (load.api) {
      load.searched.push_back(fmt::format("{}: NCCL {}", path, versionText(load.api->versionCode)));
      return load;
    }
    load.searched.push_back(fmt::format("{}: {}", path, why));
  }
  load.reason = configured.empty()
                    ? fmt::format("no libnccl.so.2 found apart from this library ({}); set PEERLINK_NCCL_LIBRARY",
                                  load.searched.empty() ? "nothing searched" : load.searched.back())
                    : fmt::format("PEERLINK_NCCL_LIBRARY={}: {}", configured,
                                  load.searched.empty() ? "not found" : load.searched.back());
  return load;
}

std::function<std::vector<std::uint8_t>()> realUniqueIdSource(const RealNccl& api) {
  return [getUniqueId = api.getUniqueId, getLastError = api.getLastError] {
    ncclUniqueId id{};
    const ncclResult_t result = getUniqueId(&id);
    if (result != ncclSuccess) {
      const char* text = getLastError != nullptr ? getLastError(nullptr) : nullptr;
      throw Error(ErrorCode::SystemError, fmt::format("the real NCCL's ncclGetUniqueId failed: {}",
                                                      text != nullptr && *text != '\0' ? text : resultString(result)));
    }
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(id.internal);
    return std::vector<std::uint8_t>(bytes, bytes + sizeof id.internal);
  };
}

}  // namespace peerlink::nccl
