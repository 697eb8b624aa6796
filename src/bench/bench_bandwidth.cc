// Bandwidth cases: one way, both ways at once, relay, host <-> device. Each cell: verify once (pattern
// into a poisoned destination, checked on the destination's GPU), warm up, then time each iteration
// with events on the stream that carries the copy; buffers rotate when a size fits in L2, so the cache
// does not flatter small sizes.
#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "bench/bench_measure.hpp"
#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "kernels/latch_kernel.cuh"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "topology/link_model.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {
namespace {

BenchCell oneWayCell(BenchContext& context, const Route& route, int src, int dst, std::size_t bytes) {
  BenchCell cell = pairCell(src, dst, bytes);
  // A relay split across several GPUs is shown as a matrix cell of the pair; one relay GPU as "via k".
  cell.via = route.mode == RouteMode::Relay && route.relayStripes.size() <= 1 ? route.relayGpu : -1;
  cell.route = describeRoute(context.topology, {src, dst, bytes, ProcessBoundary::SameProcess}, route);
  const GpuPair& pair = context.topology.pair(src, dst);
  cell.expectedGBps = route.mode == RouteMode::Direct ? pair.expectedGBps : 0;
  return cell;
}

void measureOneWay(BenchContext& context, BenchCell& cell, const Route& route) {
  const int count = bufferCount(cell.bytes);
  BufferSet sources(cell.src, cell.bytes, count);
  BufferSet destinations(cell.dst, cell.bytes, count);
  const int executing = executingDevice(route, cell.src, cell.dst);
  Stream stream(executing);
  if (context.options.verify) {
    cell.verified = true;
    cell.wrongBytes =
        verifyCopy(context, route, cell.src, cell.dst, destinations.at(0), sources.at(0), cell.bytes, stream.get());
  }
  fillTiming(cell,
             timeIterations(executing, stream.get(), context.options.warmup, context.options.iterations, [&](int i) {
               context.transport.copy({destinations.at(i), cell.dst}, {sources.at(i), cell.src}, cell.bytes, route,
                                      stream.get());
             }));
}

}  // namespace

void runOneWayCase(BenchContext& context, BenchCaseResult& result, RouteMode mode, Engine engine, Direction direction) {
  forEachPair(context, result, context.sizes, [&](int src, int dst, std::size_t bytes) {
    Route route;
    try {
      route = forcedRoute(context, src, dst, bytes, mode, engine, direction);
    } catch (const Error& error) {
      BenchCell cell = pairCell(src, dst, bytes);
      cell.error = error.what();
      result.cells.push_back(cell);
      return;
    }
    measureCell(result, oneWayCell(context, route, src, dst, bytes),
                [&](BenchCell& cell) { measureOneWay(context, cell, route); });
  });
}

void runSplitRelayCase(BenchContext& context, BenchCaseResult& result) {
  forEachPair(context, result, context.sizes, [&](int src, int dst, std::size_t bytes) {
    const Route route = forcedRoute(context, src, dst, bytes, RouteMode::Relay, Engine::Sm, Direction::Read);
    measureCell(result, oneWayCell(context, route, src, dst, bytes),
                [&](BenchCell& cell) { measureOneWay(context, cell, route); });
  });
}

void runRelayCase(BenchContext& context, BenchCaseResult& result, Engine engine) {
  for (std::size_t bytes : context.sizes) {
    for (int src : context.devices) {
      for (int dst : context.devices) {
        for (int via : context.devices) {
          if (src == dst || via == src || via == dst) continue;
          context.progress(fmt::format("{} GPU {} -> GPU {} via {} {} bytes", result.name, src, dst, via, bytes));
          const Route route = forcedRoute(context, src, dst, bytes, RouteMode::Relay, engine, Direction::Write, via);
          measureCell(result, oneWayCell(context, route, src, dst, bytes),
                      [&](BenchCell& cell) { measureOneWay(context, cell, route); });
        }
      }
    }
  }
}

