// Cross-process cases: another process (started from BenchOptions::helperExecutable) owns a buffer on
// GPU(column) and exports it as a legacy IPC handle or a cuMem fd; this process maps it on GPU(row), checks
// it reads what the owner wrote, then times copy-engine writes into it from its own memory — the same
// copies as d2d_write_ce, through the other process's mapping. Each cell reports the setup cost too.
#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "bench/bench_measure.hpp"
#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/shared_memory.hpp"
#include "transport/exporter_process.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {
namespace {

void measureShared(BenchContext& context, BenchCell& cell, bool cumem) {
  const int local = cell.src;
  const int owner = cell.dst;
  const auto timeout = std::chrono::milliseconds(context.params.getInt("PEERLINK_TIMEOUT_MS"));
  const std::uint64_t ownerSeed = 0xC0550000ull + cell.bytes;
  ShareExporterRequest request;
  request.device = owner;
  request.bytes = cell.bytes;
  request.kind = cumem ? ShareKind::Cumem : ShareKind::Ipc;
  request.seed = ownerSeed;
  request.timeout = timeout;
  ExporterProcess exporter(context.options.helperExecutable, request);
  exporter.requestServe();
  {
    ImportedBuffer remote(exporter.socketPath(), local, timeout);
    const ShareTimings exported = exporter.served();
    const ShareTimings imported = remote.timings();
    cell.setupMs = {{"export", exported.exportMs},
                    {"handshake", imported.handshakeMs},
                    {"import", imported.importMs},
                    {"map", imported.mapMs},
                    {"total", exported.exportMs + imported.handshakeMs + imported.importMs + imported.mapMs}};
    DeviceBuffer mine(local, cell.bytes);
    Stream stream(local);
    PatternChecker checker(local);
    const Route write = sharedRoute(request.kind, Direction::Write);
    const Route read = sharedRoute(request.kind, Direction::Read);
    cell.route = describeRoute(context.topology, {local, owner, cell.bytes, ProcessBoundary::CrossProcess}, write);
    if (context.options.verify) {
      // What the owner wrote is readable here, and what we write lands there (read back through the mapping).
      context.transport.copy({mine.data(), local}, {remote.data(), owner}, cell.bytes, read, stream.get());
      cell.wrongBytes = checker.checkPattern(mine.data(), cell.bytes, ownerSeed, stream.get()).mismatches;
      const std::uint64_t seed = ownerSeed + 1;
      {
        DeviceGuard guard(local);
        kernels::launchFillPattern(mine.data(), cell.bytes, seed, stream.get());
      }
      context.transport.copy({remote.data(), owner}, {mine.data(), local}, cell.bytes, write, stream.get());
      {
        DeviceGuard guard(local);
        kernels::launchFillByte(mine.data(), cell.bytes, 0xA5, stream.get());
      }
      context.transport.copy({mine.data(), local}, {remote.data(), owner}, cell.bytes, read, stream.get());
      cell.wrongBytes += checker.checkPattern(mine.data(), cell.bytes, seed, stream.get()).mismatches;
      cell.verified = true;
    }
    fillTiming(cell, timeIterations(local, stream.get(), context.options.warmup, context.options.iterations, [&](int) {
                 context.transport.copy({remote.data(), owner}, {mine.data(), local}, cell.bytes, write, stream.get());
               }));
    PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }  // unmapped before the owner may free it
  exporter.finish();
}

}  // namespace

void runCrossProcessCase(BenchContext& context, BenchCaseResult& result, bool cumem) {
  forEachPair(context, result, context.sizes, [&](int src, int dst, std::size_t bytes) {
    BenchCell cell = pairCell(src, dst, bytes);
    cell.expectedGBps = context.topology.pair(src, dst).expectedGBps;
    try {
      measureShared(context, cell, cumem);
    } catch (const Error& error) {
      cell.error = error.what();
    }
    result.cells.push_back(std::move(cell));
  });
}

}  // namespace peerlink
