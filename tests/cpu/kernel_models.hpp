// Host models of the direct collective kernels, run over the arguments coll/kernel_args.hpp builds: what each
// kernel's comment in coll_kernels.cuh says it does, ranks one after another, every read of a rank's part before
// its writes. Sums only (the tests' element types add exactly in any order).
#pragma once

#include <cstring>
#include <vector>

#include "coll/host_reduce.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

/// dst[i] = sum over sources, for `elements` elements of `type`, computed before anything is stored.
inline void reduceInto(DataType type, const std::vector<void*>& dsts, const std::vector<const void*>& srcs,
                       std::size_t elements) {
  Bytes result(elements * dataTypeSize(type));
  hostReduce(type, ReduceOp::Sum, result.data(), srcs, elements, static_cast<int>(srcs.size()), false);
  for (void* dst : dsts) std::memcpy(dst, result.data(), result.size());
}

/// The direct-read reductions (one-shot, two-shot, shard reduction): each rank reduces [begin, end) of every
/// source into its destinations.
inline void runReductionModel(DataType type, const std::vector<kernels::CollReduceArgs>& args) {
  const int n = static_cast<int>(args.size());
  const std::size_t size = dataTypeSize(type);
  for (const kernels::CollReduceArgs& rank : args) {
    if (rank.ndst == 0 || rank.end <= rank.begin) continue;
    std::vector<const void*> srcs;
    for (int j = 0; j < n; ++j) srcs.push_back(static_cast<const std::byte*>(rank.src[j]) + rank.begin * size);
    std::vector<void*> dsts;
    for (int k = 0; k < rank.ndst; ++k) dsts.push_back(static_cast<std::byte*>(rank.dst[k]) + rank.begin * size);
    reduceInto(type, dsts, srcs, rank.end - rank.begin);
  }
}

/// The copy kernel: every job's source into each of its destinations.
inline void runCopyModel(const std::vector<kernels::CollCopyArgs>& args) {
  for (const kernels::CollCopyArgs& rank : args) {
    for (int j = 0; j < rank.njobs; ++j) {
      for (int k = 0; k < rank.jobs[j].ndst; ++k)
        std::memcpy(rank.jobs[j].dst[k], rank.jobs[j].src, rank.jobs[j].bytes);
    }
  }
}

}  // namespace peerlink::coll
