// How an NCCL call runs on peerlink's communicator: directly, or with a pass of the shim's own kernels before and
// after (transform_kernels.cu) where peerlink's kernels do not do what NCCL's do:
//   - pre-multiplied sums (ncclRedOpCreatePreMulSum): each rank scales its input by its scalar, then a sum;
//   - FP8 (e4m3, e5m2): each rank widens its input to f16 in a scratch buffer, peerlink reduces in f16, the
//     result is narrowed back -- the arithmetic NCCL's FP8 reductions do per step (in half), rounded once;
//   - ncclAvg on integers: the sum, then divided by the number of ranks (truncating, as NCCL does);
//   - an all-to-all in place (NCCL allows it, peerlink's needs separate buffers): the input copied aside first.
// Pure: buffers are named (the caller's send and recv, the rank's scratch at an offset) and resolved by the shim.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "nccl_api/result.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink::nccl {

/// A buffer of a step: the caller's send or recv buffer, the rank's scratch, or none; `offset` in bytes.
struct Place {
  enum class Where { Send, Recv, Scratch, None };
  Where where = Where::None;
  std::size_t offset = 0;
  bool operator==(const Place& other) const { return where == other.where && offset == other.offset; }
};

/// A pass of the shim's kernels over `count` elements.
struct TransformStep {
  enum class Kind {
    Scale,   ///< out = in * the op's scalar, in the call's type
    Widen,   ///< out (f16) = in (FP8), times the op's scalar when `scaled`
    Narrow,  ///< out (FP8) = in (f16)
    Divide,  ///< out = in / nranks, in the call's (integer) type
    Copy,    ///< out = in, `count` bytes
  };
  Kind kind = Kind::Scale;
  Place in;
  Place out;
  std::size_t count = 0;
  bool scaled = false;  ///< Widen only
};

/// The call peerlink's communicator makes.
struct CallStep {
  Place send;
  Place recv;
  std::size_t count = 0;
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
};

/// Everything one rank does for one call: `before`, then `call`, then `after`, on the caller's stream.
struct CallPlan {
  std::size_t scratchBytes = 0;  ///< this rank's scratch the steps use (0: none)
  std::vector<TransformStep> before;
  CallStep call;
  std::vector<TransformStep> after;
};

/// What the caller asked for.
struct ReductionRequest {
  Collective collective = Collective::AllReduce;  ///< AllReduce, Reduce or ReduceScatter
  ncclDataType_t type = ncclFloat32;
  std::optional<ReduceOp> op;  ///< a built-in op; nullopt for a pre-multiplied sum
  std::size_t count = 0;       ///< NCCL's count (recvcount for reduce-scatter)
  int rank = 0;
  int nranks = 1;
  int root = 0;  ///< Reduce only
};

/// The plan, or a Failure (ncclInvalidArgument) for a type that is no ncclDataType_t or a scratch size that
/// overflows.
std::variant<CallPlan, Failure> planReduction(const ReductionRequest& request);

/// An all-to-all whose send and recv buffers overlap: `count` elements of `elementBytes` per rank copied to
/// scratch, then the all-to-all from there.
CallPlan planInPlaceAllToAll(std::size_t count, int nranks, DataType type, std::size_t elementBytes);

/// "widen to f16, all_reduce sum in f16, narrow to fp8" for the COLL log.
std::string describePlan(Collective collective, const CallPlan& plan);

}  // namespace peerlink::nccl
