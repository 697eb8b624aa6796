#include "bench/bench_measure.hpp"

#include <algorithm>

#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/error.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {

namespace {

// Enough buffers that one pass over them is several times the H100/H200 L2 (50-60 MB).
constexpr std::size_t kRotationBytes = std::size_t{256} << 20;
constexpr int kMaxBuffers = 16;

}  // namespace

int bufferCount(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>(kRotationBytes / std::max<std::size_t>(bytes, 1), 1, kMaxBuffers));
}

BufferSet::BufferSet(int device, std::size_t bytes, int count) {
  for (int i = 0; i < count; ++i) buffers.emplace_back(device, bytes);
}

Route forcedRoute(const BenchContext& context, int src, int dst, std::size_t bytes, RouteMode mode, Engine engine,
                  Direction direction, int via) {
  Params params = context.params;
  const char* modeName = mode == RouteMode::Direct   ? "direct"
                         : mode == RouteMode::Relay  ? "relay"
                         : mode == RouteMode::Staged ? "staged"
                                                     : "auto";
  params.set("PEERLINK_P2P_MODE", modeName);
  params.set("PEERLINK_P2P_ENGINE", engine == Engine::Sm ? "sm" : "ce");
  params.set("PEERLINK_P2P_READ", direction == Direction::Read ? "1" : "0");
  params.set("PEERLINK_PUT_SIGNAL_MAX_BYTES", "0");
  if (via >= 0) params.set("PEERLINK_RELAY_GPU", std::to_string(via));
  return selectRoute(context.topology, params, {src, dst, bytes, ProcessBoundary::SameProcess});
}

std::uint64_t verifyCopy(BenchContext& context, const Route& route, int src, int dst, void* dstBuffer,
                         const void* srcBuffer, std::size_t bytes, cudaStream_t stream) {
  const std::uint64_t seed = 0x5EED0000ull + bytes;
  {
    DeviceGuard guard(src);
    kernels::launchFillPattern(const_cast<void*>(srcBuffer), bytes, seed, nullptr);
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  }
  {
    DeviceGuard guard(dst);
    kernels::launchFillByte(dstBuffer, bytes, kPoisonByte, nullptr);
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  }
  context.transport.copy({dstBuffer, dst}, {srcBuffer, src}, bytes, route, stream);
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream));
  Stream checkStream(dst);
  return PatternChecker(dst).checkPattern(dstBuffer, bytes, seed, checkStream.get()).mismatches;
}

TimedRun::TimedRun(int device, cudaStream_t stream, int warmup, int iterations, const std::function<void(int)>& enqueue)
    : device_(device), stream_(stream) {
  DeviceGuard guard(device);
  for (int i = 0; i < warmup; ++i) enqueue(i);
  for (int i = 0; i < iterations; ++i) {
    starts_.emplace_back(device);
    ends_.emplace_back(device);
    PEERLINK_CUDA_CHECK(cudaEventRecord(starts_.back().get(), stream));
    enqueue(warmup + i);
    PEERLINK_CUDA_CHECK(cudaEventRecord(ends_.back().get(), stream));
  }
}

std::vector<double> TimedRun::microseconds() {
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<double> result;
  for (std::size_t i = 0; i < starts_.size(); ++i) {
    float ms = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, starts_[i].get(), ends_[i].get()));
    result.push_back(static_cast<double>(ms) * 1000.0);
  }
  return result;
}

std::vector<double> timeIterations(int device, cudaStream_t stream, int warmup, int iterations,
                                   const std::function<void(int)>& enqueue) {
  return TimedRun(device, stream, warmup, iterations, enqueue).microseconds();
}

void fillTiming(BenchCell& cell, const std::vector<double>& microseconds) {
  const SampleStats stats = computeStats(microseconds);
  cell.medianUs = stats.median;
  cell.minUs = stats.min;
  cell.maxUs = stats.max;
  cell.p99Us = stats.p99;
  cell.gbps = stats.median > 0 ? static_cast<double>(cell.bytes) / (stats.median * 1e3) : 0;
}

void measureCell(BenchCaseResult& result, BenchCell cell, const std::function<void(BenchCell&)>& measure) {
  try {
    measure(cell);
  } catch (const Error& error) {
    cell.error = error.what();
  }
  result.cells.push_back(std::move(cell));
}

}  // namespace peerlink
