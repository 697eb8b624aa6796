// Cases that load the machine as a whole or use other kinds of memory: every GPU sending to every other
// at once, and a kernel reading a managed (unified-memory) buffer of another GPU.
#include <algorithm>
#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "bench/bench_measure.hpp"
#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "kernels/copy_kernels.cuh"
#include "kernels/latch_kernel.cuh"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "transport/pattern_check.hpp"
#include "transport/peer_access.hpp"

namespace peerlink {

// All ordered pairs at once, copy-engine writes, each pair on its own stream of its source GPU, queued behind
// one latch so they start together. Copies that share a GPU's copy engines may run one after another, so
// per-pair event timings would overstate concurrency: everything here is timed from the latch's release by
// the host, each pair until its stream drains, the aggregate until the last one does.
void runAllPairsCase(BenchContext& context, BenchCaseResult& result) {
  using Clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::milliseconds(context.params.getInt("PEERLINK_TIMEOUT_MS"));
  const auto timeoutNs = static_cast<std::uint64_t>(timeout.count()) * 1000000ull;
  const int iterations = context.options.iterations;
  for (std::size_t bytes : context.sizes) {
    context.progress(fmt::format("{} {} bytes, {} GPUs at once", result.name, bytes, context.devices.size()));
    struct PairRun {
      int src, dst;
      Route route;
      BufferSet from, to;
      Stream stream;
    };
    std::vector<std::unique_ptr<PairRun>> runs;
    std::vector<BenchCell> cells;
    try {
      for (int src : context.devices) {
        for (int dst : context.devices) {
          if (src == dst) continue;
          const Route route =
              forcedRoute(context, src, dst, bytes, RouteMode::Direct, Engine::CopyEngine, Direction::Write);
          runs.push_back(std::make_unique<PairRun>(
              PairRun{src, dst, route, BufferSet(src, bytes, 1), BufferSet(dst, bytes, 1), Stream(src)}));
        }
      }
      std::uint64_t wrong = 0;
      for (auto& run : runs) {
        if (context.options.verify) {
          wrong += verifyCopy(context, run->route, run->src, run->dst, run->to.at(0), run->from.at(0), bytes,
                              run->stream.get());
        }
        for (int i = 0; i < context.options.warmup; ++i) {
          context.transport.copy({run->to.at(0), run->dst}, {run->from.at(0), run->src}, bytes, run->route,
                                 run->stream.get());
        }
      }
      for (auto& run : runs) PEERLINK_CUDA_CHECK(cudaStreamSynchronize(run->stream.get()));
      PinnedBuffer latch(sizeof(std::uint64_t) + runs.size() * sizeof(kernels::DeviceStatus),
                         cudaHostAllocMapped | cudaHostAllocPortable);
      auto* flag = static_cast<volatile std::uint64_t*>(latch.data());
      auto* statuses = reinterpret_cast<kernels::DeviceStatus*>(static_cast<char*>(latch.data()) + 8);
      *flag = 0;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        statuses[i] = kernels::pendingStatus();
        PairRun& r = *runs[i];
        DeviceGuard guard(r.src);
        kernels::launchLatch(flag, timeoutNs, &statuses[i], r.stream.get());
        for (int k = 0; k < iterations; ++k) {
          context.transport.copy({r.to.at(0), r.dst}, {r.from.at(0), r.src}, bytes, r.route, r.stream.get());
        }
      }
      std::atomic_thread_fence(std::memory_order_seq_cst);
      const Clock::time_point released = Clock::now();
      *flag = 1;  // every pair is queued: release them together
      std::vector<double> finishedUs(runs.size(), -1);
      std::size_t pending = runs.size();
      while (pending > 0) {
        for (std::size_t i = 0; i < runs.size(); ++i) {
          if (finishedUs[i] >= 0) continue;
          const cudaError_t status = cudaStreamQuery(runs[i]->stream.get());
          if (status == cudaErrorNotReady) continue;
          PEERLINK_CUDA_CHECK(status);
          finishedUs[i] = std::chrono::duration<double, std::micro>(Clock::now() - released).count();
          --pending;
        }
        if (pending > 0 && Clock::now() - released > timeout * 2) {
          throw Error(ErrorCode::Timeout, fmt::format("{} pairs were still copying {} ms after they started", pending,
                                                      (timeout * 2).count()));
        }
      }
      double lastUs = 0;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        kernels::throwIfDeviceFailed(statuses[i], fmt::format("latch on GPU {}", runs[i]->src));
        BenchCell cell;
        cell.src = runs[i]->src;
        cell.dst = runs[i]->dst;
        cell.bytes = bytes;
        cell.route =
            describeRoute(context.topology, {cell.src, cell.dst, bytes, ProcessBoundary::SameProcess}, runs[i]->route);
        cell.expectedGBps = context.topology.pair(cell.src, cell.dst).expectedGBps;
        cell.verified = context.options.verify;
        cell.medianUs = cell.minUs = cell.maxUs = cell.p99Us = finishedUs[i] / iterations;
        cell.gbps = static_cast<double>(bytes) * iterations / (finishedUs[i] * 1e3);
        lastUs = std::max(lastUs, finishedUs[i]);
        cells.push_back(cell);
      }
      if (wrong != 0 && !cells.empty()) cells.front().wrongBytes = wrong;
      result.summary[fmt::format("aggregate_gbps_{}", bytes)] =
          static_cast<double>(bytes) * iterations * static_cast<double>(runs.size()) / (lastUs * 1e3);
    } catch (const Error& error) {
      BenchCell cell;
      cell.bytes = bytes;
      cell.src = context.devices.front();
      cell.dst = context.devices.back();
      cell.error = error.what();
      cells.assign(1, cell);
    }
    result.cells.insert(result.cells.end(), cells.begin(), cells.end());
  }
}