// Both directions of a pair at once: each direction's copies queue behind a latch kernel on its own
// stream, so they start together; each direction is timed by its own events (events of two GPUs cannot
// be compared), and the cell reports the sum of the two directions' bandwidths.
void runBothWaysCase(BenchContext& context, BenchCaseResult& result, Engine engine, Direction direction) {
  const auto timeoutNs = static_cast<std::uint64_t>(context.params.getInt("PEERLINK_TIMEOUT_MS")) * 1000000ull;
  for (std::size_t bytes : context.sizes) {
    for (int a : context.devices) {
      for (int b : context.devices) {
        if (a >= b) continue;
        context.progress(fmt::format("{} GPU {} <-> GPU {} {} bytes", result.name, a, b, bytes));
        BenchCell cell;
        cell.src = a;
        cell.dst = b;
        cell.bytes = bytes;
        cell.expectedGBps = context.topology.pair(a, b).expectedGBps + context.topology.pair(b, a).expectedGBps;
        measureCell(result, cell, [&](BenchCell& measured) {
          const Route forward = forcedRoute(context, a, b, bytes, RouteMode::Direct, engine, direction);
          const Route backward = forcedRoute(context, b, a, bytes, RouteMode::Direct, engine, direction);
          measured.route = describeRoute(context.topology, {a, b, bytes, ProcessBoundary::SameProcess}, forward);
          const int count = bufferCount(bytes);
          BufferSet onA(a, bytes, count), fromA(a, bytes, count), onB(b, bytes, count), fromB(b, bytes, count);
          Stream streamA(a), streamB(b);
          // Each direction runs on the GPU its route executes on: the source when writing, else the destination.
          const int forwardDevice = executingDevice(forward, a, b);
          const int backwardDevice = executingDevice(backward, b, a);
          const cudaStream_t forwardStream = forwardDevice == a ? streamA.get() : streamB.get();
          const cudaStream_t backwardStream = backwardDevice == a ? streamA.get() : streamB.get();
          if (context.options.verify) {
            measured.verified = true;
            measured.wrongBytes = verifyCopy(context, forward, a, b, onB.at(0), fromA.at(0), bytes, forwardStream) +
                                  verifyCopy(context, backward, b, a, onA.at(0), fromB.at(0), bytes, backwardStream);
          }
          PinnedBuffer latch(sizeof(std::uint64_t) + 2 * sizeof(kernels::DeviceStatus),
                             cudaHostAllocMapped | cudaHostAllocPortable);
          auto* flag = static_cast<volatile std::uint64_t*>(latch.data());
          auto* statuses = reinterpret_cast<kernels::DeviceStatus*>(static_cast<char*>(latch.data()) + 8);
          *flag = 0;
          statuses[0] = statuses[1] = kernels::pendingStatus();
          {
            DeviceGuard guard(a);
            kernels::launchLatch(flag, timeoutNs, &statuses[0], streamA.get());
          }
          {
            DeviceGuard guard(b);
            kernels::launchLatch(flag, timeoutNs, &statuses[1], streamB.get());
          }
          TimedRun there(forwardDevice, forwardStream, context.options.warmup, context.options.iterations, [&](int i) {
            context.transport.copy({onB.at(i), b}, {fromA.at(i), a}, bytes, forward, forwardStream);
          });
          TimedRun back(backwardDevice, backwardStream, context.options.warmup, context.options.iterations, [&](int i) {
            context.transport.copy({onA.at(i), a}, {fromB.at(i), b}, bytes, backward, backwardStream);
          });
          std::atomic_thread_fence(std::memory_order_seq_cst);
          *flag = 1;  // both directions are queued: release them together
          const std::vector<double> forwardUs = there.microseconds();
          const std::vector<double> backwardUs = back.microseconds();
          kernels::throwIfDeviceFailed(statuses[0], fmt::format("latch on GPU {}", a));
          kernels::throwIfDeviceFailed(statuses[1], fmt::format("latch on GPU {}", b));
          // Times are the forward direction's; the bandwidth is both directions' sum.
          const double backwardMedian = computeStats(backwardUs).median;
          fillTiming(measured, forwardUs);
          if (backwardMedian > 0) measured.gbps += static_cast<double>(bytes) / (backwardMedian * 1e3);
        });
      }
    }
  }
}

void runHostCase(BenchContext& context, BenchCaseResult& result, bool toDevice) {
  for (std::size_t bytes : context.sizes) {
    for (int device : context.devices) {
      context.progress(fmt::format("{} GPU {} {} bytes", result.name, device, bytes));
      BenchCell cell;
      cell.src = toDevice ? -1 : device;
      cell.dst = toDevice ? device : -1;
      cell.bytes = bytes;
      const Gpu& gpu = context.topology.gpus[static_cast<std::size_t>(device)];
      cell.expectedGBps = pcieGBps(gpu.pcie.gen, gpu.pcie.width);
      cell.route = fmt::format("{} GPU {} (pinned host memory, copy engine)", toDevice ? "host ->" : "host <-", device);
      measureCell(result, cell, [&](BenchCell& measured) {
        PinnedBuffer host(bytes, cudaHostAllocMapped | cudaHostAllocPortable);
        DeviceBuffer gpuBuffer(device, bytes);
        Stream stream(device);
        DeviceGuard guard(device);
        void* dst = toDevice ? gpuBuffer.data() : host.data();
        const void* src = toDevice ? host.data() : gpuBuffer.data();
        const cudaMemcpyKind kind = toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        if (context.options.verify) {
          // Mapped host memory is addressable by kernels, so the pattern is made and checked on the GPU.
          const std::uint64_t seed = 0xB0570000ull + bytes;
          kernels::launchFillPattern(const_cast<void*>(src), bytes, seed, stream.get());
          kernels::launchFillByte(dst, bytes, kPoisonByte, stream.get());
          PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()));
          measured.verified = true;
          measured.wrongBytes = PatternChecker(device).checkPattern(dst, bytes, seed, stream.get()).mismatches;
        }
        fillTiming(measured,
                   timeIterations(device, stream.get(), context.options.warmup, context.options.iterations, [&](int) {
                     PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()));
                   }));
      });
    }
  }
}

}  // namespace peerlink
