// put-with-signal through SignalChannel on real GPUs: data arrives intact and in order, and a dropped
// flag (the test-only fault switch) becomes a Timeout error naming the pair within the deadline.
#include <gtest/gtest.h>

#include <chrono>

#include "gpu_test_support.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/signal_channel.hpp"
#include "peerlink/transport.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {
namespace {

class SignalChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const int count = testing::cudaDevices(&why);
    if (count < 2) GTEST_SKIP() << (why.empty() ? "needs 2 GPUs" : why);
  }
};

TEST_F(SignalChannelTest, MessagesArriveIntactAndInOrder) {
  Params params;
  Transport transport(discoverTopology(params), params);
  constexpr std::size_t kMax = 65536 + 16;
  SignalChannel channel(transport, 0, 1, kMax);
  DeviceBuffer source(0, kMax);
  DeviceBuffer target(1, kMax);
  Stream sendStream(0), receiveStream(1);
  PatternChecker checker(1);
  std::uint64_t seed = 100;
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{8}, std::size_t{13}, std::size_t{4096},
                            std::size_t{65536}, std::size_t{65536 + 3}}) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      ++seed;
      {
        DeviceGuard guard(0);
        kernels::launchFillPattern(source.data(), bytes, seed, sendStream.get());
      }
      channel.receive(target.data(), bytes, receiveStream.get());  // the receiver may wait first
      channel.send(source.data(), bytes, sendStream.get());
      ASSERT_EQ(cudaStreamSynchronize(receiveStream.get()), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(sendStream.get()), cudaSuccess);
      EXPECT_NO_THROW(channel.check()) << bytes;
      EXPECT_TRUE(checker.checkPattern(target.data(), bytes, seed, receiveStream.get()).ok()) << bytes << " B";
    }
  }
}

TEST_F(SignalChannelTest, BothDirectionsOfEveryPair) {
  Params params;
  Transport transport(discoverTopology(params), params);
  const int count = static_cast<int>(transport.topology().gpus.size());
  for (int src = 0; src < count; ++src) {
    for (int dst = 0; dst < count; ++dst) {
      if (src == dst) continue;
      SignalChannel channel(transport, src, dst, 4096);
      DeviceBuffer source(src, 4096), target(dst, 4096);
      Stream sendStream(src), receiveStream(dst);
      {
        DeviceGuard guard(src);
        kernels::launchFillPattern(source.data(), 4096, 7, sendStream.get());
      }
      channel.send(source.data(), 4096, sendStream.get());
      channel.receive(target.data(), 4096, receiveStream.get());
      ASSERT_EQ(cudaStreamSynchronize(receiveStream.get()), cudaSuccess);
      EXPECT_NO_THROW(channel.check());
      EXPECT_TRUE(PatternChecker(dst).checkPattern(target.data(), 4096, 7, receiveStream.get()).ok())
          << src << " -> " << dst;
    }
  }
}

TEST_F(SignalChannelTest, DroppedFlagBecomesATimeoutNamingThePair) {
  Params params;
  params.set("PEERLINK_FAULT_DROP_FLAG", "1");
  params.set("PEERLINK_TIMEOUT_MS", "50");
  Transport transport(discoverTopology(params), params);
  SignalChannel channel(transport, 0, 1, 64);
  DeviceBuffer source(0, 64), target(1, 64);
  Stream sendStream(0), receiveStream(1);
  const auto start = std::chrono::steady_clock::now();
  channel.send(source.data(), 8, sendStream.get());
  channel.receive(target.data(), 8, receiveStream.get());
  ASSERT_EQ(cudaStreamSynchronize(receiveStream.get()), cudaSuccess);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, std::chrono::seconds(2));
  try {
    channel.check();
    FAIL() << "a dropped flag went unnoticed";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Timeout);
    EXPECT_NE(std::string(error.what()).find("GPU 0 -> GPU 1"), std::string::npos) << error.what();
    std::printf("dropped flag reported after %.1f ms: %s\n", std::chrono::duration<double, std::milli>(waited).count(),
                error.what());
  }
  EXPECT_NO_THROW(channel.check());  // reported once
}

TEST_F(SignalChannelTest, BadArguments) {
  Params params;
  Transport transport(discoverTopology(params), params);
  EXPECT_THROW(SignalChannel(transport, 0, 0, 8), Error);
  EXPECT_THROW(SignalChannel(transport, 0, 99, 8), Error);
  SignalChannel channel(transport, 0, 1, 8);
  DeviceBuffer source(0, 64);
  Stream stream(0);
  try {
    channel.send(source.data(), 9, stream.get());
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(error.what()).find("at most 8"), std::string::npos);
  }
}

}  // namespace
}  // namespace peerlink