// Unified memory: a managed buffer preferred on GPU(row) and advised as accessed by GPU(column) (which maps
// it instead of migrating pages), read by a copy kernel on GPU(column) into its own memory.
void runManagedCase(BenchContext& context, BenchCaseResult& result) {
  forEachPair(context, result, context.sizes, [&](int src, int dst, std::size_t bytes) {
    BenchCell cell = pairCell(src, dst, bytes);
    cell.route =
        fmt::format("managed memory preferred on GPU {}, accessed by GPU {}; copy kernel on GPU {}", src, dst, dst);
    measureCell(result, cell, [&](BenchCell& measured) {
      // Never ask for more managed memory than the card has free: over-subscription can hang the GPU.
      std::size_t free = 0, total = 0;
      {
        DeviceGuard guard(src);
        PEERLINK_CUDA_CHECK(cudaMemGetInfo(&free, &total));
      }
      if (bytes > free / 2) {
        throw Error(ErrorCode::Unsupported, fmt::format("{} bytes of managed memory would exceed half of GPU {}'s "
                                                        "free memory ({} bytes)",
                                                        bytes, src, free));
      }
      context.transport.enablePeerAccess(dst, src);
      void* managed = nullptr;
      PEERLINK_CUDA_CHECK(cudaMallocManaged(&managed, bytes));
      struct ManagedFree {
        void* pointer;
        ~ManagedFree() { cudaFree(pointer); }
      } release{managed};
      cudaMemLocation preferred{cudaMemLocationTypeDevice, src};
      cudaMemLocation accessor{cudaMemLocationTypeDevice, dst};
      PEERLINK_CUDA_CHECK(cudaMemAdvise(managed, bytes, cudaMemAdviseSetPreferredLocation, preferred));
      PEERLINK_CUDA_CHECK(cudaMemAdvise(managed, bytes, cudaMemAdviseSetAccessedBy, accessor));
      const std::uint64_t seed = 0x0A110000ull + bytes;
      {
        DeviceGuard guard(src);
        kernels::launchFillPattern(managed, bytes, seed, nullptr);  // first touch on GPU src places the pages
        PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
      }
      DeviceBuffer target(dst, bytes);
      Stream stream(dst);
      const int sms = context.topology.gpus[static_cast<std::size_t>(dst)].smCount;
      DeviceGuard guard(dst);
      if (context.options.verify) {
        kernels::launchSmCopy(target.data(), managed, bytes, sms, stream.get());
        measured.verified = true;
        measured.wrongBytes = PatternChecker(dst).checkPattern(target.data(), bytes, seed, stream.get()).mismatches;
      }
      fillTiming(measured,
                 timeIterations(dst, stream.get(), context.options.warmup, context.options.iterations,
                                [&](int) { kernels::launchSmCopy(target.data(), managed, bytes, sms, stream.get()); }));
    });
  });
}

}  // namespace peerlink

