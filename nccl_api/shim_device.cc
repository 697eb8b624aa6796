// NCCL's device API (nccl_device.h): device communicators, teams, barriers and the LL all-to-all's resources,
// for kernels that call NCCL's device functions. Only the real NCCL's communicators have them: forwarded for
// those, refused for peerlink's (ncclInvalidUsage and a log line; the functions without a result code log and
// return an empty team or -1).
#include <fmt/format.h>

#include "core/log.hpp"
#include "nccl_api/shim.hpp"

namespace peerlink::nccl {
namespace {

constexpr const char* kRefusal =
    "NCCL's device API needs a communicator of the real NCCL; peerlink serves this one (PEERLINK_NCCL_FALLBACK=ALL "
    "hands every communicator to the real NCCL)";
constexpr const char* kNotLoaded = "NCCL's device API is the real NCCL's, which is not loaded: ";

}  // namespace

ncclResult_t Shim::devCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t* requirements, ncclDevComm_t* out) {
  return run("ncclDevCommCreate", comm, [&] {
    const Lease handle = require(comm, "ncclDevCommCreate");
    if (handle->real == nullptr || parts_.real->devCommCreate == nullptr) throw ApiError(ncclInvalidUsage, kRefusal);
    return forwarded(handle.get(), realInGroup().devCommCreate(handle->real, requirements, out));
  });
}

ncclResult_t Shim::devCommDestroy(ncclComm_t comm, const ncclDevComm_t* devComm) {
  return run("ncclDevCommDestroy", comm, [&] {
    const Lease handle = require(comm, "ncclDevCommDestroy", false);
    if (handle->real == nullptr || parts_.real->devCommDestroy == nullptr) throw ApiError(ncclInvalidUsage, kRefusal);
    return forwarded(handle.get(), parts_.real->devCommDestroy(handle->real, devComm));
  });
}

ncclTeam_t Shim::team(ncclComm_t comm, const char* call, TeamFunction RealNccl::*which) {
  ncclTeam_t team{};
  run(call, comm, [&] {
    const Lease handle = require(comm, call);
    if (handle->real == nullptr || (*parts_.real).*which == nullptr) throw ApiError(ncclInvalidUsage, kRefusal);
    ++handle->forwarded;
    team = (parts_.real.get()->*which)(handle->real);
    return ncclSuccess;
  });
  return team;
}

int Shim::teamRank(ncclComm_t comm, ncclTeam_t team, int rank, const char* call, TeamRankFunction RealNccl::*which) {
  int result = -1;
  run(call, comm, [&] {
    const Lease handle = require(comm, call);
    if (handle->real == nullptr || (*parts_.real).*which == nullptr) throw ApiError(ncclInvalidUsage, kRefusal);
    ++handle->forwarded;
    result = (parts_.real.get()->*which)(handle->real, team, rank);
    return ncclSuccess;
  });
  return result;
}

ncclResult_t Shim::ginBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int count,
                                               ncclGinBarrierHandle_t* handle, ncclDevResourceRequirements_t* out) {
  return run("ncclGinBarrierCreateRequirement", comm, [&] {
    const Lease owner = require(comm, "ncclGinBarrierCreateRequirement");
    if (owner->real == nullptr || parts_.real->ginBarrierCreateRequirement == nullptr) {
      throw ApiError(ncclInvalidUsage, kRefusal);
    }
    return forwarded(owner.get(), parts_.real->ginBarrierCreateRequirement(owner->real, team, count, handle, out));
  });
}

ncclResult_t Shim::lsaBarrierCreateRequirement(ncclTeam_t team, int count, ncclLsaBarrierHandle_t* handle,
                                               ncclDevResourceRequirements_t* out) {
  return run("ncclLsaBarrierCreateRequirement", nullptr, [&] {
    if (parts_.real == nullptr || parts_.real->lsaBarrierCreateRequirement == nullptr) {
      throw ApiError(ncclInvalidUsage, kNotLoaded + parts_.realFailure);
    }
    return forwarded(nullptr, parts_.real->lsaBarrierCreateRequirement(team, count, handle, out));
  });
}

int Shim::llA2ACalcSlots(int maxElements, int maxElementBytes) {
  int slots = -1;
  run("ncclLLA2ACalcSlots", nullptr, [&] {
    if (parts_.real == nullptr || parts_.real->llA2ACalcSlots == nullptr) {
      throw ApiError(ncclInvalidUsage, kNotLoaded + parts_.realFailure);
    }
    slots = parts_.real->llA2ACalcSlots(maxElements, maxElementBytes);
    return ncclSuccess;
  });
  return slots;
}

ncclResult_t Shim::llA2ACreateRequirement(int blocks, int slots, ncclLLA2AHandle_t* handle,
                                          ncclDevResourceRequirements_t* out) {
  return run("ncclLLA2ACreateRequirement", nullptr, [&] {
    if (parts_.real == nullptr || parts_.real->llA2ACreateRequirement == nullptr) {
      throw ApiError(ncclInvalidUsage, kNotLoaded + parts_.realFailure);
    }
    return forwarded(nullptr, parts_.real->llA2ACreateRequirement(blocks, slots, handle, out));
  });
}

}  // namespace peerlink::nccl
