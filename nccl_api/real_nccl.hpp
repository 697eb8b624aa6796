// The real NCCL, for what the shim forwards (PEERLINK_NCCL_FALLBACK). Loaded once, when the shim itself is loaded
// (before the application can load it), with RTLD_LOCAL | RTLD_DEEPBIND: under LD_PRELOAD the shim is first in
// the global scope, and the real library's calls to its own exported functions would otherwise bind back into
// the shim. Every pointer's type is nccl.h's, so the compiler checks the signatures.
#pragma once

#include <nccl.h>
#include <nccl_device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace peerlink::nccl {

struct RealNccl {
  std::string path;
  int versionCode = 0;

  decltype(&::ncclGetVersion) getVersion = nullptr;
  decltype(&::ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&::ncclGetErrorString) getErrorString = nullptr;
  decltype(&::ncclGetLastError) getLastError = nullptr;
  void (*resetDebugInit)() = nullptr;  // declared deprecated: not named through decltype
  decltype(&::ncclCommInitRank) commInitRank = nullptr;
  decltype(&::ncclCommInitRankConfig) commInitRankConfig = nullptr;
  decltype(&::ncclCommInitRankScalable) commInitRankScalable = nullptr;
  decltype(&::ncclCommInitAll) commInitAll = nullptr;
  decltype(&::ncclCommFinalize) commFinalize = nullptr;
  decltype(&::ncclCommDestroy) commDestroy = nullptr;
  decltype(&::ncclCommAbort) commAbort = nullptr;
  decltype(&::ncclCommRevoke) commRevoke = nullptr;
  decltype(&::ncclCommSplit) commSplit = nullptr;
  decltype(&::ncclCommShrink) commShrink = nullptr;
  decltype(&::ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&::ncclCommCount) commCount = nullptr;
  decltype(&::ncclCommCuDevice) commCuDevice = nullptr;
  decltype(&::ncclCommUserRank) commUserRank = nullptr;
  decltype(&::ncclCommRegister) commRegister = nullptr;
  decltype(&::ncclCommDeregister) commDeregister = nullptr;
  decltype(&::ncclCommWindowRegister) commWindowRegister = nullptr;
  decltype(&::ncclCommWindowDeregister) commWindowDeregister = nullptr;
  decltype(&::ncclMemAlloc) memAlloc = nullptr;
  decltype(&::ncclMemFree) memFree = nullptr;
  decltype(&::ncclRedOpCreatePreMulSum) redOpCreatePreMulSum = nullptr;
  decltype(&::ncclRedOpDestroy) redOpDestroy = nullptr;
  decltype(&::ncclAllReduce) allReduce = nullptr;
  decltype(&::ncclBroadcast) broadcast = nullptr;
  decltype(&::ncclBcast) bcast = nullptr;
  decltype(&::ncclReduce) reduce = nullptr;
  decltype(&::ncclAllGather) allGather = nullptr;
  decltype(&::ncclReduceScatter) reduceScatter = nullptr;
  decltype(&::ncclAlltoAll) allToAll = nullptr;
  decltype(&::ncclGather) gather = nullptr;
  decltype(&::ncclScatter) scatter = nullptr;
  decltype(&::ncclSend) send = nullptr;
  decltype(&::ncclRecv) recv = nullptr;
  decltype(&::ncclGroupStart) groupStart = nullptr;
  decltype(&::ncclGroupEnd) groupEnd = nullptr;
  decltype(&::ncclGroupSimulateEnd) groupSimulateEnd = nullptr;
  // NCCL's device API (nccl_device.h): served only by the real library.
  decltype(&::ncclDevCommCreate) devCommCreate = nullptr;
  decltype(&::ncclDevCommDestroy) devCommDestroy = nullptr;
  // The team functions are overloaded (a device version takes an ncclDevComm): the host ones, spelled out.
  using TeamOf = ncclTeam_t (*)(ncclComm_t);
  using TeamRankOf = int (*)(ncclComm_t, ncclTeam_t, int);
  TeamOf teamWorld = nullptr;
  TeamOf teamLsa = nullptr;
  TeamOf teamRail = nullptr;
  TeamRankOf teamRankToWorld = nullptr;
  TeamRankOf teamRankToLsa = nullptr;
  decltype(&::ncclLsaBarrierCreateRequirement) lsaBarrierCreateRequirement = nullptr;
  decltype(&::ncclGinBarrierCreateRequirement) ginBarrierCreateRequirement = nullptr;
  decltype(&::ncclLLA2ACalcSlots) llA2ACalcSlots = nullptr;
  decltype(&::ncclLLA2ACreateRequirement) llA2ACreateRequirement = nullptr;
};

/// What loading found: `api` is null when nothing usable was found, and `reason` says why.
struct RealNcclLoad {
  std::unique_ptr<RealNccl> api;
  std::string reason;
  std::vector<std::string> searched;  ///< every candidate with what happened
};

/// Loads the real NCCL: `configured` (PEERLINK_NCCL_LIBRARY) alone when set, else the usual places (the loader
/// path, the CUDA toolkit, Python's nvidia.nccl package). A candidate whose ncclGetVersion is `self` -- this
/// library, reached by its SONAME or a link to it -- is skipped. Never throws; never unloads what it loaded.
RealNcclLoad loadRealNccl(const std::string& configured, const void* self);

/// A function that asks `api`'s ncclGetUniqueId for an id and returns its 128 bytes, or throws
/// Error(SystemError) with the real NCCL's own words: what a rendezvous root that may forward is given
/// (bootstrap::ForwardIdSource). It keeps the library's function pointers, not `api`: it may run on the root's
/// thread after this call, and a loaded library is never unloaded.
std::function<std::vector<std::uint8_t>()> realUniqueIdSource(const RealNccl& api);

}  // namespace peerlink::nccl
