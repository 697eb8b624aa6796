// A model of how CUDA's stream capture links a staged call's operations into a graph (coll/staging_schedule.hpp),
// for test_coll_staging_schedule.cc.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "coll/staging_plan.hpp"
#include "coll/staging_schedule.hpp"

namespace peerlink::coll {

// The shape of a stream capture of `calls` staged calls of one rank (`chunks`, its copies; `ops`, its schedule), as
// CUDA builds it: a node depends on its stream's set of nodes, then the set is just that node; a wait adds the set
// its event's latest record kept; a record keeps a copy of its stream's set. A copy of nothing issues no node.
struct CaptureShape {
  std::size_t kernels = 0;
  std::size_t edgesIntoKernels = 0;
  std::size_t mostIntoAKernel = 0;
};

inline CaptureShape captureOf(const std::vector<StagedChunk>& chunks, const std::vector<StagingOp>& ops, int calls) {
  CaptureShape shape;
  std::vector<int> lane[2] = {{}, {}};
  std::vector<std::vector<int>> recorded(kStagingEvents);
  int nodes = 0;
  const auto node = [&](StagingLane on, bool kernel) {
    std::vector<int>& set = lane[on == StagingLane::Caller ? 0 : 1];
    if (kernel) {
      ++shape.kernels;
      shape.edgesIntoKernels += set.size();
      shape.mostIntoAKernel = std::max(shape.mostIntoAKernel, set.size());
    }
    set = {nodes++};
  };
  for (int call = 0; call < calls; ++call) {
    for (const StagingOp& op : ops) {
      std::vector<int>& set = lane[op.lane == StagingLane::Caller ? 0 : 1];
      const StagedChunk& chunk = chunks[op.chunk];
      switch (op.kind) {
        case StagingOp::Kind::Record: recorded[static_cast<std::size_t>(op.event)] = set; break;
        case StagingOp::Kind::Wait:
          for (const int from : recorded[static_cast<std::size_t>(op.event)]) {
            if (std::find(set.begin(), set.end(), from) == set.end()) set.push_back(from);
          }
          break;
        case StagingOp::Kind::CopyIn:
          if (!chunk.in.empty()) node(op.lane, false);
          break;
        case StagingOp::Kind::CopyOut:
          if (!chunk.out.empty()) node(op.lane, false);
          break;
        case StagingOp::Kind::Kernel: node(op.lane, true); break;
      }
    }
  }
  return shape;
}

}  // namespace peerlink::coll
