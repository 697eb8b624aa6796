// Development tool, not a test: whether a broadcast as a chain of copy-engine copies can beat the SM ring's
// ~366 GB/s, the rate at which its middle ranks receive and pass on every byte with SM stores (round 53
// call C's trace; rounds 43-52). The chain runs GPU 0 -> 1 -> ... -> n-1 in chunks: GPU 0 copies chunk c into
// GPU 1's buffer on its copy engine and then writes GPU 1's flag of chunk c (cuStreamWriteValue64, ordered
// after the copy by its stream); each GPU after it waits for its own flag of chunk c (cuStreamWaitValue64),
// copies the chunk on into the next GPU's buffer and writes that GPU's flag; the last GPU only waits. Chunk c
// goes on stream c mod `streams` of every GPU, so several copy engines overlap their per-copy cost (~7 us,
// round 47 call K) instead of paying it one after another. Every GPU sending to the next on its copy engine
// while receiving moved 387.9 GB/s each way (round 51 call A), against SM stores' 364.5. What it found
// (round 53 call F, 4x H100, 512 MiB): 1699.7 us at best (32 MiB chunks, one stream) against the SM ring's
// 1483-1491 in the same call; each chunk costs ~7.5 us beyond its bytes, and more streams do not overlap it.
//
// Prints, per chunk size and stream count, the slowest GPU's time from a latch's release to its last stream's
// end (median over the rounds) and the broadcast bandwidth that makes (bytes / time). The flags hold the
// round's number, so they never need resetting. Stream memory waits have no deadline: a product would need a
// watchdog to turn a lost flag into an error; here the host's waits for the streams have one (waitForStream).
// The last GPU's buffer is checked against the pattern the round wrote into GPU 0's.
// Every chunk's work is queued on every GPU before the latch opens: a size whose queue fills first (1 GiB in
// 2 MiB chunks, round 53 call F) blocks the host until the latch times out, and the tool says so.
// Usage: peerlink_ce_chain [iterations] [MiB]
#include <cuda.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/stream_wait.hpp"
#include "kernels/device_status.cuh"
#include "kernels/latch_kernel.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "tool_main.hpp"
#include "transport/peer_access.hpp"

namespace peerlink {
namespace {

constexpr std::uint64_t kLatchTimeoutNs = 5'000'000'000ull;
constexpr std::chrono::milliseconds kRoundTimeout{10'000};
constexpr int kMaxStreams = 8;

struct StreamOps {
  decltype(&::cuStreamWaitValue64) wait = nullptr;
  decltype(&::cuStreamWriteValue64) write = nullptr;
};

template <typename Function>
void resolve(const char* symbol, Function& function) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  PEERLINK_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &address, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    throw Error(ErrorCode::Unsupported, fmt::format("the driver has no {}", symbol));
  }
  function = reinterpret_cast<Function>(address);
}

void check(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) throw Error(ErrorCode::CudaError, fmt::format("{} failed: CUresult {}", what, result));
}

struct Gpu {
  int device = 0;
  DeviceBuffer data;   // GPU 0: the source; the others: where the chain stores
  DeviceBuffer flags;  // one 8-byte flag per chunk, written by the previous GPU
  std::vector<Stream> streams;
  std::vector<Event> ends;
  Event start;
};

struct Shape {
  std::size_t chunk = 0;
  int streams = 1;
};

