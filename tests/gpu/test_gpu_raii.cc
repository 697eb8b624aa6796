// The CUDA RAII owners on a real device: allocation, moves, release, and errors as peerlink::Error.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "gpu_test_support.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

size_t freeBytes(int device) {
  DeviceGuard guard(device);
  size_t free = 0;
  size_t total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return free;
}

TEST(GpuRaii, DeviceBufferAllocatesMovesAndFrees) {
  PEERLINK_REQUIRE_GPUS(1);
  constexpr size_t kBytes = 256u << 20;
  const size_t before = freeBytes(0);
  {
    DeviceBuffer buffer(0, kBytes);
    ASSERT_NE(buffer.data(), nullptr);
    EXPECT_LE(freeBytes(0), before - kBytes);
    DeviceBuffer moved = std::move(buffer);
    EXPECT_EQ(buffer.data(), nullptr);
    EXPECT_EQ(moved.size(), kBytes);
    std::vector<unsigned char> host(4096, 0xAB);
    ASSERT_EQ(cudaMemcpy(moved.data(), host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<unsigned char> back(4096, 0);
    ASSERT_EQ(cudaMemcpy(back.data(), moved.data(), back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, host);
  }
  EXPECT_GE(freeBytes(0) + (16u << 20), before);  // released (allowing for allocator granularity)
}

TEST(GpuRaii, AbsurdAllocationThrowsCudaErrorNamingTheCall) {
  PEERLINK_REQUIRE_GPUS(1);
  try {
    DeviceBuffer buffer(0, size_t{1} << 60);
    FAIL() << "allocated 1 EiB";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::CudaError);
    EXPECT_NE(std::string(error.what()).find("cudaMalloc"), std::string::npos) << error.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the check cleared the error slot
}

TEST(GpuRaii, DeviceGuardRestoresTheCurrentDevice) {
  PEERLINK_REQUIRE_GPUS(2);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  {
    DeviceGuard guard(1);
    int current = -1;
    cudaGetDevice(&current);
    EXPECT_EQ(current, 1);
  }
  int current = -1;
  cudaGetDevice(&current);
  EXPECT_EQ(current, 0);
}

// On a thread that never used CUDA (device 0 current, no context), a guard of GPU 1 leaves no context on GPU 0, and
// neither does a communicator on GPU 1 made from such a thread (its setup threads guard their GPUs): a process of a
// launcher's world must not hold memory on GPU 0. In a fresh process (a death test re-runs the binary), where GPU 0
// has no context yet.
TEST(GpuRaii, GuardsOnFreshThreadsMakeNoContextOnGpuZero) {
  PEERLINK_REQUIRE_GPUS(2);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::thread([] {
          DeviceGuard guard(1);
          DeviceBuffer buffer(1, 1 << 20);
        }).join();
        if (primaryContextActive(0)) {
          std::fprintf(stderr, "a guard of GPU 1 made a context on GPU 0\n");
          std::exit(1);
        }
        std::thread([] {
          Communicator comm({1});
          std::vector<float> ones(1024, 1.0f);
          DeviceBuffer data(1, ones.size() * sizeof(float));
          PEERLINK_CUDA_CHECK(cudaMemcpy(data.data(), ones.data(), data.size(), cudaMemcpyHostToDevice));
          comm.allReduce(0, data.data(), data.data(), ones.size(), DataType::F32, ReduceOp::Sum, nullptr);
          PEERLINK_CUDA_CHECK(cudaSetDevice(1));
          PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
        }).join();
        if (primaryContextActive(0)) {
          std::fprintf(stderr, "a communicator on GPU 1 made a context on GPU 0\n");
          std::exit(2);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(GpuRaii, StreamsEventsAndPinnedMemoryWork) {
  PEERLINK_REQUIRE_GPUS(1);
  Stream stream(0);
  Event start(0);
  Event stop(0);
  PinnedBuffer pinned(1 << 20);
  DeviceBuffer device(0, 1 << 20);
  ASSERT_EQ(cudaEventRecord(start.get(), stream.get()), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(device.data(), pinned.data(), pinned.size(), cudaMemcpyHostToDevice, stream.get()),
            cudaSuccess);
  ASSERT_EQ(cudaEventRecord(stop.get(), stream.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  float ms = -1;
  ASSERT_EQ(cudaEventElapsedTime(&ms, start.get(), stop.get()), cudaSuccess);
  EXPECT_GE(ms, 0.0f);
}

TEST(GpuRaii, InvalidDeviceIsAnError) {
  PEERLINK_REQUIRE_GPUS(1);
  EXPECT_THROW(Stream(1000), Error);
  EXPECT_THROW(DeviceGuard(-5), Error);
}

}  // namespace
}  // namespace peerlink
