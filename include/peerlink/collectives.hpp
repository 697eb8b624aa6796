// Vocabulary of peerlink's collectives: data types, reduction operations, collectives and algorithms,
// with their names as the CLI, the logs and the JSON spell them. Plain data, no CUDA.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace peerlink {

/// Element types of collective buffers.
enum class DataType { F64, F32, F16, BF16, I32, U32, I64, U64, I8, U8 };

/// Reduction operations. Avg is the sum divided by the number of ranks; it is defined for floating-point
/// types only (integer division would silently truncate).
enum class ReduceOp { Sum, Prod, Min, Max, Avg };

enum class Collective { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll, SendRecv };

/// How a collective moves data (src/coll/plan.hpp describes each as a plan).
enum class Algorithm {
  Auto,     ///< chosen by size and topology (chooseAlgorithm)
  OneShot,  ///< every rank reads every peer's whole buffer and reduces locally: fewest steps, small messages
  TwoShot,  ///< reduce-scatter then all-gather over direct peer access: medium and large messages
  Ring,     ///< chunks pipelined around a ring of ranks: for links where only neighbours are fast
};

std::size_t dataTypeSize(DataType type) noexcept;
const char* dataTypeName(DataType type) noexcept;  ///< "f64", "f32", "f16", "bf16", "i32", ... "u8"
bool isFloatingPoint(DataType type) noexcept;      ///< f64, f32, f16, bf16
/// Our names, and nccl-tests' (double, float, half, bfloat16, int32, uint32, int64, uint64, int8, uint8).
std::optional<DataType> parseDataType(const std::string& name);

const char* reduceOpName(ReduceOp op) noexcept;  ///< "sum", "prod", "min", "max", "avg"
std::optional<ReduceOp> parseReduceOp(const std::string& name);
/// False for avg on integer types.
bool reduceOpSupported(DataType type, ReduceOp op) noexcept;

/// "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv".
const char* collectiveName(Collective collective) noexcept;
/// Our names and nccl-tests' spellings without underscores ("allreduce", "alltoall", "sendrecv").
std::optional<Collective> parseCollective(const std::string& name);

const char* algorithmName(Algorithm algorithm) noexcept;  ///< "auto", "one_shot", "two_shot", "ring"
/// Our names and PEERLINK_ALGO's (AUTO, ONESHOT, TWOSHOT, RING), case-insensitive.
std::optional<Algorithm> parseAlgorithm(const std::string& name);

// How many elements each rank's buffers hold for a call with `count` (the Communicator API's count,
// communicator.hpp): the plans, the validation and the references all read the count this way.

/// Elements of `rank`'s send buffer: 0 where the API ignores it (broadcast off the root).
inline std::size_t sendElementsOf(Collective collective, int nranks, std::size_t count, int rank, int root) {
  const auto n = static_cast<std::size_t>(nranks > 0 ? nranks : 0);
  switch (collective) {
    case Collective::Broadcast: return rank == root ? count : 0;
    case Collective::ReduceScatter:
    case Collective::AllToAll: return n * count;
    case Collective::AllReduce:
    case Collective::Reduce:
    case Collective::AllGather:
    case Collective::SendRecv: return count;
  }
  return count;
}

/// Elements of `rank`'s recv buffer: 0 where the API ignores it (reduce off the root). For send/recv this
/// is the ring shift nccl-tests runs: rank r receives `count` elements from rank r - 1.
inline std::size_t recvElementsOf(Collective collective, int nranks, std::size_t count, int rank, int root) {
  const auto n = static_cast<std::size_t>(nranks > 0 ? nranks : 0);
  switch (collective) {
    case Collective::Reduce: return rank == root ? count : 0;
    case Collective::AllGather:
    case Collective::AllToAll: return n * count;
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::ReduceScatter:
    case Collective::SendRecv: return count;
  }
  return count;
}

/// Whether the collective has a root (broadcast, reduce).
inline bool hasRoot(Collective collective) {
  return collective == Collective::Broadcast || collective == Collective::Reduce;
}

/// Whether the collective reduces (so a ReduceOp applies).
inline bool reduces(Collective collective) {
  return collective == Collective::AllReduce || collective == Collective::Reduce ||
         collective == Collective::ReduceScatter;
}

}  // namespace peerlink
