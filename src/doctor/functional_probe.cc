// In-process methods of the functional probe: copies by the copy engine and by SM kernels, both directions
// of initiative, and the put-with-signal flag handshake.
#include "doctor/functional_probe.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/stream_wait.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/signal_channel.hpp"
#include "peerlink/transport.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;

struct CopyMethod {
  const char* name;
  Engine engine;
  Direction direction;
};
constexpr CopyMethod kCopyMethods[] = {
    {"ce_write", Engine::CopyEngine, Direction::Write},
    {"ce_read", Engine::CopyEngine, Direction::Read},
    {"sm_write", Engine::Sm, Direction::Write},
    {"sm_read", Engine::Sm, Direction::Read},
};

Route directRoute(const CopyMethod& method) {
  Route route;
  route.mode = RouteMode::Direct;
  route.engine = method.engine;
  route.direction = method.direction;
  route.reason = "forced by the doctor's probe";
  return route;
}

// A distinct pattern for every pair and method, so a stale destination from an earlier probe never passes.
std::uint64_t seedFor(int src, int dst, int method) {
  return 0xD0C7000000000000ull ^ (static_cast<std::uint64_t>(src) << 32) ^ (static_cast<std::uint64_t>(dst) << 16) ^
         static_cast<std::uint64_t>(method);
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One stream per GPU, created on first use.
class StreamPool {
 public:
  cudaStream_t on(int device) {
    auto found = streams_.find(device);
    if (found == streams_.end()) found = streams_.emplace(device, std::make_unique<Stream>(device)).first;
    return found->second->get();
  }

 private:
  std::map<int, std::unique_ptr<Stream>> streams_;
};

void probeOneCopy(Transport& transport, StreamPool& streams, const CopyMethod& method, int methodIndex,
                  const DirectedPair& pair, const ProbeOptions& options, ProbeResult& result) {
  const auto [src, dst] = pair;
  const Route route = directRoute(method);
  const int executing = executingDevice(route, src, dst);
  cudaStream_t stream = streams.on(executing);
  DeviceBuffer source(src, options.bytes);
  DeviceBuffer destination(dst, options.bytes);
  const std::uint64_t seed = seedFor(src, dst, methodIndex);
  {
    DeviceGuard guard(src);
    kernels::launchFillPattern(source.data(), options.bytes, seed, streams.on(src));
    waitForStream(streams.on(src), options.timeout, "filling the probe's source");
  }
  {
    DeviceGuard guard(dst);
    kernels::launchFillByte(destination.data(), options.bytes, kPoisonByte, streams.on(dst));
    waitForStream(streams.on(dst), options.timeout, "poisoning the probe's destination");
  }
  const std::string what = fmt::format("GPU {} -> GPU {} {}", src, dst, method.name);
  transport.copy({destination.data(), dst}, {source.data(), src}, options.bytes, route, stream);
  waitForStream(stream, options.timeout, what, "the doctor's --timeout-ms");
  result.ran = true;
  PatternChecker checker(dst);
  const CheckResult check = checker.checkPattern(destination.data(), options.bytes, seed, streams.on(dst));
  result.wrongBytes = check.mismatches;
  result.lostBytes = check.lostBytes;
  if (!check.ok()) return;
  result.gbps = timeCopies(executing, stream, options, what, [&] {
    transport.copy({destination.data(), dst}, {source.data(), src}, options.bytes, route, stream);
  });
}

void report(const ProbeOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

}  // namespace

double timeCopies(int device, cudaStream_t stream, const ProbeOptions& options, const std::string& what,
                  const std::function<void()>& enqueueCopy) {
  if (options.timedIterations <= 0) return 0;
  DeviceGuard guard(device);
  Event start(device);
  Event end(device);
  PEERLINK_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < options.timedIterations; ++i) enqueueCopy();
  PEERLINK_CUDA_CHECK(cudaEventRecord(end.get(), stream));
  waitForStream(stream, options.timeout, what + " timing", "the doctor's --timeout-ms");
  float ms = 0;
  PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  if (ms <= 0) return 0;
  return static_cast<double>(options.bytes) * options.timedIterations / (static_cast<double>(ms) * 1e6);
}

std::string classifyProbeFailure(const std::string& error) {
  if (error.find("not visible") != std::string::npos) return "peer_hidden";
  if (error.find("Too many open files") != std::string::npos || error.find("EMFILE") != std::string::npos) {
    return "open_file_limit";
  }
  return "";
}

