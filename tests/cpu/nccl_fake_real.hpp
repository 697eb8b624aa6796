// A fake of the real NCCL the Shim forwards to (a RealNccl of free functions over static state): every call is
// recorded by name, the next result can be set, and what creation was given (ids, ranks, configs) is kept.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nccl_api/real_nccl.hpp"
#include "nccl_fake_platform.hpp"

namespace peerlink::nccl::testing {

struct FakeReal {
  /// What one ncclCommInitRank(Config) was given (ncclCommInitRankScalable: one for each of its ids).
  struct Init {
    int nranks = 0;
    int rank = -1;
    ncclUniqueId id{};
    bool withConfig = false;
    int blocking = -1;
    std::string name;
    int device = -1;  ///< currentDevice() when it was called
  };
  static inline std::vector<std::string> calls;
  static inline ncclResult_t next = ncclSuccess;
  static inline std::map<std::string, ncclResult_t> failing;  ///< the next call of that name returns that result
  static inline std::function<int()> currentDevice;           ///< the device a creation takes (the test's platform's)
  static inline std::vector<Init> inits;
  static inline std::function<void()> insideAllReduce;  ///< runs inside allReduce, before it returns
  /// The id ncclGetUniqueId returns (default: 0x5a in every byte, an id no peerlink id can carry).
  static inline ncclUniqueId made{};
  static ncclComm_t handle() { return reinterpret_cast<ncclComm_t>(static_cast<std::uintptr_t>(0x5000)); }
  static ncclResult_t result(const char* name) {
    calls.emplace_back(name);
    const auto named = failing.find(name);
    if (named != failing.end()) {
      const ncclResult_t r = named->second;
      failing.erase(named);
      return r;
    }
    const ncclResult_t r = next;
    next = ncclSuccess;
    return r;
  }
  /// NCCL 2.28's id as its ncclGetUniqueId writes it: a random 64-bit magic and the root's sockaddr_in (family 2,
  /// port, address), zeros after.
  static ncclUniqueId ncclLikeId() {
    ncclUniqueId id{};
    const unsigned char handle[] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,  // magic
                                    0x02, 0x00, 0x9c, 0x40, 10,   0,    0,    7};    // AF_INET, port 40000, 10.0.0.7
    std::memcpy(id.internal, handle, sizeof handle);
    return id;
  }
  static std::unique_ptr<RealNccl> make() {
    calls.clear();
    inits.clear();
    failing.clear();
    currentDevice = nullptr;
    insideAllReduce = nullptr;
    std::memset(&made, 0x5a, sizeof made);
    auto api = std::make_unique<RealNccl>();
    api->path = "/fake/libnccl.so.2";
    api->versionCode = 22809;
    api->getLastError = [](ncclComm_t) -> const char* { return "fake NCCL: peer 3 unreachable"; };
    api->getUniqueId = [](ncclUniqueId* id) {
      *id = made;
      return result("getUniqueId");
    };
    // A creation that fails leaves no communicator, as the real one's (*comm NULL).
    api->commInitRank = [](ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
      inits.push_back({nranks, rank, id, false, -1, "", currentDevice ? currentDevice() : -1});
      const ncclResult_t r = result("commInitRank");
      *comm = r == ncclSuccess ? handle() : nullptr;
      return r;
    };
    api->commInitRankConfig = [](ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
      inits.push_back({nranks, rank, id, true, config->blocking, config->commName ? config->commName : "",
                       currentDevice ? currentDevice() : -1});
      const ncclResult_t r = result("commInitRankConfig");
      *comm = r == ncclSuccess ? handle() : nullptr;
      return r;
    };
    api->commInitRankScalable = [](ncclComm_t* comm, int nranks, int rank, int nIds, ncclUniqueId* ids,
                                   ncclConfig_t* config) {
      for (int i = 0; i < nIds; ++i) {
        inits.push_back({nranks, rank, ids[i], config != nullptr, config != nullptr ? config->blocking : -1,
                         config != nullptr && config->commName ? config->commName : "",
                         currentDevice ? currentDevice() : -1});
      }
      const ncclResult_t r = result("commInitRankScalable");
      *comm = r == ncclSuccess ? handle() : nullptr;
      return r;
    };
    api->commInitAll = [](ncclComm_t* comms, int n, const int*) {
      for (int i = 0; i < n; ++i) comms[i] = handle();
      return result("commInitAll");
    };
    api->commDestroy = [](ncclComm_t) { return result("commDestroy"); };
    api->commAbort = [](ncclComm_t) { return result("commAbort"); };
    api->allReduce = [](const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) {
      if (insideAllReduce) insideAllReduce();
      return result("allReduce");
    };
    api->groupStart = [] { return result("groupStart"); };
    api->groupEnd = [] { return result("groupEnd"); };
    api->devCommCreate = [](ncclComm_t, const ncclDevCommRequirements_t*, ncclDevComm_t*) {
      return result("devCommCreate");
    };
    api->memAlloc = [](void** pointer, size_t) {
      static int storage = 0;
      *pointer = &storage;
      return result("memAlloc");
    };
    api->memFree = [](void*) { return result("memFree"); };
    return api;
  }
};

/// fakeParts with FakeReal loaded.
inline ShimParts partsWithReal(const std::shared_ptr<EventLog>& log, FakePlatform** platform,
                               const std::map<std::string, std::string>& variables = {}) {
  ShimParts parts = fakeParts(log, platform, variables);
  parts.real = FakeReal::make();
  parts.realFailure.clear();
  return parts;
}

}  // namespace peerlink::nccl::testing
