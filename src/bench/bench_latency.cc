// Latency cases. put-with-signal: two kernels, one per GPU, bounce a flag (and a payload) through each
// other's memory; one way = round trip / 2, timed on the device's global timer over many rounds, so no
// launch overhead is counted. Copy engine: back-to-back cudaMemcpyPeerAsync on one stream, per copy.
#include <chrono>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "bench/bench_measure.hpp"
#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "core/stream_wait.hpp"
#include "kernels/ll_protocol.cuh"
#include "kernels/put_signal.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

constexpr int kRoundsPerSample = 200;
constexpr int kCopiesPerSample = 100;

// Runs one ping-pong: launches the responder on b, then the initiator on a, waits for both (twice
// PEERLINK_TIMEOUT_MS at most), throws what either side reported, and returns the one-way time in us from the
// initiator's `elapsed` ns. `name` ("ping-pong") leads the error messages.
template <typename LaunchInitiator, typename LaunchResponder>
double runPingPong(BenchContext& context, int a, int b, LaunchInitiator launchInitiator,
                   LaunchResponder launchResponder, const DeviceBuffer& statusA, const DeviceBuffer& statusB,
                   const DeviceBuffer& elapsed, const char* name) {
  Stream streamA(a), streamB(b);
  {
    DeviceGuard guard(b);
    launchResponder(streamB.get());
  }
  {
    DeviceGuard guard(a);
    launchInitiator(streamA.get());
  }
  const auto timeout = std::chrono::milliseconds(context.params.getInt("PEERLINK_TIMEOUT_MS")) * 2;
  waitForStream(streamA.get(), timeout, fmt::format("{} GPU {} <-> GPU {}", name, a, b));
  waitForStream(streamB.get(), timeout, fmt::format("{} GPU {} <-> GPU {}", name, a, b));
  kernels::DeviceStatus status{};
  std::uint64_t ns = 0;
  PEERLINK_CUDA_CHECK(cudaMemcpy(&status, statusA.data(), sizeof(status), cudaMemcpyDeviceToHost));
  kernels::throwIfDeviceFailed(status, fmt::format("{} GPU {} -> GPU {}", name, a, b));
  PEERLINK_CUDA_CHECK(cudaMemcpy(&status, statusB.data(), sizeof(status), cudaMemcpyDeviceToHost));
  kernels::throwIfDeviceFailed(status, fmt::format("{} GPU {} -> GPU {}", name, b, a));
  PEERLINK_CUDA_CHECK(cudaMemcpy(&ns, elapsed.data(), sizeof(ns), cudaMemcpyDeviceToHost));
  return static_cast<double>(ns) / 1000.0 / (2.0 * kRoundsPerSample);
}

