// The C API libpeerlink_nccl.so.2 exports, as NCCL exports it: each function as pncclX (NCCL's profiling
// interface) and ncclX, a weak alias of it (so that a profiler can define ncclX and call pncclX; declared through
// pncclX's type, which the compiler checked against nccl.h). Each one hands its arguments to the process's Shim
// (shim.hpp), which never throws.
#include <nccl.h>

#include "nccl_api/library.hpp"

using peerlink::nccl::processShim;

extern "C" {

ncclResult_t pncclMemAlloc(void** ptr, size_t size) {
  return processShim().memAlloc(ptr, size);
}

ncclResult_t pncclMemFree(void* ptr) {
  return processShim().memFree(ptr);
}

ncclResult_t pncclGetVersion(int* version) {
  return processShim().getVersion(version);
}

ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId) {
  return processShim().getUniqueId(uniqueId);
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config) {
  return processShim().commInitRank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
}

ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return processShim().commInitRank(comm, nranks, commId, rank, nullptr);
}

ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return processShim().commInitAll(comm, ndev, devlist);
}

ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  return processShim().commFinalize(comm);
}

ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  return processShim().commDestroy(comm);
}

ncclResult_t pncclCommAbort(ncclComm_t comm) {
  return processShim().commAbort(comm);
}

ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return processShim().commRevoke(comm, revokeFlags);
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  return processShim().commSplit(comm, color, key, newcomm, config);
}

ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                             ncclConfig_t* config, int shrinkFlags) {
  return processShim().commShrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
}

ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                       ncclConfig_t* config) {
  return processShim().commInitRankScalable(newcomm, nranks, myrank, nId, commIds, config);
}

const char* pncclGetErrorString(ncclResult_t result) {
  return processShim().getErrorString(result);
}

