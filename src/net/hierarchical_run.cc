// runHierarchical (hierarchical_run.hpp).
#include "net/hierarchical_run.hpp"

#include <algorithm>

#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

std::byte* addressOf(const RankBuffers& buffers, const coll::BufferRef& ref, std::size_t elementSize) {
  void* base = ref.buffer == coll::BufferKind::Input    ? buffers.input
               : ref.buffer == coll::BufferKind::Output ? buffers.output
                                                        : buffers.scratch;
  return base == nullptr ? nullptr : static_cast<std::byte*>(base) + ref.offset * elementSize;
}

// Where member `me`'s send and recv of `call` are in this rank's memory.
void* sendOf(const coll::GroupCall& call, std::size_t me, const RankBuffers& buffers, std::size_t size) {
  return addressOf(buffers, call.sends[me], size);
}
void* recvOf(const coll::GroupCall& call, std::size_t me, const RankBuffers& buffers, std::size_t size) {
  return addressOf(buffers, call.recvs[me], size);
}

}  // namespace

void runHierarchical(NetWorld& world, const coll::HierarchicalPlan& h, ReduceOp op, const RankBuffers& buffers) {
  const coll::NodeGrid grid = world.grid();
  if (grid.nodes != h.grid.nodes || grid.ranksPerNode != h.grid.ranksPerNode) {
    throw Error(ErrorCode::InvalidUsage, "a plan for " + std::to_string(h.grid.nodes) + " nodes x " +
                                             std::to_string(h.grid.ranksPerNode) + " ranks on a world of " +
                                             std::to_string(grid.nodes) + " x " + std::to_string(grid.ranksPerNode));
  }
  const int me = world.rank();
  const DataType type = h.plan.type;
  const std::size_t size = dataTypeSize(type);
  std::unique_ptr<NetGroup> everyone;
  for (std::size_t p = 0; p < h.phases.size(); ++p) {
    const coll::Phase& phase = h.phases[p];
    if (phase.calls.front().collective == Collective::SendRecv) {
      // This phase and those beside it: one send/recv group, so that no rank waits on a send before its receive.
      std::vector<PeerOp> ops;
      for (; p < h.phases.size(); ++p) {
        for (const coll::GroupCall& call : h.phases[p].calls) {
          if (call.members[0] == me) ops.push_back({true, call.members[1], sendOf(call, 0, buffers, size), call.count});
          if (call.members[1] == me)
            ops.push_back({false, call.members[0], recvOf(call, 1, buffers, size), call.count});
        }
        if (p + 1 >= h.phases.size() || !h.phases[p + 1].withPrevious) break;
      }
      if (!everyone) {
        std::vector<int> all(static_cast<std::size_t>(world.size()));
        for (int r = 0; r < world.size(); ++r) all[static_cast<std::size_t>(r)] = r;
        everyone = world.group(all, "the world");
      }
      everyone->sendRecv(ops, type);
      continue;
    }
    for (const coll::GroupCall& call : phase.calls) {
      const auto at = std::find(call.members.begin(), call.members.end(), me);
      if (at == call.members.end()) continue;
      const auto m = static_cast<std::size_t>(at - call.members.begin());
      NetGroup& group = call.scope == coll::Scope::InNode ? world.node() : world.rail();
      if (group.members() != call.members) {
        throw Error(ErrorCode::Internal,
                    "runHierarchical: a call of " + phase.name + " names other ranks than " + group.name());
      }
      NetCall net;
      net.collective = call.collective;
      net.count = call.count;
      net.type = type;
      net.op = coll::groupReduceOp(call, op);
      net.avgDivisor = coll::groupAvgDivisor(call, h.grid);
      net.root = call.root;
      net.send = sendOf(call, m, buffers, size);
      net.recv = recvOf(call, m, buffers, size);
      net.algorithm = call.algorithm;
      group.run(net);
    }
  }
}

}  // namespace peerlink::net
