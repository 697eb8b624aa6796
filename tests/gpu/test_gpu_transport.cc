// Every route executed on real GPUs and verified on the destination GPU: pattern-filled source,
// poisoned destination with guard bytes on both sides, odd sizes and unaligned offsets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/transport.hpp"
#include "transport/pattern_check.hpp"

namespace peerlink {
namespace {

constexpr std::size_t kGuard = 4096;
constexpr std::size_t kMiB = std::size_t{1} << 20;

Route makeRoute(RouteMode mode, Engine engine, Direction direction, int relay = -1, std::size_t chunk = 0) {
  Route route;
  route.mode = mode;
  route.engine = engine;
  route.direction = direction;
  route.relayGpu = relay;
  route.chunkBytes = chunk;
  route.reason = "forced by the test";
  return route;
}

std::string routeText(const Route& route) {
  return std::string(routeModeName(route.mode)) + "/" + engineName(route.engine) + "/" +
         directionName(route.direction) + (route.relayGpu >= 0 ? "/via" + std::to_string(route.relayGpu) : "");
}

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (testing::cudaDevices(&why) < 3) GTEST_SKIP() << (why.empty() ? "needs 3 GPUs (relay through a third)" : why);
    transport_ = std::make_unique<Transport>(discoverTopology(Params()), Params());
  }

  // Copies `bytes` from GPU src (at srcOffset) to GPU dst (at dstOffset) by `route` and verifies the
  // destination on its own GPU, guard bytes included.
  void verifiedCopy(const Route& route, int src, int dst, std::size_t bytes, std::size_t srcOffset,
                    std::size_t dstOffset) {
    SCOPED_TRACE(routeText(route) + " GPU " + std::to_string(src) + " -> " + std::to_string(dst) + " bytes " +
                 std::to_string(bytes) + " offsets " + std::to_string(srcOffset) + "/" + std::to_string(dstOffset));
    const std::uint64_t seed = 0x1234 + bytes * 31 + srcOffset * 7 + dstOffset;
    DeviceBuffer source(src, bytes + srcOffset);
    DeviceBuffer destination(dst, bytes + dstOffset + 2 * kGuard);
    Stream srcStream(src);
    Stream dstStream(dst);
    {
      DeviceGuard guard(src);
      kernels::launchFillPattern(static_cast<char*>(source.data()) + srcOffset, bytes, seed, srcStream.get());
      ASSERT_EQ(cudaStreamSynchronize(srcStream.get()), cudaSuccess);
    }
    {
      DeviceGuard guard(dst);
      kernels::launchFillByte(destination.data(), destination.size(), kPoisonByte, dstStream.get());
      ASSERT_EQ(cudaStreamSynchronize(dstStream.get()), cudaSuccess);
    }
    char* target = static_cast<char*>(destination.data()) + kGuard + dstOffset;
    const int executing = executingDevice(route, src, dst);
    Stream stream(executing);
    transport_->copy({target, dst}, {static_cast<char*>(source.data()) + srcOffset, src}, bytes, route, stream.get());
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);

    PatternChecker checker(dst);
    const CheckResult data = checker.checkPattern(target, bytes, seed, dstStream.get());
    EXPECT_TRUE(data.ok()) << data.mismatches << " wrong bytes, first at " << data.firstMismatch;
    const CheckResult head = checker.checkByte(destination.data(), kGuard + dstOffset, kPoisonByte, dstStream.get());
    EXPECT_TRUE(head.ok()) << "wrote " << head.mismatches << " bytes before the destination";
    const CheckResult tail = checker.checkByte(target + bytes, kGuard, kPoisonByte, dstStream.get());
    EXPECT_TRUE(tail.ok()) << "wrote " << tail.mismatches << " bytes after the destination";
  }

  std::vector<Route> everyRoute(int relay, std::size_t chunk) const {
    std::vector<Route> routes;
    for (Engine engine : {Engine::CopyEngine, Engine::Sm}) {
      for (Direction direction : {Direction::Write, Direction::Read}) {
        routes.push_back(makeRoute(RouteMode::Direct, engine, direction));
        routes.push_back(makeRoute(RouteMode::Relay, engine, direction, relay, chunk));
      }
    }
    routes.push_back(makeRoute(RouteMode::Staged, Engine::CopyEngine, Direction::Write, -1, chunk));
    return routes;
  }

  std::unique_ptr<Transport> transport_;
};

