// Cross-process methods of the functional probe: legacy CUDA IPC and cuMem POSIX-fd sharing with a real
// second process (the `_share-export` helper), which owns the memory and checks it on its own GPU.
#include <algorithm>
#include <future>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "core/stream_wait.hpp"
#include "doctor/functional_probe.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/shared_memory.hpp"
#include "peerlink/transport.hpp"
#include "transport/exporter_process.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kExporterStartTimeout{30000};

const char* methodName(ShareKind kind) {
  return kind == ShareKind::Cumem ? "cumem" : "ipc";
}

// One exporting process per (GPU, kind), serving every pair that writes to that GPU. Started all at once,
// since each spends most of its start-up initializing CUDA.
struct Exporter {
  std::unique_ptr<ExporterProcess> process;
  std::string error;
  std::uint64_t currentSeed = 0;  // the pattern the owner's buffer holds now
};

void probeOneShare(Transport& transport, Exporter& exporter, ShareKind kind, const DirectedPair& pair,
                   const ProbeOptions& options, ProbeResult& result) {
  const auto [src, dst] = pair;
  Stream local(src);
  cudaStream_t stream = local.get();
  exporter.process->requestServe();
  {
    ImportedBuffer remote(exporter.process->socketPath(), src, options.timeout);
    exporter.process->served();
    DeviceBuffer mine(src, options.bytes);
    PatternChecker checker(src);
    // What the owner holds is readable here...
    {
      DeviceGuard guard(src);
      kernels::launchFillByte(mine.data(), options.bytes, kPoisonByte, stream);
    }
    transport.copy({mine.data(), src}, {remote.data(), dst}, options.bytes, sharedRoute(kind, Direction::Read), stream);
    waitForStream(stream, options.timeout, fmt::format("GPU {} reading GPU {} through {}", src, dst, methodName(kind)));
    result.ran = true;
    const CheckResult read = checker.checkPattern(mine.data(), options.bytes, exporter.currentSeed, stream);
    // ...and what this process writes lands there, as the owner's own GPU sees it.
    const std::uint64_t seed = exporter.currentSeed + 1;
    {
      DeviceGuard guard(src);
      kernels::launchFillPattern(mine.data(), options.bytes, seed, stream);
    }
    const Route write = sharedRoute(kind, Direction::Write);
    transport.copy({remote.data(), dst}, {mine.data(), src}, options.bytes, write, stream);
    waitForStream(stream, options.timeout, fmt::format("GPU {} writing GPU {} through {}", src, dst, methodName(kind)));
    const ExporterProcess::OwnerCheck owner = exporter.process->check(seed);
    exporter.currentSeed = seed;
    result.wrongBytes = read.mismatches + owner.wrongBytes;
    result.lostBytes = read.lostBytes + owner.lostBytes;
    if (result.wrongBytes == 0) {
      result.gbps = timeCopies(src, stream, options, "the cross-process writes", [&] {
        transport.copy({remote.data(), dst}, {mine.data(), src}, options.bytes, write, stream);
      });
    }
  }  // unmapped before the owner may free it
}

}  // namespace

std::vector<ProbeResult> probeCrossProcess(Transport& transport, const std::vector<DirectedPair>& pairs,
                                           const ProbeOptions& options) {
  std::vector<ProbeResult> results;
  if (pairs.empty()) return results;
  const Topology& topology = transport.topology();
  // Start every exporter the pairs need, in parallel.
  std::map<std::pair<int, ShareKind>, Exporter> exporters;
  std::map<std::pair<int, ShareKind>, std::future<std::unique_ptr<ExporterProcess>>> starting;
  for (const DirectedPair& pair : pairs) {
    for (ShareKind kind : {ShareKind::Ipc, ShareKind::Cumem}) {
      const auto key = std::make_pair(pair.second, kind);
      if (starting.count(key) != 0) continue;
      ShareExporterRequest request;
      request.busId = topology.gpus.at(static_cast<std::size_t>(pair.second)).pciBusId;
      request.bytes = options.bytes;
      request.kind = kind;
      request.seed = 0xE7907000ull + static_cast<std::uint64_t>(pair.second);
      // Starting a process and initializing CUDA in it takes seconds when several start at once; the probe's
      // own deadline bounds the data path, not the start-up.
      request.timeout = std::max(options.timeout, kExporterStartTimeout);
      exporters[key].currentSeed = request.seed;
      starting[key] = std::async(std::launch::async, [request, &options] {
        return std::make_unique<ExporterProcess>(options.helperExecutable, request, options.helperVisibleDevices);
      });
    }
  }
  if (options.progress) options.progress(fmt::format("started {} exporting processes", starting.size()));
  for (auto& [key, future] : starting) {
    try {
      exporters[key].process = future.get();
    } catch (const Error& error) {
      exporters[key].error = error.what();
    }
  }
  for (const DirectedPair& pair : pairs) {
    for (ShareKind kind : {ShareKind::Ipc, ShareKind::Cumem}) {
      if (options.progress) {
        options.progress(fmt::format("GPU {} -> GPU {}: {}", pair.first, pair.second, methodName(kind)));
      }
      Exporter& exporter = exporters[std::make_pair(pair.second, kind)];
      ProbeResult result;
      result.src = pair.first;
      result.dst = pair.second;
      result.method = methodName(kind);
      const auto start = Clock::now();
      if (!exporter.process) {
        result.error = exporter.error;
      } else {
        try {
          probeOneShare(transport, exporter, kind, pair, options, result);
        } catch (const Error& error) {
          result.timedOut = error.code() == ErrorCode::Timeout && result.ran;
          result.error = error.what();
        }
      }
      result.errorCause = classifyProbeFailure(result.error);
      result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      results.push_back(std::move(result));
    }
  }
  for (auto& [key, exporter] : exporters) {
    if (exporter.process) exporter.process->finish();
  }
  return results;
}

}  // namespace peerlink
