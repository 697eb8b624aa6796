// Plan-run programs (plan_program.hpp).
#include "coll/plan_program.hpp"

#include <limits>

namespace peerlink::coll {

std::optional<kernels::PlanRunArgs> planRunProgram(const Plan& plan, int rank, const std::vector<PlanRank>& ranks) {
  if (plan.steps.size() > static_cast<std::size_t>(kernels::kPlanRunMaxSteps)) return std::nullopt;
  const std::size_t size = dataTypeSize(plan.type);
  kernels::PlanRunArgs program;
  program.nranks = plan.nranks;
  program.steps = static_cast<int>(plan.steps.size());
  int ops = 0;
  int pointers = 0;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    for (const Transfer& transfer : plan.steps[s].transfers) {
      if (transfer.executor != rank || transfer.count == 0) continue;
      const auto addressOf = [&](const BufferRef& ref) {
        return ranks[static_cast<std::size_t>(ref.rank)].address(ref.buffer, ref.offset, transfer.count, size);
      };
      void* dst = addressOf(transfer.dst);
      const bool reduce = transfer.kind == TransferKind::Reduce;
      if (!reduce && addressOf(transfer.srcs.front()) == dst) continue;  // in place under an out-of-place plan
      const int sources = reduce ? static_cast<int>(transfer.srcs.size()) : 1;
      if (ops == kernels::kPlanRunMaxOps || pointers + 1 + sources > kernels::kPlanRunMaxPointers ||
          transfer.count > std::numeric_limits<unsigned int>::max() || sources > 255) {
        return std::nullopt;
      }
      kernels::PlanRunOp& op = program.ops[ops++];
      op.count = static_cast<unsigned int>(transfer.count);
      op.pointer = static_cast<unsigned short>(pointers);
      op.sources = static_cast<unsigned char>(sources);
      op.flags = static_cast<unsigned char>((reduce ? kernels::kPlanRunReduce : 0) |
                                            (reduce && transfer.finish ? kernels::kPlanRunFinish : 0));
      program.pointers[pointers++] = dst;
      for (int j = 0; j < sources; ++j) {
        program.pointers[pointers++] = const_cast<void*>(static_cast<const void*>(addressOf(transfer.srcs[j])));
      }
    }
    program.stepEnds[s] = static_cast<unsigned short>(ops);
  }
  return program;
}

std::vector<std::vector<ProgramTransfer>> programSteps(const kernels::PlanRunArgs& program) {
  std::vector<std::vector<ProgramTransfer>> steps(static_cast<std::size_t>(program.steps));
  int begin = 0;
  for (int s = 0; s < program.steps; ++s) {
    for (int i = begin; i < program.stepEnds[s]; ++i) {
      const kernels::PlanRunOp& op = program.ops[i];
      ProgramTransfer transfer;
      transfer.dst = program.pointers[op.pointer];
      for (int j = 0; j < op.sources; ++j) transfer.srcs.push_back(program.pointers[op.pointer + 1 + j]);
      transfer.count = op.count;
      transfer.reduce = (op.flags & kernels::kPlanRunReduce) != 0;
      transfer.finish = (op.flags & kernels::kPlanRunFinish) != 0;
      steps[static_cast<std::size_t>(s)].push_back(std::move(transfer));
    }
    begin = program.stepEnds[s];
  }
  return steps;
}

}  // namespace peerlink::coll
