// NcclSession (nccl_session.hpp).
#include "coll_bench/nccl_session.hpp"

#include <cstring>

#include <fmt/format.h>

#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

void NcclSession::check(ncclResult_t result, const char* call) const {
  if (result != kNcclSuccess) {
    throw Error(ErrorCode::RemoteError, fmt::format("NCCL {} failed: {}", call, ncclErrorText(library, result)));
  }
}

void NcclSession::init(const CollWorld& world) {
  comms.assign(devices.size(), nullptr);
  if (!world.spansProcesses()) {
    const ncclResult_t result = library.api.commInitAll(comms.data(), static_cast<int>(devices.size()), devices.data());
    if (result != kNcclSuccess) {
      comms.clear();
      check(result, "ncclCommInitAll");
    }
    return;
  }
  NcclUniqueId id{};
  if (world.leads()) check(library.api.getUniqueId(&id), "ncclGetUniqueId");
  const std::vector<std::uint8_t> shared = world.fromRankZero(&id, sizeof id);
  std::memcpy(&id, shared.data(), sizeof id);
  DeviceGuard guard(devices.front());
  const ncclResult_t result = library.api.commInitRank(&comms[0], world.size(), id, world.localRanks().front());
  if (result != kNcclSuccess) {
    comms.clear();
    check(result, "ncclCommInitRank");
  }
}

void NcclSession::setUpSymmetric(std::size_t bytes) {
  bytes = (bytes + kNcclWinAlignment - 1) / kNcclWinAlignment * kNcclWinAlignment;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    DeviceGuard guard(devices[i]);
    for (std::vector<void*>* set : {&symmetric.send, &symmetric.recv}) {
      void* pointer = nullptr;
      check(library.api.memAlloc(&pointer, bytes), "ncclMemAlloc");
      set->push_back(pointer);
    }
  }
  windows.assign(2 * devices.size(), nullptr);
  check(library.api.groupStart(), "ncclGroupStart");
  ncclResult_t first = kNcclSuccess;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (int which = 0; which < 2; ++which) {
      void* pointer = which == 0 ? symmetric.send[i] : symmetric.recv[i];
      const ncclResult_t result = library.api.commWindowRegister(
          comms[i], pointer, bytes, &windows[which * devices.size() + i], kNcclWinCollSymmetric);
      if (first == kNcclSuccess) first = result;
    }
  }
  const ncclResult_t end = library.api.groupEnd();
  check(first, "ncclCommWindowRegister");
  check(end, "ncclGroupEnd (window registration)");
}

NcclSession::~NcclSession() {
  if (!windows.empty() && library.api.commWindowDeregister != nullptr) {
    library.api.groupStart();
    for (std::size_t i = 0; i < windows.size(); ++i) {
      if (windows[i] != nullptr) library.api.commWindowDeregister(comms[i % devices.size()], windows[i]);
    }
    library.api.groupEnd();
  }
  for (std::vector<void*>* set : {&symmetric.send, &symmetric.recv}) {
    for (void* pointer : *set) library.api.memFree(pointer);
  }
  for (ncclComm_t comm : comms) library.api.commDestroy(comm);
}

}  // namespace peerlink::coll
