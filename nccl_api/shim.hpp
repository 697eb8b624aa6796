// NCCL's C API over peerlink: one method per function of nccl.h (and NCCL's device API), taking its arguments
// and returning its result. The exported C functions (exports_*.cc) call the process's one Shim; the CPU tests
// build their own over a fake platform. A method never throws: a failure becomes NCCL's code, the one line
// ncclGetLastError returns and a WARN log line.
//
// Communicators: a handle per rank. Ranks of one world in this process share one NativeWorld (peerlink's
// communicator and what the shim keeps around it), which ends with the last of its handles -- destroying one
// never waits for the others. A communicator the real NCCL serves wraps its handle. Which library serves a
// communicator is decided once, at creation (settings.hpp), and logged (INIT, INFO).
//
// Groups (per thread, as NCCL's): communicators created inside one are created at ncclGroupEnd, those of one
// unique id as one world; send/recv inside one go to peerlink's group of their world, launched at ncclGroupEnd;
// collectives go as soon as every local rank has called them (world.hpp).
#pragma once

#include <nccl.h>
#include <nccl_device.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "nccl_api/backend.hpp"
#include "nccl_api/handle.hpp"
#include "nccl_api/real_nccl.hpp"
#include "nccl_api/result.hpp"
#include "nccl_api/settings.hpp"
#include "peerlink/launch.hpp"

namespace peerlink::bootstrap {
class ForwardedWorld;
}

namespace peerlink::nccl {

/// Everything a Shim is made of.
struct ShimParts {
  std::variant<ApiSettings, Failure> settings;  ///< a Failure (a malformed PEERLINK_* value) fails every call
  std::unique_ptr<Platform> platform;
  std::unique_ptr<RealNccl> real;  ///< null when not loaded
  std::string realFailure;         ///< why not loaded
  LaunchEnvironment launch;        ///< what the launcher says (for ncclGetUniqueId's choice)
};

class Shim {
 public:
  explicit Shim(ShimParts parts);
  /// Destroys the handles still alive (tests; the library's Shim lives as long as the process).
  ~Shim();
  Shim(const Shim&) = delete;
  Shim& operator=(const Shim&) = delete;

  // ---- versions, ids, errors ----
  ncclResult_t getVersion(int* version);
  ncclResult_t getUniqueId(ncclUniqueId* id);
  const char* getErrorString(ncclResult_t result) noexcept;
  const char* getLastError(ncclComm_t comm);
  void resetDebugInit();

