// Every value of the collective API's enumerations, for the tests that sweep them (CPU and GPU).
#pragma once

#include "peerlink/collectives.hpp"

namespace peerlink {

inline constexpr DataType kEveryDataType[] = {DataType::F64, DataType::F32, DataType::F16, DataType::BF16,
                                              DataType::I32, DataType::U32, DataType::I64, DataType::U64,
                                              DataType::I8,  DataType::U8};
inline constexpr ReduceOp kEveryReduceOp[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max,
                                              ReduceOp::Avg};
inline constexpr Collective kEveryCollective[] = {
    Collective::AllReduce,     Collective::Broadcast, Collective::Reduce,  Collective::AllGather,
    Collective::ReduceScatter, Collective::AllToAll,  Collective::SendRecv};

}  // namespace peerlink
