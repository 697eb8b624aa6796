// Every GPU of a communicator traced (kernels::setCollTrace) for a guard's life: the traced kernels' block
// records of each rank's latest traced launch, read back per rank.
#pragma once

#include <cstddef>
#include <vector>

#include "coll_test_support.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink::testing {

class CollTraceGuard {
 public:
  static constexpr std::size_t kRecords = 256;  // kCollMaxBlocks: more than any traced kernel's grid

  explicit CollTraceGuard(const Communicator& comm) : comm_(comm) {
    for (int r = 0; r < comm.size(); ++r) {
      buffers_.emplace_back(comm.device(r), kRecords * sizeof(kernels::CollTraceRecord));
      DeviceGuard guard(comm.device(r));
      PEERLINK_CUDA_CHECK(cudaMemset(buffers_.back().data(), 0, buffers_.back().size()));
      kernels::setCollTrace(static_cast<kernels::CollTraceRecord*>(buffers_.back().data()));
    }
  }
  ~CollTraceGuard() {
    for (int r = 0; r < comm_.size(); ++r) {
      DeviceGuard guard(comm_.device(r));
      kernels::setCollTrace(nullptr);
    }
  }
  CollTraceGuard(const CollTraceGuard&) = delete;
  CollTraceGuard& operator=(const CollTraceGuard&) = delete;

  /// Rank r's records (every block index; those past the latest launch's grid as an earlier launch, or the
  /// guard's start, left them: zero).
  std::vector<kernels::CollTraceRecord> records(int r) const {
    std::vector<kernels::CollTraceRecord> out(kRecords);
    PEERLINK_CUDA_CHECK(cudaMemcpy(out.data(), buffers_[static_cast<std::size_t>(r)].data(),
                                   out.size() * sizeof(out[0]), cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  const Communicator& comm_;
  std::vector<DeviceBuffer> buffers_;
};

}  // namespace peerlink::testing
