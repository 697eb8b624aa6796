// Development tool, not a test: where the split RELAY's time goes. A transfer src -> dst split across two
// relay GPUs A and B runs a pass-through kernel (peer read, peer write) on each, B's gated by an event on
// A's stream and joined back to it, as Transport does. This times, per size, each kernel on its own GPU
// (events of one GPU only), the whole transfer on A, the same two kernels without the cross-GPU events
// (started together after a host synchronization) and by launch shape, one kernel alone, and the transport
// itself.
// Usage: peerlink_relay_timeline [src dst relayA relayB]   (default 0 1 2 3)
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_measure.hpp"
#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "kernels/copy_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/transport.hpp"
#include "tool_main.hpp"

namespace peerlink {
namespace {

constexpr int kWarmup = 5;
constexpr int kIterations = 20;

double elapsedUs(const Event& from, const Event& to) {
  float ms = 0;
  PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return static_cast<double>(ms) * 1000.0;
}

double median(const std::vector<double>& samples) {
  return computeStats(samples).median;
}

// Per-iteration events of one GPU's stream, recorded around the work of each iteration.
struct Marks {
  std::vector<Event> before, after;
  Marks(int device, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      before.emplace_back(device);
      after.emplace_back(device);
    }
  }
  std::vector<double> timed() const {  // the timed iterations, after the warm-up
    std::vector<double> us;
    for (std::size_t i = static_cast<std::size_t>(kWarmup); i < before.size(); ++i)
      us.push_back(elapsedUs(before[i], after[i]));
    return us;
  }
};

struct Setup {
  int src, dst, a, b;
  int smsA, smsB, smsDst;
  std::size_t bytes;
  DeviceBuffer& from;
  DeviceBuffer& to;
};

// The median of kIterations timed calls of `enqueue` on `stream` (of `device`), after kWarmup untimed.
double medianOn(int device, cudaStream_t stream, const std::function<void()>& enqueue) {
  return median(timeIterations(device, stream, kWarmup, kIterations, [&](int) { enqueue(); }));
}

void printRow(const char* what, std::size_t bytes, double us) {
  std::printf("  %-52s %9.1f us  %7.1f GB/s\n", what, us, static_cast<double>(bytes) / (us * 1e3));
}

// The split's two kernels started together after a host synchronization (no cross-GPU events), each on
// `smsA` / `smsB` SMs with `config`: the medians of each kernel's time on its own GPU.
std::pair<double, double> splitWithoutEvents(const Setup& s, int smsA, int smsB, const kernels::SmCopyConfig& config) {
  const std::size_t half = s.bytes / 2 / 4096 * 4096;
  const auto* source = static_cast<const char*>(s.from.data());
  auto* destination = static_cast<char*>(s.to.data());
  Stream onA(s.a), onB(s.b);
  constexpr std::size_t n = kWarmup + kIterations;
  Marks kernelA(s.a, n), kernelB(s.b, n);
  for (std::size_t i = 0; i < n; ++i) {
    PEERLINK_CUDA_CHECK(cudaStreamSynchronize(onA.get()));
    PEERLINK_CUDA_CHECK(cudaStreamSynchronize(onB.get()));
    {
      DeviceGuard guard(s.b);
      PEERLINK_CUDA_CHECK(cudaEventRecord(kernelB.before[i].get(), onB.get()));
      kernels::launchSmCopy(destination + half, source + half, s.bytes - half, smsB, onB.get(), config);
      PEERLINK_CUDA_CHECK(cudaEventRecord(kernelB.after[i].get(), onB.get()));
    }
    DeviceGuard guard(s.a);
    PEERLINK_CUDA_CHECK(cudaEventRecord(kernelA.before[i].get(), onA.get()));
    kernels::launchSmCopy(destination, source, half, smsA, onA.get(), config);
    PEERLINK_CUDA_CHECK(cudaEventRecord(kernelA.after[i].get(), onA.get()));
  }
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(onA.get()));
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(onB.get()));
  return {median(kernelA.timed()), median(kernelB.timed())};
}

// One relay GPU's pass-through kernel moving the whole transfer, by SMs: the median time.
void sweepOneRelay(const Setup& s) {
  std::printf("%zu MiB, one relay kernel (GPU %d) moving all of it, by SMs\n", s.bytes >> 20, s.a);
  Stream onA(s.a);
  for (int sms : {s.smsA, s.smsA / 2, s.smsA / 4, s.smsA / 8}) {
    const std::string what = fmt::format("{} SMs", sms);
    printRow(what.c_str(), s.bytes, medianOn(s.a, onA.get(), [&] {
               kernels::launchSmCopy(s.to.data(), s.from.data(), s.bytes, sms, onA.get());
             }));
  }
}

// The split's kernels by launch shape: SMs per relay GPU and loads in flight per thread. The
// transfer takes the slower kernel's time.
void sweepShapes(const Setup& s) {
  std::printf("%zu MiB, split without events, by shape: the slower kernel's time\n", s.bytes >> 20);
  for (int sms : {s.smsA, s.smsA / 2, s.smsA / 4, s.smsA / 6, s.smsA / 8, s.smsA / 16}) {
    for (int unroll : {4, 8}) {
      kernels::SmCopyConfig config;  // streaming hint (calls I: plain within 3%)
      config.unroll = unroll;
      const auto [onA, onB] = splitWithoutEvents(s, sms, sms, config);
      const std::string what = fmt::format("{} SMs each, unroll {}", sms, unroll);
      printRow(what.c_str(), s.bytes, std::max(onA, onB));
    }
  }
}

