// NCCL's device API as libpeerlink_nccl.so.2 exports it (pncclX and ncclX, a weak alias of it, as exports.cc):
// the real NCCL's communicators only (shim_device.cc).
#include <nccl.h>
#include <nccl_device.h>

#include <type_traits>

#include "nccl_api/library.hpp"

using peerlink::nccl::processShim;
using peerlink::nccl::RealNccl;

extern "C" {

ncclResult_t pncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs, ncclDevComm_t* outDevComm) {
  return processShim().devCommCreate(comm, reqs, outDevComm);
}

ncclResult_t pncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm) {
  return processShim().devCommDestroy(comm, devComm);
}

ncclTeam_t pncclTeamWorld(ncclComm_t comm) {
  return processShim().team(comm, "ncclTeamWorld", &RealNccl::teamWorld);
}

ncclTeam_t pncclTeamLsa(ncclComm_t comm) {
  return processShim().team(comm, "ncclTeamLsa", &RealNccl::teamLsa);
}

ncclTeam_t pncclTeamRail(ncclComm_t comm) {
  return processShim().team(comm, "ncclTeamRail", &RealNccl::teamRail);
}

int pncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  return processShim().teamRank(comm, team, rank, "ncclTeamRankToWorld", &RealNccl::teamRankToWorld);
}

int pncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  return processShim().teamRank(comm, team, rank, "ncclTeamRankToLsa", &RealNccl::teamRankToLsa);
}

ncclResult_t pncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                              ncclGinBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq) {
  return processShim().ginBarrierCreateRequirement(comm, team, nBarriers, outHandle, outReq);
}

ncclResult_t pncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq) {
  return processShim().lsaBarrierCreateRequirement(team, nBarriers, outHandle, outReq);
}

int pncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  return processShim().llA2ACalcSlots(maxElts, maxEltSize);
}

ncclResult_t pncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                         ncclDevResourceRequirements_t* outReq) {
  return processShim().llA2ACreateRequirement(nBlocks, nSlots, outHandle, outReq);
}

decltype(pncclDevCommCreate) ncclDevCommCreate __attribute__((weak, alias("pncclDevCommCreate")));
decltype(pncclDevCommDestroy) ncclDevCommDestroy __attribute__((weak, alias("pncclDevCommDestroy")));
decltype(pncclTeamWorld) ncclTeamWorld __attribute__((weak, alias("pncclTeamWorld")));
decltype(pncclTeamLsa) ncclTeamLsa __attribute__((weak, alias("pncclTeamLsa")));
decltype(pncclTeamRail) ncclTeamRail __attribute__((weak, alias("pncclTeamRail")));
decltype(pncclTeamRankToWorld) ncclTeamRankToWorld __attribute__((weak, alias("pncclTeamRankToWorld")));
decltype(pncclTeamRankToLsa) ncclTeamRankToLsa __attribute__((weak, alias("pncclTeamRankToLsa")));
decltype(pncclGinBarrierCreateRequirement) ncclGinBarrierCreateRequirement
    __attribute__((weak, alias("pncclGinBarrierCreateRequirement")));
decltype(pncclLsaBarrierCreateRequirement) ncclLsaBarrierCreateRequirement
    __attribute__((weak, alias("pncclLsaBarrierCreateRequirement")));
decltype(pncclLLA2ACalcSlots) ncclLLA2ACalcSlots __attribute__((weak, alias("pncclLLA2ACalcSlots")));
decltype(pncclLLA2ACreateRequirement) ncclLLA2ACreateRequirement
    __attribute__((weak, alias("pncclLLA2ACreateRequirement")));

}  // extern "C"

// nccl_device.h declares the ncclX names only: each pncclX must have its ncclX's exact type (the host overload of
// the team functions).
static_assert(std::is_same_v<decltype(&pncclDevCommCreate), decltype(&ncclDevCommCreate)>);
static_assert(std::is_same_v<decltype(&pncclDevCommDestroy), decltype(&ncclDevCommDestroy)>);
static_assert(std::is_same_v<decltype(&pncclTeamWorld), decltype(static_cast<RealNccl::TeamOf>(&ncclTeamWorld))>);
static_assert(std::is_same_v<decltype(&pncclTeamLsa), decltype(static_cast<RealNccl::TeamOf>(&ncclTeamLsa))>);
static_assert(std::is_same_v<decltype(&pncclTeamRail), decltype(static_cast<RealNccl::TeamOf>(&ncclTeamRail))>);
static_assert(
    std::is_same_v<decltype(&pncclTeamRankToWorld), decltype(static_cast<RealNccl::TeamRankOf>(&ncclTeamRankToWorld))>);
static_assert(
    std::is_same_v<decltype(&pncclTeamRankToLsa), decltype(static_cast<RealNccl::TeamRankOf>(&ncclTeamRankToLsa))>);
static_assert(std::is_same_v<decltype(&pncclGinBarrierCreateRequirement), decltype(&ncclGinBarrierCreateRequirement)>);
static_assert(std::is_same_v<decltype(&pncclLsaBarrierCreateRequirement), decltype(&ncclLsaBarrierCreateRequirement)>);
static_assert(std::is_same_v<decltype(&pncclLLA2ACalcSlots), decltype(&ncclLLA2ACalcSlots)>);
static_assert(std::is_same_v<decltype(&pncclLLA2ACreateRequirement), decltype(&ncclLLA2ACreateRequirement)>);