// One ping-pong sample: `kRoundsPerSample` round trips of `bytes` between a and b; returns one-way us.
double pingPongSample(BenchContext& context, int a, int b, std::size_t bytes) {
  context.transport.enablePeerAccess(a, b);
  context.transport.enablePeerAccess(b, a);
  const std::size_t payload = std::max<std::size_t>(bytes, 1);
  DeviceBuffer flagA(a, 8), flagB(b, 8), recvA(a, payload), recvB(b, payload), sendA(a, payload), sendB(b, payload);
  DeviceBuffer statusA(a, sizeof(kernels::DeviceStatus)), statusB(b, sizeof(kernels::DeviceStatus)),
      elapsed(a, sizeof(std::uint64_t));
  for (auto [buffer, device] : {std::pair{&flagA, a}, std::pair{&flagB, b}}) {
    DeviceGuard guard(device);
    PEERLINK_CUDA_CHECK(cudaMemset(buffer->data(), 0, 8));
    // The kernels run on non-blocking streams, which do not wait for the legacy stream's memset.
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const auto timeoutNs = static_cast<std::uint64_t>(context.params.getInt("PEERLINK_TIMEOUT_MS")) * 1000000ull;
  kernels::PingPongSide initiator{static_cast<std::uint64_t*>(flagA.data()),
                                  static_cast<std::uint64_t*>(flagB.data()),
                                  recvB.data(),
                                  sendA.data(),
                                  bytes,
                                  20,
                                  kRoundsPerSample,
                                  true,
                                  timeoutNs,
                                  static_cast<kernels::DeviceStatus*>(statusA.data()),
                                  static_cast<std::uint64_t*>(elapsed.data())};
  kernels::PingPongSide responder{static_cast<std::uint64_t*>(flagB.data()),
                                  static_cast<std::uint64_t*>(flagA.data()),
                                  recvA.data(),
                                  sendB.data(),
                                  bytes,
                                  20,
                                  kRoundsPerSample,
                                  false,
                                  timeoutNs,
                                  static_cast<kernels::DeviceStatus*>(statusB.data()),
                                  nullptr};
  return runPingPong(
      context, a, b, [&](cudaStream_t stream) { kernels::launchPingPong(initiator, stream); },
      [&](cudaStream_t stream) { kernels::launchPingPong(responder, stream); }, statusA, statusB, elapsed, "ping-pong");
}

// One LL ping-pong sample: data and flag travel in the same 8-byte stores, so neither side fences.
double llPingPongSample(BenchContext& context, int a, int b, std::size_t bytes) {
  context.transport.enablePeerAccess(a, b);
  context.transport.enablePeerAccess(b, a);
  const std::size_t lineBytes = kernels::llLineBytes(bytes);
  const std::size_t payload = std::max<std::size_t>(bytes, 1);
  DeviceBuffer linesA(a, lineBytes), linesB(b, lineBytes), sendA(a, payload), sendB(b, payload), recvA(a, payload),
      recvB(b, payload);
  DeviceBuffer statusA(a, sizeof(kernels::DeviceStatus)), statusB(b, sizeof(kernels::DeviceStatus)),
      elapsed(a, sizeof(std::uint64_t));
  for (auto [buffer, device] : {std::pair{&linesA, a}, std::pair{&linesB, b}}) {
    DeviceGuard guard(device);
    PEERLINK_CUDA_CHECK(cudaMemset(buffer->data(), 0, lineBytes));
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());  // the kernels' non-blocking streams do not wait for it
  }
  const auto timeoutNs = static_cast<std::uint64_t>(context.params.getInt("PEERLINK_TIMEOUT_MS")) * 1000000ull;
  kernels::LlPingPongSide initiator;
  initiator.localLines = linesA.data();
  initiator.peerLines = linesB.data();
  initiator.send = sendA.data();
  initiator.receive = recvA.data();
  initiator.payloadBytes = bytes;
  initiator.warmup = 20;
  initiator.iterations = kRoundsPerSample;
  initiator.initiator = true;
  initiator.timeoutNs = timeoutNs;
  initiator.status = static_cast<kernels::DeviceStatus*>(statusA.data());
  initiator.elapsedNs = static_cast<std::uint64_t*>(elapsed.data());
  kernels::LlPingPongSide responder = initiator;
  responder.localLines = linesB.data();
  responder.peerLines = linesA.data();
  responder.send = sendB.data();
  responder.receive = recvB.data();
  responder.initiator = false;
  responder.status = static_cast<kernels::DeviceStatus*>(statusB.data());
  responder.elapsedNs = nullptr;
  return runPingPong(
      context, a, b, [&](cudaStream_t stream) { kernels::launchLlPingPong(initiator, stream); },
      [&](cudaStream_t stream) { kernels::launchLlPingPong(responder, stream); }, statusA, statusB, elapsed,
      "LL ping-pong");
}

using SampleFunction = double (*)(BenchContext&, int, int, std::size_t);

void runPingPongCase(BenchContext& context, BenchCaseResult& result, SampleFunction sample, const char* how) {
  forEachPair(context, result, latencySizes(), [&](int src, int dst, std::size_t bytes) {
    BenchCell cell = pairCell(src, dst, bytes);
    cell.route = fmt::format("{}[{}] -> {}[{}] via P2P/DIRECT/SM/write ({}, ping-pong)", src, src, dst, dst, how);
    measureCell(result, cell, [&](BenchCell& measured) {
      std::vector<double> samples;
      for (int i = 0; i < context.options.iterations; ++i) samples.push_back(sample(context, src, dst, bytes));
      fillTiming(measured, samples);
    });
  });
}

}  // namespace

void runPutSignalLatencyCase(BenchContext& context, BenchCaseResult& result) {
  runPingPongCase(context, result, pingPongSample, "put-with-signal: data, release fence, flag");
}

void runLlLatencyCase(BenchContext& context, BenchCaseResult& result) {
  runPingPongCase(context, result, llPingPongSample, "LL: data and flag in the same 8-byte stores");
}

void runCopyEngineLatencyCase(BenchContext& context, BenchCaseResult& result) {
  forEachPair(context, result, latencySizes(), [&](int src, int dst, std::size_t bytes) {
    BenchCell cell = pairCell(src, dst, bytes);
    cell.route = fmt::format("{} -> {} cudaMemcpyPeerAsync back to back", src, dst);
    measureCell(result, cell, [&](BenchCell& measured) {
      context.transport.enablePeerAccess(src, dst);
      DeviceBuffer from(src, bytes), to(dst, bytes);
      Stream stream(src);
      DeviceGuard guard(src);
      Event start(src), stop(src);
      std::vector<double> samples;
      for (int copy = 0; copy < 10; ++copy) {  // warm-up
        PEERLINK_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, bytes, stream.get()));
      }
      for (int i = 0; i < context.options.iterations; ++i) {
        PEERLINK_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
        for (int copy = 0; copy < kCopiesPerSample; ++copy) {
          PEERLINK_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, bytes, stream.get()));
        }
        PEERLINK_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
        PEERLINK_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0;
        PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        samples.push_back(static_cast<double>(ms) * 1000.0 / kCopiesPerSample);
      }
      fillTiming(measured, samples);
    });
  });
}

}  // namespace peerlink
