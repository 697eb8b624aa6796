// gpuStagedMemory (gpu_staged_memory.hpp).
#include "net/gpu_staged_memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/kernel_preload.cuh"
#include "kernels/plan_reduce.cuh"
#include "net/stream_markers.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::net {
namespace {

class GpuStagedMemory final : public LocalMemory {
 public:
  // The reduction kernels are loaded now, while nothing of the transport's spins: with lazy module loading a first
  // launch may wait for every kernel this process runs on the device (kernels/kernel_preload.cuh).
  explicit GpuStagedMemory(int device) : device_(device), stream_(device), markers_(device, stream_.get()) {
    DeviceGuard guard(device_);
    kernels::ensureKernelsLoaded();
  }

  ~GpuStagedMemory() override {
    if (leaked_) return;
    for (Lane& lane : lanes_) {
      for (Pinned& buffer : lane.pool) freePinned(buffer);
    }
    for (Pinned& buffer : retired_) freePinned(buffer);
    freePinned(persistent_);
    freePinned(accumulator_);
  }

  // On the stream too, so that everything this memory does runs in the order it was asked.
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0 || dst == src) return;
    DeviceGuard guard(device_);
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
  }

  // More sources than a kernel takes: the first kCollMaxRanks into an accumulator of this memory's, then the
  // accumulator and the next ones, the last launch into dst (finishing): all in order on the stream, and dst written
  // only by the last launch, so it may be any of the sources.
  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override {
    if (count == 0 || srcs.empty()) return;
    const auto most = static_cast<std::size_t>(kernels::kCollMaxRanks);
    void* accumulator = srcs.size() > most ? grown(accumulator_, count * dataTypeSize(type)) : nullptr;
    std::size_t next = 0;
    while (next < srcs.size()) {
      std::vector<const void*> group;
      if (next > 0) group.push_back(accumulator);
      const std::size_t take = std::min(srcs.size() - next, most - group.size());
      group.insert(group.end(), srcs.begin() + static_cast<std::ptrdiff_t>(next),
                   srcs.begin() + static_cast<std::ptrdiff_t>(next + take));
      next += take;
      const bool last = next == srcs.size();
      launch(type, op, last ? dst : accumulator, group, count, divisor, last && finish);
    }
  }

  // Buffers are never freed while in use: one too small is retired (freed with the memory), so the transport's
  // thread never frees pinned memory, which waits for the GPU, in the middle of a call.
  void* temporary(std::size_t lane, std::size_t bytes) override {
    if (lane >= lanes_.size()) lanes_.resize(lane + 1);
    Lane& mine = lanes_[lane];
    if (mine.used == mine.pool.size()) mine.pool.emplace_back();
    return grown(mine.pool[mine.used++], bytes);
  }

  void release(std::size_t lane) override {
    if (lane < lanes_.size()) lanes_[lane].used = 0;
  }

  void* persistent(std::size_t bytes) override { return grown(persistent_, bytes); }

  void leak() noexcept override { leaked_ = true; }

  bool queues() const override { return true; }
  std::uint64_t mark() override { return markers_.mark(); }
  bool reached(std::uint64_t marker) override { return markers_.reached(marker); }

 private:
  struct Pinned {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  struct Lane {
    std::vector<Pinned> pool;
    std::size_t used = 0;
  };

  void launch(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) {
    const kernels::PlanReduceArgs args =
        kernels::planReduceArgs(dst, srcs.data(), static_cast<int>(srcs.size()), count, divisor, finish);
    DeviceGuard guard(device_);
    kernels::launchPlanReduce(args, static_cast<kernels::CollType>(static_cast<int>(type)),
                              static_cast<kernels::CollOp>(static_cast<int>(op)),
                              kernels::planReduceBlocksOverHostMemory(count), stream_.get());
  }

  void* grown(Pinned& buffer, std::size_t bytes) {
    if (buffer.data != nullptr && buffer.bytes >= bytes) return buffer.data;
    if (buffer.data != nullptr) retired_.push_back(buffer);
    buffer = {};
    DeviceGuard guard(device_);
    const std::size_t size = std::max<std::size_t>(bytes, 16);
    PEERLINK_CUDA_CHECK(cudaHostAlloc(&buffer.data, size, cudaHostAllocPortable | cudaHostAllocMapped));
    buffer.bytes = size;
    return buffer.data;
  }

  static void freePinned(Pinned& buffer) noexcept {
    if (buffer.data != nullptr) (void)cudaFreeHost(buffer.data);
    buffer = {};
  }

  int device_;
  Stream stream_;
  StreamMarkers markers_;
  std::vector<Lane> lanes_;
  std::vector<Pinned> retired_;
  Pinned persistent_;
  Pinned accumulator_;
  bool leaked_ = false;
};

}  // namespace

std::unique_ptr<LocalMemory> gpuStagedMemory(int device) {
  return std::make_unique<GpuStagedMemory>(device);
}

}  // namespace peerlink::net