const char* pncclGetLastError(ncclComm_t comm) {
  return processShim().getLastError(comm);
}

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return processShim().commGetAsyncError(comm, asyncError);
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  return processShim().commCount(comm, count);
}

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  return processShim().commCuDevice(comm, device);
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  return processShim().commUserRank(comm, rank);
}

ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return processShim().commRegister(comm, buff, size, handle);
}

ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle) {
  return processShim().commDeregister(comm, handle);
}

ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  return processShim().commWindowRegister(comm, buff, size, win, winFlags);
}

ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return processShim().commWindowDeregister(comm, win);
}

ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm) {
  return processShim().redOpCreatePreMulSum(op, scalar, datatype, residence, comm);
}

ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return processShim().redOpDestroy(op, comm);
}

ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                         int root, ncclComm_t comm, cudaStream_t stream) {
  return processShim().reduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  return processShim().broadcast(buff, buff, count, datatype, root, comm, stream, "ncclBcast");
}

ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            ncclComm_t comm, cudaStream_t stream) {
  return processShim().broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                            ncclComm_t comm, cudaStream_t stream) {
  return processShim().allReduce(sendbuff, recvbuff, count, datatype, op, comm, stream);
}

ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return processShim().reduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream) {
  return processShim().allGather(sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                           cudaStream_t stream) {
  return processShim().allToAll(sendbuff, recvbuff, count, datatype, comm, stream);
}

ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return processShim().gather(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                          ncclComm_t comm, cudaStream_t stream) {
  return processShim().scatter(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  return processShim().send(sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  return processShim().recv(recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t pncclGroupStart() {
  return processShim().groupStart();
}

ncclResult_t pncclGroupEnd() {
  return processShim().groupEnd();
}

ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return processShim().groupSimulateEnd(simInfo);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // NCCL declares these deprecated; they still exist
void pncclResetDebugInit() {
  processShim().resetDebugInit();
}
decltype(pncclResetDebugInit) ncclResetDebugInit __attribute__((weak, alias("pncclResetDebugInit")));
#pragma GCC diagnostic pop

decltype(pncclMemAlloc) ncclMemAlloc __attribute__((weak, alias("pncclMemAlloc")));
decltype(pncclMemFree) ncclMemFree __attribute__((weak, alias("pncclMemFree")));
decltype(pncclGetVersion) ncclGetVersion __attribute__((weak, alias("pncclGetVersion")));
decltype(pncclGetUniqueId) ncclGetUniqueId __attribute__((weak, alias("pncclGetUniqueId")));
decltype(pncclCommInitRankConfig) ncclCommInitRankConfig __attribute__((weak, alias("pncclCommInitRankConfig")));
decltype(pncclCommInitRank) ncclCommInitRank __attribute__((weak, alias("pncclCommInitRank")));
decltype(pncclCommInitAll) ncclCommInitAll __attribute__((weak, alias("pncclCommInitAll")));
decltype(pncclCommFinalize) ncclCommFinalize __attribute__((weak, alias("pncclCommFinalize")));
decltype(pncclCommDestroy) ncclCommDestroy __attribute__((weak, alias("pncclCommDestroy")));
decltype(pncclCommAbort) ncclCommAbort __attribute__((weak, alias("pncclCommAbort")));
decltype(pncclCommRevoke) ncclCommRevoke __attribute__((weak, alias("pncclCommRevoke")));
decltype(pncclCommSplit) ncclCommSplit __attribute__((weak, alias("pncclCommSplit")));
decltype(pncclCommShrink) ncclCommShrink __attribute__((weak, alias("pncclCommShrink")));
decltype(pncclCommInitRankScalable) ncclCommInitRankScalable __attribute__((weak, alias("pncclCommInitRankScalable")));
decltype(pncclGetErrorString) ncclGetErrorString __attribute__((weak, alias("pncclGetErrorString")));
decltype(pncclGetLastError) ncclGetLastError __attribute__((weak, alias("pncclGetLastError")));
decltype(pncclCommGetAsyncError) ncclCommGetAsyncError __attribute__((weak, alias("pncclCommGetAsyncError")));
decltype(pncclCommCount) ncclCommCount __attribute__((weak, alias("pncclCommCount")));
decltype(pncclCommCuDevice) ncclCommCuDevice __attribute__((weak, alias("pncclCommCuDevice")));
decltype(pncclCommUserRank) ncclCommUserRank __attribute__((weak, alias("pncclCommUserRank")));
decltype(pncclCommRegister) ncclCommRegister __attribute__((weak, alias("pncclCommRegister")));
decltype(pncclCommDeregister) ncclCommDeregister __attribute__((weak, alias("pncclCommDeregister")));
decltype(pncclCommWindowRegister) ncclCommWindowRegister __attribute__((weak, alias("pncclCommWindowRegister")));
decltype(pncclCommWindowDeregister) ncclCommWindowDeregister __attribute__((weak, alias("pncclCommWindowDeregister")));
decltype(pncclRedOpCreatePreMulSum) ncclRedOpCreatePreMulSum __attribute__((weak, alias("pncclRedOpCreatePreMulSum")));
decltype(pncclRedOpDestroy) ncclRedOpDestroy __attribute__((weak, alias("pncclRedOpDestroy")));
decltype(pncclReduce) ncclReduce __attribute__((weak, alias("pncclReduce")));
decltype(pncclBcast) ncclBcast __attribute__((weak, alias("pncclBcast")));
decltype(pncclBroadcast) ncclBroadcast __attribute__((weak, alias("pncclBroadcast")));
decltype(pncclAllReduce) ncclAllReduce __attribute__((weak, alias("pncclAllReduce")));
decltype(pncclReduceScatter) ncclReduceScatter __attribute__((weak, alias("pncclReduceScatter")));
decltype(pncclAllGather) ncclAllGather __attribute__((weak, alias("pncclAllGather")));
decltype(pncclAlltoAll) ncclAlltoAll __attribute__((weak, alias("pncclAlltoAll")));
decltype(pncclGather) ncclGather __attribute__((weak, alias("pncclGather")));
decltype(pncclScatter) ncclScatter __attribute__((weak, alias("pncclScatter")));
decltype(pncclSend) ncclSend __attribute__((weak, alias("pncclSend")));
decltype(pncclRecv) ncclRecv __attribute__((weak, alias("pncclRecv")));
decltype(pncclGroupStart) ncclGroupStart __attribute__((weak, alias("pncclGroupStart")));
decltype(pncclGroupEnd) ncclGroupEnd __attribute__((weak, alias("pncclGroupEnd")));
decltype(pncclGroupSimulateEnd) ncclGroupSimulateEnd __attribute__((weak, alias("pncclGroupSimulateEnd")));

}  // extern "C"
