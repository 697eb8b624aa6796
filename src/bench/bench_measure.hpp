// Measurement helpers shared by the benchmark cases: buffer rotation, forced routes, verification of one
// copy, event timing of queued iterations, and turning a failed cell into a FAILED result.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "bench/bench_case.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink {

/// How many buffers of `bytes` a cell rotates through so one pass overflows L2 (50-60 MB on H100/H200).
int bufferCount(std::size_t bytes);

/// `count` buffers of `bytes` on `device`, used round-robin.
struct BufferSet {
  std::vector<DeviceBuffer> buffers;
  BufferSet(int device, std::size_t bytes, int count);
  void* at(int i) const { return buffers[static_cast<std::size_t>(i) % buffers.size()].data(); }
};

/// selectRoute with the case's mode, engine and direction forced (put-with-signal off; `via` >= 0 forces
/// the relay GPU).
Route forcedRoute(const BenchContext& context, int src, int dst, std::size_t bytes, RouteMode mode, Engine engine,
                  Direction direction, int via = -1);

/// One copy by `route` from a pattern-filled source into a poisoned destination, checked on the
/// destination's GPU; returns the number of wrong bytes.
std::uint64_t verifyCopy(BenchContext& context, const Route& route, int src, int dst, void* dstBuffer,
                         const void* srcBuffer, std::size_t bytes, cudaStream_t stream);

/// Events around each timed iteration of one stream; queued first, read once the stream is done, so
/// several streams can be queued behind a latch and released together.
class TimedRun {
 public:
  /// Queues `warmup` untimed then `iterations` timed calls of `enqueue(i)` on `stream` (of `device`).
  TimedRun(int device, cudaStream_t stream, int warmup, int iterations, const std::function<void(int)>& enqueue);
  /// Waits for the stream, then returns each timed iteration in microseconds.
  std::vector<double> microseconds();

 private:
  int device_;
  cudaStream_t stream_;
  std::vector<Event> starts_;
  std::vector<Event> ends_;
};

std::vector<double> timeIterations(int device, cudaStream_t stream, int warmup, int iterations,
                                   const std::function<void(int)>& enqueue);

/// Median/min/max/p99 of `microseconds` into the cell, and its bandwidth at the median.
void fillTiming(BenchCell& cell, const std::vector<double>& microseconds);

/// Runs `measure` for one cell; a peerlink::Error becomes the cell's error (FAILED) instead of ending the run.
void measureCell(BenchCaseResult& result, BenchCell cell, const std::function<void(BenchCell&)>& measure);

}  // namespace peerlink