std::vector<ProbeResult> probeCopies(Transport& transport, const std::vector<DirectedPair>& pairs,
                                     const ProbeOptions& options) {
  std::vector<ProbeResult> results;
  StreamPool streams;
  for (const DirectedPair& pair : pairs) {
    for (int m = 0; m < static_cast<int>(std::size(kCopyMethods)); ++m) {
      const CopyMethod& method = kCopyMethods[m];
      report(options, fmt::format("GPU {} -> GPU {}: {}", pair.first, pair.second, method.name));
      ProbeResult result;
      result.src = pair.first;
      result.dst = pair.second;
      result.method = method.name;
      const auto start = Clock::now();
      try {
        probeOneCopy(transport, streams, method, m, pair, options, result);
      } catch (const Error& error) {
        result.timedOut = error.code() == ErrorCode::Timeout;
        result.error = error.what();
        result.errorCause = classifyProbeFailure(result.error);
      }
      result.seconds = secondsSince(start);
      results.push_back(std::move(result));
    }
  }
  return results;
}

std::vector<ProbeResult> probeFlagHandshakes(Transport& transport, const std::vector<DirectedPair>& pairs,
                                             const ProbeOptions& options) {
  constexpr std::size_t kMessageBytes = 4096;
  struct Handshake {
    ProbeResult result;
    std::unique_ptr<SignalChannel> channel;
    std::unique_ptr<DeviceBuffer> sent;
    std::unique_ptr<DeviceBuffer> received;
    std::unique_ptr<Stream> sendStream;
    std::unique_ptr<Stream> receiveStream;
    std::uint64_t seed = 0;
  };
  std::vector<Handshake> handshakes(pairs.size());
  const auto start = Clock::now();
  report(options, fmt::format("flag handshakes on {} pairs at once", pairs.size()));
  // Everything is allocated and initialized before the first receive is launched: allocation and
  // initialization can wait for all work of a device, including a receive already spinning there, which
  // would then only see its flag after its deadline (measured on the 4xH200 when they were interleaved).
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    Handshake& h = handshakes[i];
    const auto [src, dst] = pairs[i];
    h.result.src = src;
    h.result.dst = dst;
    h.result.method = "flag_handshake";
    h.seed = seedFor(src, dst, 99);
    try {
      h.channel = std::make_unique<SignalChannel>(transport, src, dst, kMessageBytes);
      h.sent = std::make_unique<DeviceBuffer>(src, kMessageBytes);
      h.received = std::make_unique<DeviceBuffer>(dst, kMessageBytes);
      h.sendStream = std::make_unique<Stream>(src);
      h.receiveStream = std::make_unique<Stream>(dst);
      {
        DeviceGuard guard(src);
        kernels::launchFillPattern(h.sent->data(), kMessageBytes, h.seed, h.sendStream->get());
      }
      {
        DeviceGuard guard(dst);
        kernels::launchFillByte(h.received->data(), kMessageBytes, kPoisonByte, h.receiveStream->get());
      }
    } catch (const Error& error) {
      h.result.error = error.what();
      h.channel.reset();
    }
  }
  // Runs `step` on every handshake still live; an error is recorded on it and, with `drop`, ends it (a
  // failed send keeps it: its receive is already launched and must still be waited for).
  const auto eachLive = [&handshakes](bool drop, const auto& step) {
    for (Handshake& h : handshakes) {
      if (!h.channel) continue;
      try {
        step(h);
      } catch (const Error& error) {
        h.result.error = error.what();
        if (drop) h.channel.reset();
      }
    }
  };
  eachLive(true, [&](Handshake& h) {
    waitForStream(h.sendStream->get(), options.timeout, "filling the handshake's message");
    waitForStream(h.receiveStream->get(), options.timeout, "poisoning the handshake's destination");
  });
  // Every receiver is waiting before any sender stores: the kernels of both GPUs are resident together.
  eachLive(true, [&](Handshake& h) { h.channel->receive(h.received->data(), kMessageBytes, h.receiveStream->get()); });
  eachLive(false, [&](Handshake& h) { h.channel->send(h.sent->data(), kMessageBytes, h.sendStream->get()); });
  // The receive kernels give up at their own deadline (PEERLINK_TIMEOUT_MS of the transport's parameters,
  // which the doctor sets to its probe timeout); the host waits a little longer than that.
  const auto hostTimeout = options.timeout * 2 + std::chrono::milliseconds(500);
  for (Handshake& h : handshakes) {
    if (!h.channel) continue;
    try {
      waitForStream(h.sendStream->get(), hostTimeout, "the handshake's sending kernel");
      waitForStream(h.receiveStream->get(), hostTimeout, "the handshake's receiving kernel");
      h.result.ran = true;
      h.channel->check();
      PatternChecker checker(h.result.dst);
      const CheckResult check = checker.checkPattern(h.received->data(), kMessageBytes, h.seed, h.receiveStream->get());
      h.result.wrongBytes = check.mismatches;
      h.result.lostBytes = check.lostBytes;
    } catch (const Error& error) {
      h.result.timedOut = error.code() == ErrorCode::Timeout;
      h.result.error = error.what();
    }
  }
  std::vector<ProbeResult> results;
  for (Handshake& h : handshakes) {
    h.result.seconds = secondsSince(start);
    results.push_back(std::move(h.result));
  }
  return results;
}

}  // namespace peerlink
