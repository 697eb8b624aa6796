// Development tool, not a test: whether a GPU's NVLink port carries more when SM stores and its copy engine
// push at the same time than either alone. Every GPU at once sends `total` bytes: a share (1 - f) by an SM
// copy kernel (launchSmCopy: stores into the peer) into the next GPU, the rest f by its copy engine
// (cudaMemcpyAsync, in `pieces` copies one after another on a second stream) into the next GPU or the one
// after it, so every port carries traffic both ways as in a ring. A latch kernel on both streams of every
// GPU releases everything together. Prints per share the slowest GPU's time from its latch to the later of
// its two streams' last work (events; median over the iterations) and the bytes per second that makes per
// GPU. The rings' SM stores top out at ~372 GB/s on 4x H200 and the copy engines at ~389 both ways loaded
// (docs/performance.md): a mix above the SM kernel's own rate would let the broadcast and reduce chains
// hand part of their bytes to the copy engines.
// Usage: peerlink_engine_mix [iterations] [MiB per GPU]
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/copy_kernels.cuh"
#include "kernels/device_status.cuh"
#include "kernels/latch_kernel.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "tool_main.hpp"
#include "transport/peer_access.hpp"

namespace peerlink {
namespace {

constexpr std::uint64_t kLatchTimeoutNs = 5'000'000'000ull;

struct Gpu {
  int device = 0;
  DeviceBuffer send;
  DeviceBuffer recv;
  Stream smStream;
  Stream ceStream;
  Event start;
  Event smEnd;
  Event ceEnd;
};

struct Mix {
  double ceShare = 0;  // f
  int pieces = 1;      // copy-engine copies the share is cut into
  int ceHop = 1;       // the copy engine's peer: the next GPU (1) or the one after (2)
  int smCount = 0;     // SMs of the copy kernel; 0: all
};

// The slowest GPU's microseconds from its latch's release to its last work's end, for one round.
double oneRound(std::vector<Gpu>& gpus, std::size_t total, const Mix& mix, volatile std::uint64_t* flag,
                kernels::DeviceStatus* statuses) {
  const int n = static_cast<int>(gpus.size());
  const std::size_t ceBytes = static_cast<std::size_t>(static_cast<double>(total) * mix.ceShare) / 4096 * 4096;
  const std::size_t smBytes = total - ceBytes;
  *flag = 0;
  for (int r = 0; r < n; ++r) {
    Gpu& gpu = gpus[static_cast<std::size_t>(r)];
    const Gpu& next = gpus[static_cast<std::size_t>((r + 1) % n)];
    const Gpu& ceTo = gpus[static_cast<std::size_t>((r + mix.ceHop) % n)];
    DeviceGuard guard(gpu.device);
    statuses[2 * r] = kernels::pendingStatus();
    statuses[2 * r + 1] = kernels::pendingStatus();
    kernels::launchLatch(flag, kLatchTimeoutNs, &statuses[2 * r], gpu.smStream.get());
    kernels::launchLatch(flag, kLatchTimeoutNs, &statuses[2 * r + 1], gpu.ceStream.get());
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.start.get(), gpu.smStream.get()));
    // The SM part into the front of the next GPU's buffer, the copy engine's into the back of its peer's.
    if (smBytes > 0) {
      kernels::launchSmCopy(next.recv.data(), gpu.send.data(), smBytes, mix.smCount, gpu.smStream.get());
    }
    const std::size_t piece = ceBytes / static_cast<std::size_t>(mix.pieces) / 4096 * 4096;
    for (int i = 0; i < mix.pieces && piece > 0; ++i) {
      const std::size_t offset = smBytes + piece * static_cast<std::size_t>(i);
      PEERLINK_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(ceTo.recv.data()) + offset,
                                          static_cast<const char*>(gpu.send.data()) + offset, piece, cudaMemcpyDefault,
                                          gpu.ceStream.get()));
    }
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.smEnd.get(), gpu.smStream.get()));
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.ceEnd.get(), gpu.ceStream.get()));
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag = 1;
  double slowest = 0;
  for (int r = 0; r < n; ++r) {
    Gpu& gpu = gpus[static_cast<std::size_t>(r)];
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(gpu.smEnd.get()));
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(gpu.ceEnd.get()));
    kernels::throwIfDeviceFailed(statuses[2 * r], "latch");
    kernels::throwIfDeviceFailed(statuses[2 * r + 1], "latch");
    float smMs = 0;
    float ceMs = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&smMs, gpu.start.get(), gpu.smEnd.get()));
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ceMs, gpu.start.get(), gpu.ceEnd.get()));
    slowest = std::max(slowest, static_cast<double>(std::max(smMs, ceMs)) * 1000.0);
  }
  return slowest;
}

int run(int iterations, std::size_t total) {
  const int count = tools::gpusBetween("peerlink_engine_mix", 2);
  if (count == 0) return 2;
  PeerAccessTable peers;
  std::vector<Gpu> gpus;
  for (int d = 0; d < count; ++d) {
    DeviceGuard guard(d);
    for (int p = 0; p < count; ++p) peers.enable(d, p);
    gpus.push_back(
        Gpu{d, DeviceBuffer(d, total), DeviceBuffer(d, total), Stream(d), Stream(d), Event(d), Event(d), Event(d)});
  }
  PinnedBuffer flagMemory(sizeof(std::uint64_t), cudaHostAllocMapped | cudaHostAllocPortable);
  PinnedBuffer statusMemory(2 * sizeof(kernels::DeviceStatus) * gpus.size(),
                            cudaHostAllocMapped | cudaHostAllocPortable);
  auto* flag = static_cast<volatile std::uint64_t*>(flagMemory.data());
  auto* statuses = static_cast<kernels::DeviceStatus*>(statusMemory.data());
  std::vector<Mix> mixes;
  for (double share : {0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0}) mixes.push_back({share, 1, 1, 0});
  for (double share : {0.1, 0.2}) {
    mixes.push_back({share, 4, 1, 0});                 // the share in four copies
    if (count > 2) mixes.push_back({share, 1, 2, 0});  // the copy engine to another peer
  }
  for (int sms : {66, 100}) {
    mixes.push_back({0.0, 1, 1, sms});
    mixes.push_back({0.15, 1, 1, sms});
  }
  fmt::print(
      "{} GPUs, each sending {} MiB to the next at once, a share by its copy engine; slowest GPU, median of {} "
      "rounds\n",
      count, total >> 20, iterations);
  fmt::print("{:>8} {:>6} {:>7} {:>7} {:>10} {:>10}\n", "CE share", "pieces", "CE hop", "SMs", "us", "GB/s");
  for (const Mix& mix : mixes) {
    const double median = tools::medianOfRounds(iterations, [&] { return oneRound(gpus, total, mix, flag, statuses); });
    fmt::print("{:>8.2f} {:>6} {:>7} {:>7} {:>10.1f} {:>10.1f}\n", mix.ceShare, mix.pieces, mix.ceHop,
               mix.smCount == 0 ? std::string("all") : std::to_string(mix.smCount), median,
               static_cast<double>(total) / (median * 1e3));
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  using peerlink::tools::positionalArg;
  const auto iterations = static_cast<int>(positionalArg(argc, argv, 1, 11, 1));
  const auto mib = static_cast<std::size_t>(positionalArg(argc, argv, 2, 256, 1));
  return peerlink::tools::runTool("peerlink_engine_mix", [&] { return peerlink::run(iterations, mib << 20); });
}
