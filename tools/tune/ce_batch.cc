// Development tool, not a test: what a GPU's copy-engine pushes to its peers cost, queued one cudaMemcpyAsync
// after another on one stream (as comm_launch_copy_engine.cc queues an all-gather's) against one
// cudaMemcpyBatchAsync of the same copies (CUDA 12.8+; the driver may order a batch's copies as it likes).
// Every GPU pushes at once, an all-gather's pattern (its block into block r of every peer's output), the
// next peer first; a latch kernel on every stream releases them together. Prints per size and way the
// slowest GPU's time from its latch to its last copy (events; median over the iterations) and what that is
// per copy beyond the bytes at the copy engine's rate (the fit of time against size over the sizes).
// Usage: peerlink_ce_batch [iterations]
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/device_status.cuh"
#include "kernels/latch_kernel.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "tool_main.hpp"
#include "transport/peer_access.hpp"

namespace peerlink {
namespace {

constexpr std::uint64_t kLatchTimeoutNs = 5'000'000'000ull;

enum class Way { OneAfterAnother, Batch, OneCopy };

const char* wayName(Way way) {
  switch (way) {
    case Way::OneAfterAnother: return "one cudaMemcpyAsync after another";
    case Way::Batch: return "one cudaMemcpyBatchAsync";
    case Way::OneCopy: return "the next peer's copy alone";
  }
  return "?";
}

struct Gpu {
  int device = 0;
  DeviceBuffer send;
  DeviceBuffer recv;
  Stream stream;
  Event start;
  Event end;
};

// GPU r's copies of `bytes`: its send buffer into block r of every peer's output, the next peer first.
void enqueue(std::vector<Gpu>& gpus, int r, std::size_t bytes, Way way) {
  const int n = static_cast<int>(gpus.size());
  Gpu& gpu = gpus[static_cast<std::size_t>(r)];
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<std::size_t> sizes;
  for (int p = 1; p < n; ++p) {
    Gpu& peer = gpus[static_cast<std::size_t>((r + p) % n)];
    dsts.push_back(static_cast<char*>(peer.recv.data()) + bytes * static_cast<std::size_t>(r));
    srcs.push_back(gpu.send.data());
    sizes.push_back(bytes);
    if (way == Way::OneCopy) break;
  }
  if (way == Way::Batch) {
    cudaMemcpyAttributes attributes = {};
    attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    std::size_t first = 0;
    PEERLINK_CUDA_CHECK(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(), &attributes, &first,
                                             1, gpu.stream.get()));
    return;
  }
  for (std::size_t i = 0; i < dsts.size(); ++i) {
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, gpu.stream.get()));
  }
}

// The slowest GPU's microseconds from its latch's release to its last copy's end, for one round.
double oneRound(std::vector<Gpu>& gpus, std::size_t bytes, Way way, volatile std::uint64_t* flag,
                kernels::DeviceStatus* statuses) {
  *flag = 0;
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    Gpu& gpu = gpus[r];
    DeviceGuard guard(gpu.device);
    statuses[r] = kernels::pendingStatus();
    kernels::launchLatch(flag, kLatchTimeoutNs, &statuses[r], gpu.stream.get());
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.start.get(), gpu.stream.get()));
    enqueue(gpus, static_cast<int>(r), bytes, way);
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.end.get(), gpu.stream.get()));
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag = 1;
  double slowest = 0;
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(gpus[r].end.get()));
    kernels::throwIfDeviceFailed(statuses[r], "latch");
    float ms = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, gpus[r].start.get(), gpus[r].end.get()));
    slowest = std::max(slowest, static_cast<double>(ms) * 1000.0);
  }
  return slowest;
}

int run(int iterations) {
  const int count = tools::gpusBetween("peerlink_ce_batch", 2);
  if (count == 0) return 2;
  const std::vector<std::size_t> sizes = {std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20,
                                          std::size_t{64} << 20, std::size_t{128} << 20};
  const std::size_t largest = sizes.back();
  PeerAccessTable peers;
  std::vector<Gpu> gpus;
  for (int d = 0; d < count; ++d) {
    DeviceGuard guard(d);
    for (int p = 0; p < count; ++p) peers.enable(d, p);
    gpus.push_back(Gpu{d, DeviceBuffer(d, largest), DeviceBuffer(d, largest * static_cast<std::size_t>(count)),
                       Stream(d), Event(d), Event(d)});
  }
  PinnedBuffer flagMemory(sizeof(std::uint64_t), cudaHostAllocMapped | cudaHostAllocPortable);
  PinnedBuffer statusMemory(sizeof(kernels::DeviceStatus) * gpus.size(), cudaHostAllocMapped | cudaHostAllocPortable);
  auto* flag = static_cast<volatile std::uint64_t*>(flagMemory.data());
  auto* statuses = static_cast<kernels::DeviceStatus*>(statusMemory.data());
  fmt::print("{} GPUs, each pushing its block to every peer at once; slowest GPU's time, median of {} rounds (us)\n",
             count, iterations);
  fmt::print("{:>10}", "bytes");
  for (Way way : {Way::OneAfterAnother, Way::Batch, Way::OneCopy}) fmt::print("  {:>34}", wayName(way));
  fmt::print("\n");
  for (std::size_t bytes : sizes) {
    fmt::print("{:>10}", bytes);
    for (Way way : {Way::OneAfterAnother, Way::Batch, Way::OneCopy}) {
      fmt::print("  {:>34.1f}",
                 tools::medianOfRounds(iterations, [&] { return oneRound(gpus, bytes, way, flag, statuses); }));
    }
    fmt::print("\n");
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  const auto iterations = static_cast<int>(peerlink::tools::positionalArg(argc, argv, 1, 11, 1));
  return peerlink::tools::runTool("peerlink_ce_batch", [&] { return peerlink::run(iterations); });
}
