// Development tool, not a test: sweeps the SM copy kernel's launch configuration, the bulk-copy (TMA) kernel's
// stages, and the relay's chunk size on a real machine, beside the copy engine measured in the same run, so the
// transport's defaults come from measurements. Usage: peerlink_tune [src dst relay]   (default 0 1 2)
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/stats.hpp"
#include "core/cuda_check.hpp"
#include "kernels/bulk_copy.cuh"
#include "kernels/copy_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/transport.hpp"
#include "tool_main.hpp"

namespace peerlink {
namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;
constexpr int kWarmup = 5;
constexpr int kIterations = 20;

double medianGBps(int device, cudaStream_t stream, const std::function<void()>& enqueue) {
  DeviceGuard guard(device);
  for (int i = 0; i < kWarmup; ++i) enqueue();
  std::vector<double> us;
  Event start(device), stop(device);
  for (int i = 0; i < kIterations; ++i) {
    PEERLINK_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    enqueue();
    PEERLINK_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    us.push_back(static_cast<double>(ms) * 1000.0);
  }
  return static_cast<double>(kBytes) / (computeStats(us).median * 1e3);
}

// A copy of kBytes from src to dst enqueued on `stream` of the current device.
using Launch = std::function<void(void* dst, const void* src, cudaStream_t stream)>;

// Both ways at once between GPUs a and b: each GPU's kernel either pushes its data out (write) or pulls the
// other's in (read). Returns the sum of the two directions' median GB/s.
double bothWaysGBps(int a, int b, bool pull, const Launch& launch) {
  DeviceBuffer aFrom(a, kBytes), aTo(b, kBytes), bFrom(b, kBytes), bTo(a, kBytes);
  Stream onA(a), onB(b);
  std::vector<double> there, back;
  for (int i = 0; i < kWarmup + kIterations; ++i) {
    Event a0(a), a1(a), b0(b), b1(b);
    // forward a -> b runs on a (push) or b (pull); backward b -> a on the other side.
    const int forwardDevice = pull ? b : a;
    const int backwardDevice = pull ? a : b;
    cudaStream_t forwardStream = pull ? onB.get() : onA.get();
    cudaStream_t backwardStream = pull ? onA.get() : onB.get();
    Event& f0 = pull ? b0 : a0;
    Event& f1 = pull ? b1 : a1;
    Event& g0 = pull ? a0 : b0;
    Event& g1 = pull ? a1 : b1;
    {
      DeviceGuard guard(forwardDevice);
      PEERLINK_CUDA_CHECK(cudaEventRecord(f0.get(), forwardStream));
      launch(aTo.data(), aFrom.data(), forwardStream);
      PEERLINK_CUDA_CHECK(cudaEventRecord(f1.get(), forwardStream));
    }
    {
      DeviceGuard guard(backwardDevice);
      PEERLINK_CUDA_CHECK(cudaEventRecord(g0.get(), backwardStream));
      launch(bTo.data(), bFrom.data(), backwardStream);
      PEERLINK_CUDA_CHECK(cudaEventRecord(g1.get(), backwardStream));
    }
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(f1.get()));
    PEERLINK_CUDA_CHECK(cudaEventSynchronize(g1.get()));
    if (i < kWarmup) continue;
    float ms = 0;
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, f0.get(), f1.get()));
    there.push_back(static_cast<double>(ms) * 1000.0);
    PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, g0.get(), g1.get()));
    back.push_back(static_cast<double>(ms) * 1000.0);
  }
  return static_cast<double>(kBytes) / (computeStats(there).median * 1e3) +
         static_cast<double>(kBytes) / (computeStats(back).median * 1e3);
}

struct BulkResult {
  kernels::SmCopyConfig config;
  double gbps = 0;
};

std::string bulkName(const kernels::SmCopyConfig& config) {
  return std::to_string(config.bulkChunkBytes >> 10) + " KiB x" + std::to_string(config.bulkStages) + ", " +
         std::to_string(config.blocksPerSm) + " blk/SM";
}

