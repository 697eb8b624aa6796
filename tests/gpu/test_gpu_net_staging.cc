// The transport between nodes' staged path on a GPU (src/net/cuda_device_access.cc): two ranks of a loopback world
// in one process, their buffers in GPU memory, pieces copied to pinned host memory on the transport's own stream
// while the previous piece's messages move; all-reduce and all-gather checked on the host. The MPI side of the
// same path runs in CPU tests (tests/mpi/, scripts/net-test.sh); this shows the GPU's copies.
#include <cuda_runtime_api.h>

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "net/cuda_device_access.hpp"
#include "net/net_world.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::net {
namespace {

TEST(GpuNetStaging, AllReduceAndAllGatherThroughPinnedMemory) {
  PEERLINK_REQUIRE_GPUS(1);
  const std::size_t count = std::size_t{1} << 20;  // 4 MiB of f32: 16 pieces of 256 KiB
  std::vector<std::unique_ptr<PointToPoint>> p2p = loopbackWorld(2);
  std::vector<std::string> errors(2);
  std::vector<std::vector<float>> reduced(2), gathered(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        const auto i = static_cast<std::size_t>(r);
        NetOptions options;
        options.timeout = std::chrono::milliseconds(20000);
        options.chunkBytes = 256 << 10;
        options.path = NetPath::Staged;
        NetWorld world(std::move(p2p[i]), options, cudaDeviceAccess(0), std::make_unique<HostMemory>());
        auto group = world.group({0, 1}, "two");
        std::vector<float> host(count);
        for (std::size_t k = 0; k < count; ++k) host[k] = static_cast<float>((k % 1000) * (r + 1));
        DeviceBuffer send(0, count * sizeof(float)), recv(0, 2 * count * sizeof(float));
        if (cudaMemcpy(send.data(), host.data(), count * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
          throw std::runtime_error("cudaMemcpy to the GPU failed");
        }
        group->allReduce(send.data(), recv.data(), count, DataType::F32, ReduceOp::Sum);
        reduced[i].resize(count);
        cudaMemcpy(reduced[i].data(), recv.data(), count * sizeof(float), cudaMemcpyDeviceToHost);
        group->allGather(send.data(), recv.data(), count, DataType::F32);
        gathered[i].resize(2 * count);
        cudaMemcpy(gathered[i].data(), recv.data(), 2 * count * sizeof(float), cudaMemcpyDeviceToHost);
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(r)] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[static_cast<std::size_t>(r)], "");
    for (std::size_t k = 0; k < count; k += 997) {
      ASSERT_EQ(reduced[static_cast<std::size_t>(r)][k], static_cast<float>((k % 1000) * 3)) << "element " << k;
      ASSERT_EQ(gathered[static_cast<std::size_t>(r)][k], static_cast<float>(k % 1000));
      ASSERT_EQ(gathered[static_cast<std::size_t>(r)][count + k], static_cast<float>((k % 1000) * 2));
    }
  }
}

}  // namespace
}  // namespace peerlink::net