void timeSize(const Setup& s, Transport& transport) {
  const std::size_t half = s.bytes / 2 / 4096 * 4096;
  const auto* source = static_cast<const char*>(s.from.data());
  auto* destination = static_cast<char*>(s.to.data());
  Stream onA(s.a), onB(s.b), onDst(s.dst);
  constexpr std::size_t n = kWarmup + kIterations;
  std::printf("%zu MiB\n", s.bytes >> 20);

  printRow("direct SM read (reference)", s.bytes, medianOn(s.dst, onDst.get(), [&] {
             kernels::launchSmCopy(destination, source, s.bytes, s.smsDst, onDst.get());
           }));
  printRow("one relay kernel alone, half the bytes", half,
           medianOn(s.a, onA.get(), [&] { kernels::launchSmCopy(destination, source, half, s.smsA, onA.get()); }));
  {  // the split as the transport runs it: B gated on A's stream and joined back, back to back
    Marks total(s.a, n), kernelA(s.a, n), kernelB(s.b, n);
    std::vector<Event> start, done;
    for (std::size_t i = 0; i < n; ++i) {
      start.emplace_back(s.a, cudaEventDisableTiming);
      done.emplace_back(s.b, cudaEventDisableTiming);
    }
    for (std::size_t i = 0; i < n; ++i) {
      {
        DeviceGuard guard(s.a);
        PEERLINK_CUDA_CHECK(cudaEventRecord(total.before[i].get(), onA.get()));
        PEERLINK_CUDA_CHECK(cudaEventRecord(start[i].get(), onA.get()));
      }
      {
        DeviceGuard guard(s.b);
        PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(onB.get(), start[i].get(), 0));
        PEERLINK_CUDA_CHECK(cudaEventRecord(kernelB.before[i].get(), onB.get()));
        kernels::launchSmCopy(destination + half, source + half, s.bytes - half, s.smsB, onB.get());
        PEERLINK_CUDA_CHECK(cudaEventRecord(kernelB.after[i].get(), onB.get()));
        PEERLINK_CUDA_CHECK(cudaEventRecord(done[i].get(), onB.get()));
      }
      DeviceGuard guard(s.a);
      PEERLINK_CUDA_CHECK(cudaEventRecord(kernelA.before[i].get(), onA.get()));
      kernels::launchSmCopy(destination, source, half, s.smsA, onA.get());
      PEERLINK_CUDA_CHECK(cudaEventRecord(kernelA.after[i].get(), onA.get()));
      PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(onA.get(), done[i].get(), 0));
      PEERLINK_CUDA_CHECK(cudaEventRecord(total.after[i].get(), onA.get()));
    }
    PEERLINK_CUDA_CHECK(cudaStreamSynchronize(onA.get()));
    printRow("split, gated and joined: whole transfer on A", s.bytes, median(total.timed()));
    printRow("  its kernel on A", half, median(kernelA.timed()));
    printRow("  its kernel on B", s.bytes - half, median(kernelB.timed()));
  }
  const auto [kernelOnA, kernelOnB] = splitWithoutEvents(s, s.smsA, s.smsB, kernels::SmCopyConfig());
  printRow("split, no events (host-synchronized start): kernel on A", half, kernelOnA);
  printRow("  kernel on B", s.bytes - half, kernelOnB);
  {  // the transport's own split relay, back to back on A's stream (as peerlink bench runs it)
    Route route;
    route.mode = RouteMode::Relay;
    route.engine = Engine::Sm;
    route.direction = Direction::Read;
    route.relayGpu = s.a;
    route.relayStripes = {s.a, s.b};
    const double us = medianOn(s.a, onA.get(), [&] {
      transport.copy({s.to.data(), s.dst}, {s.from.data(), s.src}, s.bytes, route, onA.get());
    });
    printRow("Transport::copy, the split relay route", s.bytes, us);
  }
}

int run(int src, int dst, int a, int b) {
  Transport transport(discoverTopology(Params()), Params());
  for (int relay : {a, b}) {
    transport.enablePeerAccess(relay, src);
    transport.enablePeerAccess(relay, dst);
  }
  transport.enablePeerAccess(dst, src);
  const std::size_t largest = std::size_t{1} << 30;
  DeviceBuffer from(src, largest), to(dst, largest);
  const auto& gpus = transport.topology().gpus;
  std::printf("split RELAY GPU %d -> GPU %d through GPUs %d and %d: medians of %d iterations after %d\n", src, dst, a,
              b, kIterations, kWarmup);
  for (std::size_t bytes : {std::size_t{16} << 20, std::size_t{64} << 20, std::size_t{256} << 20, largest}) {
    const Setup setup{src,
                      dst,
                      a,
                      b,
                      gpus[static_cast<std::size_t>(a)].smCount,
                      gpus[static_cast<std::size_t>(b)].smCount,
                      gpus[static_cast<std::size_t>(dst)].smCount,
                      bytes,
                      from,
                      to};
    timeSize(setup, transport);
    if (bytes == (std::size_t{64} << 20) || bytes == (std::size_t{256} << 20)) {
      sweepShapes(setup);
      sweepOneRelay(setup);
    }
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  const int src = argc > 1 ? std::atoi(argv[1]) : 0;
  const int dst = argc > 2 ? std::atoi(argv[2]) : 1;
  const int a = argc > 3 ? std::atoi(argv[3]) : 2;
  const int b = argc > 4 ? std::atoi(argv[4]) : 3;
  return peerlink::tools::runTool("peerlink_relay_timeline", [&] { return peerlink::run(src, dst, a, b); });
}