  // ---- communicators ----
  ncclResult_t commInitRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank, const ncclConfig_t* config,
                            const char* call = "ncclCommInitRank");
  ncclResult_t commInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nIds, const ncclUniqueId* ids,
                                    const ncclConfig_t* config);
  ncclResult_t commInitAll(ncclComm_t* comms, int ndev, const int* devices);
  ncclResult_t commSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, const ncclConfig_t* config);
  ncclResult_t commShrink(ncclComm_t comm, int* exclude, int excludeCount, ncclComm_t* newcomm,
                          const ncclConfig_t* config, int flags);
  ncclResult_t commRevoke(ncclComm_t comm, int flags);
  ncclResult_t commFinalize(ncclComm_t comm);
  ncclResult_t commDestroy(ncclComm_t comm);
  ncclResult_t commAbort(ncclComm_t comm);
  ncclResult_t commGetAsyncError(ncclComm_t comm, ncclResult_t* error);
  ncclResult_t commCount(ncclComm_t comm, int* count);
  ncclResult_t commCuDevice(ncclComm_t comm, int* device);
  ncclResult_t commUserRank(ncclComm_t comm, int* rank);

  // ---- memory, registration, ops ----
  ncclResult_t memAlloc(void** pointer, std::size_t bytes);
  ncclResult_t memFree(void* pointer);
  ncclResult_t commRegister(ncclComm_t comm, void* buffer, std::size_t bytes, void** handle);
  ncclResult_t commDeregister(ncclComm_t comm, void* handle);
  ncclResult_t commWindowRegister(ncclComm_t comm, void* buffer, std::size_t bytes, ncclWindow_t* window, int flags);
  ncclResult_t commWindowDeregister(ncclComm_t comm, ncclWindow_t window);
  ncclResult_t redOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type, ncclScalarResidence_t residence,
                                    ncclComm_t comm);
  ncclResult_t redOpDestroy(ncclRedOp_t op, ncclComm_t comm);

  // ---- collectives, point to point, groups ----
  ncclResult_t allReduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                         ncclComm_t comm, cudaStream_t stream);
  ncclResult_t broadcast(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                         ncclComm_t comm, cudaStream_t stream, const char* call = "ncclBroadcast");
  ncclResult_t reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                      ncclComm_t comm, cudaStream_t stream);
  ncclResult_t allGather(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclComm_t comm,
                         cudaStream_t stream);
  ncclResult_t reduceScatter(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                             ncclComm_t comm, cudaStream_t stream);
  ncclResult_t allToAll(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclComm_t comm,
                        cudaStream_t stream);
  ncclResult_t gather(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                      cudaStream_t stream);
  ncclResult_t scatter(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                       cudaStream_t stream);
  ncclResult_t send(const void* buffer, std::size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                    cudaStream_t stream);
  ncclResult_t recv(void* buffer, std::size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                    cudaStream_t stream);
  ncclResult_t groupStart();
  ncclResult_t groupEnd();
  ncclResult_t groupSimulateEnd(ncclSimInfo_t* info);

  // ---- NCCL's device API: the real NCCL's communicators only ----
  ncclResult_t devCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t* requirements, ncclDevComm_t* out);
  ncclResult_t devCommDestroy(ncclComm_t comm, const ncclDevComm_t* devComm);
  using TeamFunction = RealNccl::TeamOf;
  using TeamRankFunction = RealNccl::TeamRankOf;
  /// ncclTeamWorld, ncclTeamLsa, ncclTeamRail (`which` of the real NCCL's).
  ncclTeam_t team(ncclComm_t comm, const char* call, TeamFunction RealNccl::*which);
  /// ncclTeamRankToWorld, ncclTeamRankToLsa.
  int teamRank(ncclComm_t comm, ncclTeam_t team, int rank, const char* call, TeamRankFunction RealNccl::*which);
  ncclResult_t ginBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int count, ncclGinBarrierHandle_t* handle,
                                           ncclDevResourceRequirements_t* out);
  ncclResult_t lsaBarrierCreateRequirement(ncclTeam_t team, int count, ncclLsaBarrierHandle_t* handle,
                                           ncclDevResourceRequirements_t* out);
  int llA2ACalcSlots(int maxElements, int maxElementBytes);
  ncclResult_t llA2ACreateRequirement(int blocks, int slots, ncclLLA2AHandle_t* handle,
                                      ncclDevResourceRequirements_t* out);

  /// Handles alive (tests).
  std::size_t liveHandles() const;

 private:
  struct PendingCreation {
    std::shared_ptr<ncclComm> handle;  ///< a lease: another thread may destroy the handle before the group ends
    UniqueId id;
    int nranks;
    int rank;
    int device;
    /// The caller's ncclConfig_t as it was at the call (its `size` bytes; empty: none), for the real NCCL should
    /// the rendezvous send the world there. Pointers in it (commName) are the caller's, as the real NCCL keeps them.
    std::vector<unsigned char> config;
  };
  /// A world created: peerlink's, or the real NCCL's handles by rank and why it serves them.
  struct CreatedWorld {
    std::shared_ptr<WorldBackend> backend;
    std::vector<ncclComm_t> real;
    std::string why;
  };
  struct GroupState {
    int depth = 0;
    int realOpen = 0;  // groups opened in the real NCCL, lazily, for forwarded calls (<= depth)
    std::vector<PendingCreation> creations;
    std::vector<std::shared_ptr<NativeWorld>> p2pWorlds;   // peerlink groups opened
    std::vector<std::shared_ptr<NativeWorld>> collWorlds;  // collectives called
    bool native = false;                                   // anything native happened in the group
  };
  struct ThreadState {
    GroupState group;
    std::string lastError;
  };

  template <typename Body>
  ncclResult_t run(const char* call, ncclComm_t comm, Body&& body) noexcept;
  /// Records `failure` as the thread's (and `comm`'s) last error, logs it, and returns its code.
  ncclResult_t fail(ncclComm_t comm, const Failure& failure) noexcept;
  ThreadState& thread();
  const ApiSettings& settings() const;
  RealNccl& realOrThrow(const char* call) const;
  /// A call's hold on a handle: the handle lives until the last hold is let go, so a thread that destroys or aborts
  /// a communicator while another is inside a call on it (PyTorch's watchdog aborts from its own thread) frees it
  /// only once that call returns -- which it does at once, with the abort's error.
  using Lease = std::shared_ptr<ncclComm>;
  /// The handle behind `comm`: Error(ncclInvalidArgument) for NULL or a pointer that is no live handle; for
  /// `ready`, also a failure for one still being created, one whose creation failed, or one finalized.
  Lease require(ncclComm_t comm, const char* call, bool ready = true);
  /// A Creating handle whose split finished becomes Ready or Failed.
  void settle(ncclComm* handle);
  /// A new live handle; the registry holds it until dropHandle.
  ncclComm* newHandle();
  /// A lease on a live handle (nullptr for one no longer live).
  std::shared_ptr<ncclComm> leaseOf(ncclComm* handle) const;
  void adopt(ncclComm* handle, const std::shared_ptr<NativeWorld>& world, int rank, const std::string& why);
  void adoptReal(ncclComm* handle, ncclComm_t real, const std::string& why);
  /// Takes the handle out of the registry (no call can find it any more), out of this thread's group, and its rank
  /// out of its world; what it owns goes with the last lease (releaseHandle). False, doing nothing, where another
  /// thread's destroy or abort took it first.
  bool dropHandle(ncclComm* handle);
  static void releaseHandle(ncclComm* handle) noexcept;
  void openRealGroup();
  /// The real NCCL for a forwarded call, its group opened first when this thread is inside one of ours.
  RealNccl& realInGroup();
  /// A forwarded call's result: counted; a failure thrown with the real NCCL's last error.
  ncclResult_t forwarded(ncclComm* handle, ncclResult_t result);

  /// commInitRank over `nIds` ids every rank was given alike (ncclCommInitRankScalable): ids of the real NCCL go to
  /// its ncclCommInitRankScalable when there are several; a peerlink id is the first alone.
  ncclResult_t initRank(ncclComm_t* comm, int nranks, const ncclUniqueId* ids, int nIds, int rank,
                        const ncclConfig_t* config, const char* call);
  void createPending(std::vector<PendingCreation>& creations);
  void createWorld(std::vector<PendingCreation*>& members, std::thread::id owner);
  CreatedWorld createWithFallback(std::vector<PendingCreation*>& members);
  /// The members created by the real NCCL with the id the rendezvous root sent (`verdict`), as it decided;
  /// several in one real group. Failures name the verdict.
  CreatedWorld forwardWorld(std::vector<PendingCreation*>& members, const bootstrap::ForwardedWorld& verdict);

  void submit(ncclComm* handle, CollectiveCall call);
  ncclResult_t reduction(const char* call, Collective collective, const void* send, void* recv, std::size_t count,
                         ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t copyCollective(const char* call, Collective collective, const void* send, void* recv, std::size_t count,
                              ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t rooted(const char* call, bool gathering, const void* send, void* recv, std::size_t count,
                      ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t pointToPoint(const char* call, bool sending, void* buffer, std::size_t count, ncclDataType_t type,
                            int peer, ncclComm_t comm, cudaStream_t stream);
  void joinPeerGroup(const std::shared_ptr<NativeWorld>& world);

  const std::uint64_t id_;
  ShimParts parts_;
  mutable std::shared_mutex registryMutex_;
  std::unordered_map<ncclComm*, Lease> live_;
  std::mutex idsMutex_;
  std::vector<UniqueId> idsCreating_;  // native worlds being created in this process, by id
  std::mutex allocationsMutex_;
  std::unordered_set<void*> realAllocations_;  // ncclMemAlloc's from the real NCCL (PEERLINK_NCCL_FALLBACK=ALL)
};

template <typename Body>
ncclResult_t Shim::run(const char* call, ncclComm_t comm, Body&& body) noexcept {
  try {
    settings();  // a malformed PEERLINK_* value fails every call, naming it
    return body();
  } catch (const std::exception& error) {
    return fail(comm, failureOf(error, call));
  } catch (...) {
    return fail(comm, Failure{ncclInternalError, std::string(call) + ": unknown exception"});
  }
}

}  // namespace peerlink::nccl
