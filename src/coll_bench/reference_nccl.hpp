// NCCL loaded at run time (dlopen), for `peerlink coll`'s same-run reference. The build needs no NCCL: the
// few types, enum values and signatures used are declared here, as NCCL's ABI has them (nccl.h of NCCL
// 2.28.9). When NCCL is absent or unusable nothing throws: the library says why, and the command prints
// "NCCL: not loaded (<reason>)".
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/collectives.hpp"

namespace peerlink::coll {

// ---- NCCL's ABI (nccl.h). C enums are int-sized. ---------------------------------------------------
using ncclComm_t = struct ncclComm*;
using ncclWindow_t = struct ncclWindow_vidmem*;
using ncclResult_t = int;
using ncclDataType_t = int;
using ncclRedOp_t = int;

/// ncclUniqueId: 128 bytes, passed by value.
struct NcclUniqueId {
  char internal[128];
};

constexpr ncclResult_t kNcclSuccess = 0;
constexpr int kNcclWinCollSymmetric = 0x01;      ///< NCCL_WIN_COLL_SYMMETRIC
constexpr std::size_t kNcclWinAlignment = 4096;  ///< NCCL_WIN_REQUIRED_ALIGNMENT
constexpr int kNcclSymmetricMinVersion = 22700;  ///< ncclCommWindowRegister appeared in NCCL 2.27

/// ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5, ncclFloat16 6,
/// ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9.
ncclDataType_t ncclDataTypeOf(DataType type) noexcept;
/// ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3, ncclAvg 4.
ncclRedOp_t ncclRedOpOf(ReduceOp op) noexcept;

/// The functions peerlink calls. Required ones are never null in a loaded library; the optional ones
/// (marked) are null where the library is too old to have them.
struct NcclApi {
  ncclResult_t (*getVersion)(int*) = nullptr;
  const char* (*getErrorString)(ncclResult_t) = nullptr;
  const char* (*getLastError)(ncclComm_t) = nullptr;  ///< optional (NCCL >= 2.13)
  ncclResult_t (*commInitAll)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*getUniqueId)(NcclUniqueId*) = nullptr;
  ncclResult_t (*commInitRank)(ncclComm_t*, int, NcclUniqueId, int) = nullptr;
  ncclResult_t (*commDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*groupStart)() = nullptr;
  ncclResult_t (*groupEnd)() = nullptr;
  ncclResult_t (*allReduce)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                            cudaStream_t) = nullptr;
  ncclResult_t (*broadcast)(const void*, void*, std::size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*reduce)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                         cudaStream_t) = nullptr;
  ncclResult_t (*allGather)(const void*, void*, std::size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*reduceScatter)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                cudaStream_t) = nullptr;
  ncclResult_t (*send)(const void*, std::size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void*, std::size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  /// optional (NCCL >= 2.28); without it all-to-all is grouped send/recv, as nccl-tests does it.
  ncclResult_t (*allToAll)(const void*, void*, std::size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*memAlloc)(void**, std::size_t) = nullptr;  ///< optional (NCCL >= 2.19)
  ncclResult_t (*memFree)(void*) = nullptr;                 ///< optional (NCCL >= 2.19)
  /// optional (NCCL >= 2.27)
  ncclResult_t (*commWindowRegister)(ncclComm_t, void*, std::size_t, ncclWindow_t*, int) = nullptr;
  ncclResult_t (*commWindowDeregister)(ncclComm_t, ncclWindow_t) = nullptr;  ///< optional (NCCL >= 2.27)
};

/// What loading found. `api` is usable only when `loaded`.
struct ReferenceNccl {
  bool loaded = false;
  std::string path;                   ///< the file that was loaded (or the last one tried)
  std::string reason;                 ///< why not loaded, e.g. "libm.so.6 is not NCCL (no symbol ncclGetVersion)"
  int versionCode = 0;                ///< ncclGetVersion, e.g. 22809
  bool symmetric = false;             ///< window registration (NCCL >= 2.27) and ncclMemAlloc are there
  std::string symmetricReason;        ///< why not, e.g. "NCCL 2.26.2 < 2.27 (no ncclCommWindowRegister)"
  std::vector<std::string> searched;  ///< every candidate tried, in order, with what happened
  NcclApi api;
};

/// "2.28.9" for 22809 (NCCL >= 2.9 encodes major*10000 + minor*100 + patch, older ones major*1000 + ...).
std::string ncclVersionString(int code);

/// Where to look for libnccl, in order: `configured` alone when set (PEERLINK_NCCL_LIBRARY); otherwise
/// "libnccl.so.2" on the loader path, then the CUDA toolkit's library folders (/usr/local/cuda/lib64, lib,
/// targets/*/lib, /usr/local/cuda-*/lib64|lib), then Python's nvidia.nccl package in the usual
/// site-packages/dist-packages folders (system, /usr/local, ~/.local, $VIRTUAL_ENV, $CONDA_PREFIX,
/// /opt/conda). Only existing files are listed after the first entry.
std::vector<std::string> ncclCandidates(const std::string& configured);

/// Loads the first candidate that is NCCL. Never throws: failures are in `reason`. With nothing found on
/// the usual paths it asks `python3 -c "import nvidia.nccl"` (bounded by `timeout 10`) as a last resort.
/// The library stays loaded for the life of the process (NCCL is not made to be unloaded).
ReferenceNccl loadReferenceNccl(const std::string& configured);

/// Loads one file; used by loadReferenceNccl and the tests.
ReferenceNccl loadReferenceNcclFile(const std::string& path);

/// NVLink multicast stays off (DEVICE.md): sets NCCL_NVLS_ENABLE=0 unless it is already set, before NCCL
/// is initialized. Returns the line the output shows: "NCCL_NVLS_ENABLE=0 (set by peerlink: NVLink
/// multicast off)" or "NCCL_NVLS_ENABLE=<v> (set by the user; left as is)".
std::string ensureNvlsDisabled();

/// "ncclInvalidUsage (invalid usage): <last error>" for a failed call.
std::string ncclErrorText(const ReferenceNccl& library, ncclResult_t result, ncclComm_t comm = nullptr);

}  // namespace peerlink::coll