// The bulk-copy (TMA) kernel: stage size x stages x blocks per SM, both placements, beside the copy engine;
// then the best of each placement by SM count and both ways at once.
void bulkSweep(int src, int dst, int sms, double ceWrite, double ceRead, DeviceBuffer& from, DeviceBuffer& to,
               Stream& onSrc, Stream& onDst) {
  std::printf("\nBULK copy (cp.async.bulk through shared memory) GPU %d -> GPU %d, 256 MiB (GB/s, x copy engine)\n",
              src, dst);
  if (!kernels::bulkCopySupported(src) || !kernels::bulkCopySupported(dst)) {
    std::printf("  skipped: needs compute capability 9.0 on GPU %d and GPU %d\n", src, dst);
    return;
  }
  std::printf("%9s %6s %6s  %8s %6s  %8s %6s\n", "chunk KiB", "stages", "blk/SM", "write", "xCE", "read", "xCE");
  BulkResult bestWrite, bestRead;
  for (int chunkKiB : {16, 32, 64}) {
    for (int stages : {2, 3, 4}) {
      for (int perSm : {1, 2, 4}) {
        kernels::SmCopyConfig config;
        config.bulkChunkBytes = chunkKiB << 10;
        config.bulkStages = stages;
        config.blocksPerSm = perSm;
        int fit = 0;
        try {
          DeviceGuard guard(src);
          fit = kernels::bulkCopyBlocksPerSm(config);
        } catch (const Error&) {  // more shared memory than a block can have
        }
        if (fit < perSm) {
          if (perSm == 1 || fit == perSm / 2) {
            std::printf("%9d %6d %6d  (%d KiB of shared memory per block: %d fit on an SM)\n", chunkKiB, stages, perSm,
                        chunkKiB * stages, fit);
          }
          continue;
        }
        const double write = medianGBps(src, onSrc.get(), [&] {
          kernels::launchBulkCopy(to.data(), from.data(), kBytes, sms, onSrc.get(), config);
        });
        const double read = medianGBps(dst, onDst.get(), [&] {
          kernels::launchBulkCopy(to.data(), from.data(), kBytes, sms, onDst.get(), config);
        });
        std::printf("%9d %6d %6d  %8.1f %6.3f  %8.1f %6.3f\n", chunkKiB, stages, perSm, write, write / ceWrite, read,
                    read / ceRead);
        if (write > bestWrite.gbps) bestWrite = {config, write};
        if (read > bestRead.gbps) bestRead = {config, read};
      }
    }
  }
  std::printf("best bulk write: %s, %.1f GB/s (%.3f x CE); best bulk read: %s, %.1f GB/s (%.3f x CE)\n",
              bulkName(bestWrite.config).c_str(), bestWrite.gbps, bestWrite.gbps / ceWrite,
              bulkName(bestRead.config).c_str(), bestRead.gbps, bestRead.gbps / ceRead);

  std::printf("\nBULK copy by SM count (best write config / best read config): write / read GB/s\n");
  for (int count : {sms, sms * 3 / 4, sms / 2, sms / 4}) {
    const double write = medianGBps(src, onSrc.get(), [&] {
      kernels::launchBulkCopy(to.data(), from.data(), kBytes, count, onSrc.get(), bestWrite.config);
    });
    const double read = medianGBps(dst, onDst.get(), [&] {
      kernels::launchBulkCopy(to.data(), from.data(), kBytes, count, onDst.get(), bestRead.config);
    });
    std::printf("  %3d SMs: %7.1f  %7.1f\n", count, write, read);
  }

  std::printf("\nBULK copy both ways at once GPU %d <-> GPU %d (sum of the two directions, GB/s)\n", src, dst);
  for (bool pull : {false, true}) {
    const kernels::SmCopyConfig& config = pull ? bestRead.config : bestWrite.config;
    const double gbps = bothWaysGBps(src, dst, pull, [&](void* out, const void* in, cudaStream_t stream) {
      kernels::launchBulkCopy(out, in, kBytes, sms, stream, config);
    });
    std::printf("  %s, %s: %7.1f\n", pull ? "both pull" : "both push", bulkName(config).c_str(), gbps);
  }
}