// The slowest GPU's microseconds from its latch's release to its last stream's end, for round `value`.
double oneRound(std::vector<Gpu>& gpus, std::size_t total, const Shape& shape, std::uint64_t value,
                const StreamOps& ops, volatile std::uint64_t* latch, kernels::DeviceStatus* statuses) {
  const int n = static_cast<int>(gpus.size());
  const std::size_t chunks = (total + shape.chunk - 1) / shape.chunk;
  *latch = 0;
  {
    DeviceGuard guard(gpus[0].device);  // this round's pattern in the source, before the latch
    PEERLINK_CUDA_CHECK(
        cudaMemsetAsync(gpus[0].data.data(), static_cast<int>(value & 0xff), total, gpus[0].streams[0].get()));
    PEERLINK_CUDA_CHECK(cudaStreamSynchronize(gpus[0].streams[0].get()));
  }
  for (int r = 0; r < n; ++r) {
    Gpu& gpu = gpus[static_cast<std::size_t>(r)];
    DeviceGuard guard(gpu.device);
    for (int k = 0; k < shape.streams; ++k) {
      statuses[r * kMaxStreams + k] = kernels::pendingStatus();
      kernels::launchLatch(latch, kLatchTimeoutNs, &statuses[r * kMaxStreams + k], gpu.streams[k].get());
    }
    PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.start.get(), gpu.streams[0].get()));
    for (std::size_t c = 0; c < chunks; ++c) {
      CUstream stream = gpu.streams[c % static_cast<std::size_t>(shape.streams)].get();
      const std::size_t offset = c * shape.chunk;
      const std::size_t bytes = std::min(shape.chunk, total - offset);
      auto* own = static_cast<char*>(gpu.data.data()) + offset;
      if (r > 0) {
        const auto flag = reinterpret_cast<CUdeviceptr>(static_cast<std::uint64_t*>(gpu.flags.data()) + c);
        check(ops.wait(stream, flag, value, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
      }
      if (r + 1 < n) {
        Gpu& next = gpus[static_cast<std::size_t>(r + 1)];
        PEERLINK_CUDA_CHECK(
            cudaMemcpyAsync(static_cast<char*>(next.data.data()) + offset, own, bytes, cudaMemcpyDefault, stream));
        const auto flag = reinterpret_cast<CUdeviceptr>(static_cast<std::uint64_t*>(next.flags.data()) + c);
        check(ops.write(stream, flag, value, 0), "cuStreamWriteValue64");
      }
    }
    for (int k = 0; k < shape.streams; ++k)
      PEERLINK_CUDA_CHECK(cudaEventRecord(gpu.ends[k].get(), gpu.streams[k].get()));
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *latch = 1;
  double slowest = 0;
  for (int r = 0; r < n; ++r) {
    Gpu& gpu = gpus[static_cast<std::size_t>(r)];
    DeviceGuard guard(gpu.device);
    for (int k = 0; k < shape.streams; ++k) {
      waitForStream(gpu.streams[k].get(), kRoundTimeout, fmt::format("GPU {} stream {}", gpu.device, k));
      kernels::throwIfDeviceFailed(statuses[r * kMaxStreams + k], "latch");
      float ms = 0;
      PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, gpu.start.get(), gpu.ends[k].get()));
      slowest = std::max(slowest, static_cast<double>(ms) * 1000.0);
    }
  }
  // The last GPU holds the round's pattern at every chunk's first and last byte.
  const Gpu& last = gpus.back();
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t offset = c * shape.chunk;
    const std::size_t bytes = std::min(shape.chunk, total - offset);
    for (const std::size_t at : {offset, offset + bytes - 1}) {
      unsigned char seen = 0;
      PEERLINK_CUDA_CHECK(cudaMemcpy(&seen, static_cast<const char*>(last.data.data()) + at, 1, cudaMemcpyDefault));
      if (seen != static_cast<unsigned char>(value & 0xff)) {
        throw Error(ErrorCode::CudaError,
                    fmt::format("round {}: GPU {} byte {} is {}, not {}", value, last.device, at, seen, value & 0xff));
      }
    }
  }
  return slowest;
}

int run(int iterations, std::size_t total) {
  const int count = tools::gpusBetween("peerlink_ce_chain", 2);
  if (count == 0) return 2;
  StreamOps ops;
  resolve("cuStreamWaitValue64", ops.wait);
  resolve("cuStreamWriteValue64", ops.write);
  const std::vector<std::size_t> chunkMiB = {2, 4, 8, 16, 32};
  const std::size_t mostChunks = total / (chunkMiB.front() << 20) + 1;
  PeerAccessTable peers;
  std::vector<Gpu> gpus;
  for (int d = 0; d < count; ++d) {
    DeviceGuard guard(d);
    for (int p = 0; p < count; ++p) peers.enable(d, p);
    Gpu gpu{d, DeviceBuffer(d, total), DeviceBuffer(d, mostChunks * sizeof(std::uint64_t)), {}, {}, Event(d)};
    PEERLINK_CUDA_CHECK(cudaMemset(gpu.flags.data(), 0, gpu.flags.size()));
    for (int k = 0; k < kMaxStreams; ++k) {
      gpu.streams.emplace_back(d);
      gpu.ends.emplace_back(d);
    }
    gpus.push_back(std::move(gpu));
  }
  PinnedBuffer latchMemory(sizeof(std::uint64_t), cudaHostAllocMapped | cudaHostAllocPortable);
  PinnedBuffer statusMemory(sizeof(kernels::DeviceStatus) * kMaxStreams * gpus.size(),
                            cudaHostAllocMapped | cudaHostAllocPortable);
  auto* latch = static_cast<volatile std::uint64_t*>(latchMemory.data());
  auto* statuses = static_cast<kernels::DeviceStatus*>(statusMemory.data());
  fmt::print(
      "{} GPUs, a {} MiB broadcast from GPU 0 along a chain of copy-engine copies; slowest GPU, median of {} "
      "rounds\n",
      count, total >> 20, iterations);
  fmt::print("{:>10} {:>8} {:>10} {:>10}\n", "chunk MiB", "streams", "us", "GB/s");
  std::uint64_t value = 0;
  for (const std::size_t mib : chunkMiB) {
    for (const int streams : {1, 2, 4, 8}) {
      const Shape shape{mib << 20, streams};
      const double median = tools::medianOfRounds(
          iterations, [&] { return oneRound(gpus, total, shape, ++value, ops, latch, statuses); });
      fmt::print("{:>10} {:>8} {:>10.1f} {:>10.1f}\n", mib, streams, median,
                 static_cast<double>(total) / (median * 1e3));
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  using peerlink::tools::positionalArg;
  const auto iterations = static_cast<int>(positionalArg(argc, argv, 1, 11, 1));
  const auto mib = static_cast<std::size_t>(positionalArg(argc, argv, 2, 512, 1));
  return peerlink::tools::runTool("peerlink_ce_chain", [&] { return peerlink::run(iterations, mib << 20); });
}