namespace peerlink {

// What it costs to get a pair ready, per pair: enabling peer access (disabled first if this process had it
// on, so the cost is measured), exporting a legacy IPC handle, and the first copy of a fresh buffer against
// the steady one. Importing and mapping across processes are in d2d_ipc_ce / d2d_cumem_ce's setup columns.
void runSetupCostsCase(BenchContext& context, BenchCaseResult& result) {
  using Clock = std::chrono::steady_clock;
  const auto msSince = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  const std::size_t bytes = context.sizes.front();
  for (int src : context.devices) {
    for (int dst : context.devices) {
      if (src == dst) continue;
      context.progress(fmt::format("{} GPU {} -> GPU {}", result.name, src, dst));
      BenchCell cell = pairCell(src, dst, bytes);
      cell.route = fmt::format("{} -> {} cudaMemcpyPeerAsync on GPU {}", src, dst, src);
      measureCell(result, cell, [&](BenchCell& measured) {
        DeviceGuard guard(src);
        PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
        if (cudaDeviceDisablePeerAccess(dst) != cudaSuccess) cudaGetLastError();  // not enabled before: fine
        forgetPeerAccess(src, dst);
        Clock::time_point start = Clock::now();
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(dst, 0);
        measured.setupMs["enable_peer_access"] = msSince(start);
        if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled) PEERLINK_CUDA_CHECK(enabled);
        cudaGetLastError();
        context.transport.enablePeerAccess(src, dst);  // keep the transport's table in step

        DeviceBuffer exported(src, bytes);
        cudaIpcMemHandle_t handle{};
        start = Clock::now();
        PEERLINK_CUDA_CHECK(cudaIpcGetMemHandle(&handle, exported.data()));
        measured.setupMs["ipc_get_handle"] = msSince(start);

        DeviceBuffer to(dst, bytes);
        Stream stream(src);
        Event before(src), after(src);
        std::vector<double> copies;
        for (int i = 0; i < 1 + context.options.iterations; ++i) {
          PEERLINK_CUDA_CHECK(cudaEventRecord(before.get(), stream.get()));
          PEERLINK_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, exported.data(), src, bytes, stream.get()));
          PEERLINK_CUDA_CHECK(cudaEventRecord(after.get(), stream.get()));
          PEERLINK_CUDA_CHECK(cudaEventSynchronize(after.get()));
          float ms = 0;
          PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, before.get(), after.get()));
          copies.push_back(static_cast<double>(ms) * 1000.0);
        }
        measured.setupMs["first_copy"] = copies.front() / 1000.0;
        copies.erase(copies.begin());
        fillTiming(measured, copies);
        measured.setupMs["steady_copy"] = measured.medianUs / 1000.0;
        measured.setupMs["total"] = measured.setupMs["enable_peer_access"] + measured.setupMs["ipc_get_handle"] +
                                    measured.setupMs["first_copy"];
      });
    }
  }
}

}  // namespace peerlink