int run(int src, int dst, int relay) {
  Transport transport(discoverTopology(Params()), Params());
  transport.enablePeerAccess(src, dst);
  transport.enablePeerAccess(dst, src);
  DeviceBuffer from(src, kBytes), to(dst, kBytes);
  Stream onSrc(src), onDst(dst);
  const int sms = transport.topology().gpus[static_cast<std::size_t>(src)].smCount;

  const double ceWrite = medianGBps(src, onSrc.get(), [&] {
    PEERLINK_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, kBytes, onSrc.get()));
  });
  const double ceRead = medianGBps(dst, onDst.get(), [&] {
    PEERLINK_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, kBytes, onDst.get()));
  });
  std::printf("reference copy engine GPU %d -> GPU %d, 256 MiB: write %.1f GB/s, read %.1f GB/s\n", src, dst, ceWrite,
              ceRead);
  std::printf("\nSM copy kernel GPU %d -> GPU %d, 256 MiB (GB/s, and x copy engine of the same direction)\n", src, dst);
  std::printf("%-10s %6s %7s %8s  %8s %6s  %8s %6s\n", "hint", "unroll", "threads", "blk/SM", "write", "xCE", "read",
              "xCE");
  for (kernels::CopyHint hint : {kernels::CopyHint::Plain, kernels::CopyHint::Streaming}) {
    for (int unroll : {4, 8}) {
      for (int threads : {256, 512, 1024}) {
        for (int perSm : {0, 1, 2, 4}) {
          if (perSm * threads > 2048) continue;
          const kernels::SmCopyConfig config{hint, unroll, threads, perSm};
          const double write = medianGBps(src, onSrc.get(), [&] {
            kernels::launchSmCopy(to.data(), from.data(), kBytes, sms, onSrc.get(), config);
          });
          const double read = medianGBps(dst, onDst.get(), [&] {
            kernels::launchSmCopy(to.data(), from.data(), kBytes, sms, onDst.get(), config);
          });
          std::printf("%-10s %6d %7d %8d  %8.1f %6.3f  %8.1f %6.3f\n", kernels::copyHintName(hint), unroll, threads,
                      perSm, write, write / ceWrite, read, read / ceRead);
        }
      }
    }
  }

  std::printf("\nSM copy by SM count (streaming, unroll 8, 512 threads): write / read GB/s\n");
  for (int count : {sms, sms * 3 / 4, sms / 2, sms / 4}) {
    const kernels::SmCopyConfig config{kernels::CopyHint::Streaming, 8, 512, 0};
    const double write = medianGBps(
        src, onSrc.get(), [&] { kernels::launchSmCopy(to.data(), from.data(), kBytes, count, onSrc.get(), config); });
    const double read = medianGBps(
        dst, onDst.get(), [&] { kernels::launchSmCopy(to.data(), from.data(), kBytes, count, onDst.get(), config); });
    std::printf("  %3d SMs: %7.1f  %7.1f\n", count, write, read);
  }

  std::printf("\nSM copy both ways at once GPU %d <-> GPU %d (sum of the two directions, GB/s)\n", src, dst);
  for (bool pull : {false, true}) {
    for (kernels::CopyHint hint : {kernels::CopyHint::Plain, kernels::CopyHint::Streaming}) {
      const kernels::SmCopyConfig config{hint, 8, 512, 0};
      const double gbps = bothWaysGBps(src, dst, pull, [&](void* out, const void* in, cudaStream_t stream) {
        kernels::launchSmCopy(out, in, kBytes, sms, stream, config);
      });
      std::printf("  %s, %s: %7.1f\n", pull ? "both pull" : "both push", kernels::copyHintName(hint), gbps);
    }
  }
  // Two GPUs' pass-through kernels reading one source ran faster on fewer SMs (round 37): the same question
  // for the two directions of a pair.
  std::printf("\nSM copy both ways by SMs per direction (streaming, unroll 8, 512 threads; sum, GB/s)\n");
  for (int count : {sms, sms / 2, sms / 4, sms / 8}) {
    const kernels::SmCopyConfig config{kernels::CopyHint::Streaming, 8, 512, 0};
    for (bool pull : {false, true}) {
      const double gbps = bothWaysGBps(src, dst, pull, [&](void* out, const void* in, cudaStream_t stream) {
        kernels::launchSmCopy(out, in, kBytes, count, stream, config);
      });
      std::printf("  %3d SMs, %s: %7.1f\n", count, pull ? "both pull" : "both push", gbps);
    }
  }

  bulkSweep(src, dst, sms, ceWrite, ceRead, from, to, onSrc, onDst);

  std::printf("\nRELAY GPU %d -> GPU %d via GPU %d, 256 MiB, by chunk size (GB/s, and x direct copy-engine write)\n",
              src, dst, relay);
  for (Engine engine : {Engine::CopyEngine, Engine::Sm}) {
    for (Direction direction : {Direction::Write, Direction::Read}) {
      for (std::size_t chunk : {std::size_t{2} << 20, std::size_t{4} << 20, std::size_t{8} << 20, std::size_t{16} << 20,
                                std::size_t{32} << 20, std::size_t{64} << 20}) {
        Route route;
        route.mode = RouteMode::Relay;
        route.engine = engine;
        route.direction = direction;
        route.relayGpu = relay;
        route.chunkBytes = chunk;
        Stream stream(relay);
        const double gbps = medianGBps(relay, stream.get(), [&] {
          transport.copy({to.data(), dst}, {from.data(), src}, kBytes, route, stream.get());
        });
        std::printf("relay %-3s %-5s chunk %3zu MiB: %7.1f GB/s  %5.3f\n", engineName(engine), directionName(direction),
                    chunk >> 20, gbps, gbps / ceWrite);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  const int src = argc > 1 ? std::atoi(argv[1]) : 0;
  const int dst = argc > 2 ? std::atoi(argv[2]) : 1;
  const int relay = argc > 3 ? std::atoi(argv[3]) : 2;
  return peerlink::tools::runTool("peerlink_tune", [&] { return peerlink::run(src, dst, relay); });
}
