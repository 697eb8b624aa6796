// Development tool, not a test: what an eager collective costs the host. Times, on this machine's host,
// the CUDA runtime queries a call's validation makes (pointer attributes, capture status, a stream's device)
// and whole eager Communicator::allReduce calls of 8 bytes, on one GPU and on every GPU, so the eager path's
// time can be split between peerlink's checks, its launch and the driver. Usage: peerlink_host_cost [calls]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "core/cuda_check.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

constexpr int kSyncEvery = 64;  // calls between synchronizations, so the launch queue never fills

// Nanoseconds per call of `call`, timing only the calls (not the synchronizations between batches).
double nsPerCall(int calls, const std::function<void()>& call, const std::function<void()>& sync) {
  for (int i = 0; i < kSyncEvery; ++i) call();  // warm-up
  sync();
  std::chrono::steady_clock::duration spent{};
  for (int done = 0; done < calls; done += kSyncEvery) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSyncEvery; ++i) call();
    spent += std::chrono::steady_clock::now() - start;
    sync();
  }
  const int timed = (calls + kSyncEvery - 1) / kSyncEvery * kSyncEvery;
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()) / timed;
}

void run(int calls) {
  int gpus = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  DeviceGuard guard(0);
  DeviceBuffer buffer(0, 4096);
  Stream stream(0);
  const auto none = [] {};
  cudaPointerAttributes attributes{};
  std::printf("host cost per call, ns (%d calls each)\n", calls);
  std::printf("  cudaPointerGetAttributes       %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)cudaPointerGetAttributes(&attributes, buffer.data()); }, none));
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  std::printf("  cudaStreamIsCapturing          %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)cudaStreamIsCapturing(stream.get(), &capture); }, none));
  int device = -1;
  std::printf("  cudaStreamGetDevice            %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)cudaStreamGetDevice(stream.get(), &device); }, none));
  const auto syncOne = [&] { PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream.get())); };
  {
    Communicator one({0});
    std::printf(
        "  allReduce, 1 GPU, 8 B          %8.0f\n",
        nsPerCall(
            calls,
            [&] { one.allReduce(0, buffer.data(), buffer.data(), 2, DataType::F32, ReduceOp::Sum, stream.get()); },
            syncOne));
  }
  std::vector<int> devices;
  std::vector<DeviceBuffer> buffers;
  std::vector<Stream> streams;
  for (int d = 0; d < gpus; ++d) {
    devices.push_back(d);
    buffers.emplace_back(d, 4096);
    streams.emplace_back(d);
  }
  Communicator all(devices);
  const auto syncAll = [&] {
    for (Stream& s : streams) PEERLINK_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  };
  const auto everyRank = [&](bool inPlace) {
    for (int r = 0; r < gpus; ++r) {
      void* recv = buffers[static_cast<std::size_t>(r)].data();
      const void* send = inPlace ? recv : static_cast<const char*>(recv) + 2048;
      all.allReduce(r, send, recv, 2, DataType::F32, ReduceOp::Sum, streams[static_cast<std::size_t>(r)].get());
    }
  };
  std::printf("  allReduce, %d GPUs, 8 B, in place, per rank      %8.0f\n", gpus,
              nsPerCall(
                  calls, [&] { everyRank(true); }, syncAll) /
                  gpus);
  std::printf("  allReduce, %d GPUs, 8 B, out of place, per rank  %8.0f\n", gpus,
              nsPerCall(
                  calls, [&] { everyRank(false); }, syncAll) /
                  gpus);
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  try {
    peerlink::run(calls > 0 ? calls : 20000);
  } catch (const peerlink::Error& error) {
    std::fprintf(stderr, "peerlink_host_cost: %s\n", error.what());
    return 1;
  }
  return 0;
}
