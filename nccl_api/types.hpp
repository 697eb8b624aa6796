// NCCL's data types and built-in reduction ops against peerlink's: which peerlink type carries each NCCL type,
// and which ops peerlink reduces natively. Pure tables.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <optional>

#include "peerlink/collectives.hpp"

namespace peerlink::nccl {

/// One ncclDataType_t as peerlink carries it.
struct TypeInfo {
  const char* name = "";  ///< "ncclFloat8e4m3"
  std::size_t bytes = 0;
  /// The peerlink type of the same bytes for copies (broadcast, gathers, all-to-all, send/recv): U8 for FP8.
  DataType carrier = DataType::U8;
  /// The peerlink type reductions run in directly; nullopt for FP8, which peerlink's kernels do not reduce.
  std::optional<DataType> reducible;
  bool fp8 = false;
};

/// The type, or nullopt for a value that is no ncclDataType_t (ncclNumTypes and beyond, negatives).
std::optional<TypeInfo> typeInfo(ncclDataType_t type) noexcept;

/// ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg as peerlink's ops (NCCL numbers Max before Min); nullopt for
/// other values (dynamic ops from ncclNumOps, which the shim looks up itself).
std::optional<ReduceOp> builtinOp(ncclRedOp_t op) noexcept;

/// "ncclAvg", or "op 7" for a dynamic op.
const char* builtinOpName(ncclRedOp_t op) noexcept;

}  // namespace peerlink::nccl