TEST_F(TransportTest, EveryRouteOddSizesAndUnalignedOffsets) {
  const std::vector<std::size_t> sizes = {1, 3, 15, 16, 17, 4096 + 3, kMiB + 7, 64 * kMiB + 13};
  const std::vector<std::pair<std::size_t, std::size_t>> offsets = {{0, 0}, {3, 5}, {16, 1}, {8, 8}};
  for (const Route& route : everyRoute(2, 256 * 1024)) {
    for (std::size_t bytes : sizes) {
      for (auto [srcOffset, dstOffset] : offsets) {
        verifiedCopy(route, 0, 1, bytes, srcOffset, dstOffset);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(TransportTest, EveryRouteBothDirectionsOfEveryPair) {
  const int count = static_cast<int>(transport_->topology().gpus.size());
  for (int src = 0; src < count; ++src) {
    for (int dst = 0; dst < count; ++dst) {
      if (src == dst) continue;
      const int relay = [&] {
        for (int k = 0; k < count; ++k) {
          if (k != src && k != dst) return k;
        }
        return -1;
      }();
      for (const Route& route : everyRoute(relay, 2 * kMiB)) verifiedCopy(route, src, dst, 16 * kMiB + 1, 1, 0);
    }
  }
}

TEST_F(TransportTest, RelaySplitAcrossSeveralGpus) {
  if (transport_->topology().gpus.size() < 4) GTEST_SKIP() << "needs 4 GPUs (two relays)";
  Route striped = makeRoute(RouteMode::Relay, Engine::Sm, Direction::Read, 2);
  striped.relayStripes = {2, 3};
  // The caller's stripe takes 1 MiB more (planRelayShares): below that the others get nothing.
  for (std::size_t bytes :
       {std::size_t{1}, std::size_t{4096} + 1, std::size_t{8193}, kMiB + 5, 2 * kMiB + 4097, 64 * kMiB + 13}) {
    verifiedCopy(striped, 0, 1, bytes, 3, 5);
  }
}

TEST_F(TransportTest, OneGibibyteByEachKindOfRoute) {
  const std::size_t bytes = 1024 * kMiB;
  for (const Route& route : {makeRoute(RouteMode::Direct, Engine::CopyEngine, Direction::Write),
                             makeRoute(RouteMode::Direct, Engine::Sm, Direction::Read),
                             makeRoute(RouteMode::Relay, Engine::CopyEngine, Direction::Write, 2, 8 * kMiB),
                             makeRoute(RouteMode::Staged, Engine::CopyEngine, Direction::Write, -1, 8 * kMiB)}) {
    verifiedCopy(route, 0, 1, bytes, 0, 0);
  }
}

TEST_F(TransportTest, AutoRoutesCopySynchronously) {
  for (std::size_t bytes : {std::size_t{8}, 64 * std::size_t{1024}, 32 * kMiB + 5}) {
    DeviceBuffer source(0, bytes);
    DeviceBuffer destination(1, bytes);
    {
      DeviceGuard guard(0);
      kernels::launchFillPattern(source.data(), bytes, 99, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
    const Route route = transport_->copySync({destination.data(), 1}, {source.data(), 0}, bytes);
    EXPECT_EQ(route.mode, RouteMode::Direct) << route.reason;
    Stream stream(1);
    PatternChecker checker(1);
    EXPECT_TRUE(checker.checkPattern(destination.data(), bytes, 99, stream.get()).ok()) << bytes;
  }
}

ErrorCode codeOf(const std::function<void()>& action, std::string* message) {
  try {
    action();
  } catch (const Error& error) {
    *message = error.what();
    return error.code();
  }
  return ErrorCode::Internal;
}

TEST_F(TransportTest, BadArgumentsAreClearErrorsBeforeAnythingRuns) {
  DeviceBuffer on0(0, 4096);
  DeviceBuffer on1(1, 4096);
  std::vector<char> host(4096);
  const Route direct = makeRoute(RouteMode::Direct, Engine::CopyEngine, Direction::Write);
  std::string message;
  EXPECT_EQ(codeOf(
                [&] {
                  transport_->copy({on1.data(), 1}, {nullptr, 0}, 16, direct, nullptr);
                },
                &message),
            ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("source pointer is null"), std::string::npos) << message;
  EXPECT_EQ(codeOf(
                [&] {
                  transport_->copy({on1.data(), 1}, {host.data(), 0}, 16, direct, nullptr);
                },
                &message),
            ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("not CUDA memory"), std::string::npos) << message;
  EXPECT_EQ(codeOf(
                [&] {
                  transport_->copy({on1.data(), 1}, {on1.data(), 0}, 16, direct, nullptr);
                },
                &message),
            ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("belongs to GPU 1, not GPU 0"), std::string::npos) << message;
  EXPECT_EQ(codeOf(
                [&] {
                  transport_->copy({on1.data(), 99}, {on0.data(), 0}, 16, direct, nullptr);
                },
                &message),
            ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  char* base = static_cast<char*>(on0.data());
  EXPECT_EQ(codeOf(
                [&] {
                  transport_->copy({base + 8, 0}, {base, 0}, 16, direct, nullptr);
                },
                &message),
            ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("overlap"), std::string::npos) << message;
  Stream wrong(1);
  EXPECT_EQ(codeOf(
                [&] {
                  transport_->copy({on1.data(), 1}, {on0.data(), 0}, 16, direct, wrong.get());
                },
                &message),
            ErrorCode::InvalidUsage);
  EXPECT_NE(message.find("the stream belongs to GPU 1"), std::string::npos) << message;
  EXPECT_NO_THROW(transport_->copy({nullptr, 1}, {nullptr, 0}, 0, direct, nullptr));  // size 0: nothing
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(TransportTest, PeerAccessIsIdempotent) {
  EXPECT_NO_THROW(transport_->enablePeerAccess(0, 1));
  EXPECT_NO_THROW(transport_->enablePeerAccess(0, 1));
  DeviceGuard guard(0);
  // Enabled by someone else in the process already: still fine.
  cudaDeviceEnablePeerAccess(2, 0);
  cudaGetLastError();
  EXPECT_NO_THROW(transport_->enablePeerAccess(0, 2));
}

}  // namespace
}  // namespace peerlink
