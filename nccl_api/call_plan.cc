#include "nccl_api/call_plan.hpp"

#include <limits>

#include <fmt/format.h>

#include "nccl_api/types.hpp"

namespace peerlink::nccl {
namespace {

using Where = Place::Where;
using Kind = TransformStep::Kind;

constexpr Place kSend{Where::Send, 0};
constexpr Place kRecv{Where::Recv, 0};
constexpr Place kNone{Where::None, 0};

Place scratchAt(std::size_t offset) {
  return Place{Where::Scratch, offset};
}

TransformStep step(Kind kind, Place in, Place out, std::size_t count, bool scaled = false) {
  TransformStep transform;
  transform.kind = kind;
  transform.in = in;
  transform.out = out;
  transform.count = count;
  transform.scaled = scaled;
  return transform;
}

// Elements each rank's input holds: nranks * count for reduce-scatter, count otherwise.
std::size_t inputElements(const ReductionRequest& request) {
  return request.collective == Collective::ReduceScatter ? request.count * static_cast<std::size_t>(request.nranks)
                                                         : request.count;
}

bool isRoot(const ReductionRequest& request) {
  return request.collective != Collective::Reduce || request.rank == request.root;
}

// FP8: widen the whole input into scratch (f16), reduce there in place, narrow this rank's result.
CallPlan planFp8(const ReductionRequest& request, std::size_t inputCount) {
  constexpr std::size_t kWide = 2;  // bytes of f16
  CallPlan plan;
  plan.scratchBytes = inputCount * kWide;
  plan.before.push_back(step(Kind::Widen, kSend, scratchAt(0), inputCount, !request.op.has_value()));
  const std::size_t resultOffset = request.collective == Collective::ReduceScatter
                                       ? request.count * kWide * static_cast<std::size_t>(request.rank)
                                       : 0;
  plan.call =
      CallStep{scratchAt(0), scratchAt(resultOffset), request.count, DataType::F16, request.op.value_or(ReduceOp::Sum)};
  if (isRoot(request)) plan.after.push_back(step(Kind::Narrow, scratchAt(resultOffset), kRecv, request.count));
  return plan;
}

// A pre-multiplied sum of a type peerlink reduces: scale, then sum. All-reduce and the reduce's root scale into
// their own recv buffer and reduce in place; the others scale into scratch.
CallPlan planPreMulSum(const ReductionRequest& request, DataType type, std::size_t bytes, std::size_t inputCount) {
  CallPlan plan;
  plan.call.count = request.count;
  plan.call.type = type;
  plan.call.op = ReduceOp::Sum;
  const bool intoRecv =
      request.collective == Collective::AllReduce || (request.collective == Collective::Reduce && isRoot(request));
  if (intoRecv) {
    plan.before.push_back(step(Kind::Scale, kSend, kRecv, inputCount));
    plan.call.send = kRecv;
    plan.call.recv = kRecv;
    return plan;
  }
  plan.scratchBytes = inputCount * bytes;
  plan.before.push_back(step(Kind::Scale, kSend, scratchAt(0), inputCount));
  plan.call.send = scratchAt(0);
  plan.call.recv = request.collective == Collective::Reduce ? kNone : kRecv;
  return plan;
}

}  // namespace

std::variant<CallPlan, Failure> planReduction(const ReductionRequest& request) {
  const std::optional<TypeInfo> info = typeInfo(request.type);
  if (!info) {
    return Failure{ncclInvalidArgument,
                   fmt::format("data type {} is not an ncclDataType_t (0..{})", static_cast<int>(request.type),
                               static_cast<int>(ncclNumTypes) - 1)};
  }
  const std::size_t inputCount = inputElements(request);
  constexpr std::size_t kMaxBytes = std::numeric_limits<std::size_t>::max() / 4;
  if (request.count > kMaxBytes / static_cast<std::size_t>(request.nranks > 0 ? request.nranks : 1) / 8) {
    return Failure{ncclInvalidArgument, fmt::format("count {} is too large to address", request.count)};
  }
  if (info->fp8) return planFp8(request, inputCount);
  const DataType type = *info->reducible;
  if (!request.op) return planPreMulSum(request, type, info->bytes, inputCount);
  CallPlan plan;
  plan.call = CallStep{kSend, kRecv, request.count, type, *request.op};
  if (*request.op == ReduceOp::Avg && !isFloatingPoint(type)) {
    // peerlink averages floating point only: the integer average is the sum divided afterwards.
    plan.call.op = ReduceOp::Sum;
    if (isRoot(request) && request.nranks > 1) plan.after.push_back(step(Kind::Divide, kRecv, kRecv, request.count));
  }
  return plan;
}

CallPlan planInPlaceAllToAll(std::size_t count, int nranks, DataType type, std::size_t elementBytes) {
  const std::size_t bytes = count * static_cast<std::size_t>(nranks) * elementBytes;
  CallPlan plan;
  plan.scratchBytes = bytes;
  plan.before.push_back(step(Kind::Copy, kSend, scratchAt(0), bytes));
  plan.call = CallStep{scratchAt(0), kRecv, count, type, ReduceOp::Sum};
  return plan;
}

std::string describePlan(Collective collective, const CallPlan& plan) {
  const auto name = [](Kind kind) {
    switch (kind) {
      case Kind::Scale: return "scale";
      case Kind::Widen: return "widen to f16";
      case Kind::Narrow: return "narrow to fp8";
      case Kind::Divide: return "divide by the ranks";
      case Kind::Copy: return "copy aside";
    }
    return "?";
  };
  std::string text;
  for (const TransformStep& transform : plan.before) text += fmt::format("{}, ", name(transform.kind));
  text += reduces(collective) ? fmt::format("{} {} in {}", collectiveName(collective), reduceOpName(plan.call.op),
                                            dataTypeName(plan.call.type))
                              : fmt::format("{} in {}", collectiveName(collective), dataTypeName(plan.call.type));
  for (const TransformStep& transform : plan.after) text += fmt::format(", {}", name(transform.kind));
  return text;
}

}  // namespace peerlink::nccl
