#include "nccl_api/types.hpp"

namespace peerlink::nccl {

std::optional<TypeInfo> typeInfo(ncclDataType_t type) noexcept {
  switch (type) {
    case ncclInt8: return TypeInfo{"ncclInt8", 1, DataType::I8, DataType::I8, false};
    case ncclUint8: return TypeInfo{"ncclUint8", 1, DataType::U8, DataType::U8, false};
    case ncclInt32: return TypeInfo{"ncclInt32", 4, DataType::I32, DataType::I32, false};
    case ncclUint32: return TypeInfo{"ncclUint32", 4, DataType::U32, DataType::U32, false};
    case ncclInt64: return TypeInfo{"ncclInt64", 8, DataType::I64, DataType::I64, false};
    case ncclUint64: return TypeInfo{"ncclUint64", 8, DataType::U64, DataType::U64, false};
    case ncclFloat16: return TypeInfo{"ncclFloat16", 2, DataType::F16, DataType::F16, false};
    case ncclFloat32: return TypeInfo{"ncclFloat32", 4, DataType::F32, DataType::F32, false};
    case ncclFloat64: return TypeInfo{"ncclFloat64", 8, DataType::F64, DataType::F64, false};
    case ncclBfloat16: return TypeInfo{"ncclBfloat16", 2, DataType::BF16, DataType::BF16, false};
    case ncclFloat8e4m3: return TypeInfo{"ncclFloat8e4m3", 1, DataType::U8, std::nullopt, true};
    case ncclFloat8e5m2: return TypeInfo{"ncclFloat8e5m2", 1, DataType::U8, std::nullopt, true};
    case ncclNumTypes: break;
  }
  return std::nullopt;
}

std::optional<ReduceOp> builtinOp(ncclRedOp_t op) noexcept {
  switch (op) {
    case ncclSum: return ReduceOp::Sum;
    case ncclProd: return ReduceOp::Prod;
    case ncclMax: return ReduceOp::Max;
    case ncclMin: return ReduceOp::Min;
    case ncclAvg: return ReduceOp::Avg;
    default: break;
  }
  return std::nullopt;
}

const char* builtinOpName(ncclRedOp_t op) noexcept {
  switch (op) {
    case ncclSum: return "ncclSum";
    case ncclProd: return "ncclProd";
    case ncclMax: return "ncclMax";
    case ncclMin: return "ncclMin";
    case ncclAvg: return "ncclAvg";
    default: break;
  }
  return "a dynamic op";
}

}  // namespace peerlink::nccl
