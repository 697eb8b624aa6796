// The CUDA RAII owners on a real device: allocation, moves, release, and errors as peerlink::Error.
#include <gtest/gtest.h>

#include <vector>

#include "gpu_test_support.hpp"
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
