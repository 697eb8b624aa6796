// The transfer engine's kernels on real GPUs: SM copy (one GPU, peer write, peer read), put-with-signal and
// its wait, the dropped-flag timeout, ping-pong latency. Destinations are poisoned, guards included.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "copy_checker.hpp"
#include "core/cuda_check.hpp"
#include "gpu_test_buffers.hpp"
#include "kernels/copy_kernels.cuh"
#include "kernels/put_signal.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

using namespace ::peerlink::testing;  // shared gpu test helpers

constexpr unsigned char kPoison = 0xA5;
constexpr size_t kGuard = 64;                  // poisoned bytes checked on each side of a destination range
constexpr size_t kMaxOffset = kCopyMaxOffset;  // offsets 0..17 on both sides
constexpr size_t kMiB = size_t{1} << 20;

// One SM-copy launch through the shared checker, described by its configuration.
std::string check(CopyChecker& checker, size_t bytes, size_t srcOffset, size_t dstOffset, const SmCopyConfig& config,
                  int smCount = 0) {
  const std::string variant = std::string(copyHintName(config.hint)) + " unroll " + std::to_string(config.unroll) +
                              " x" + std::to_string(config.threadsPerBlock) + " smCount " + std::to_string(smCount);
  return checker.check(bytes, srcOffset, dstOffset, variant,
                       [&](void* dst, const void* src, size_t n, cudaStream_t stream) {
                         launchSmCopy(dst, src, n, smCount, stream, config);
                       });
}

// Every size class with offsets 0..17 on both sides; 64 MiB + 13 with one offset pair per access unit.
void checkAllSizesAndOffsets(const CopyPlacement& placement) {
  const std::vector<size_t> sizes = {1, 3, 15, 16, 17, 4095, 4097, kMiB + 7};
  constexpr size_t kLarge = 64 * kMiB + 13;
  CopyChecker checker(placement, kLarge, 0x5eed0001);
  const SmCopyConfig config;
  for (const size_t bytes : sizes) {
    for (size_t srcOffset = 0; srcOffset <= kMaxOffset; ++srcOffset) {
      for (size_t dstOffset = 0; dstOffset <= kMaxOffset; ++dstOffset) {
        const std::string failure = check(checker, bytes, srcOffset, dstOffset, config);
        ASSERT_TRUE(failure.empty()) << failure;
      }
    }
  }
  // (src, dst) offsets whose difference selects 16-, 8-, 4-, 2- and 1-byte units, aligned and not.
  const std::vector<std::pair<size_t, size_t>> pairs = {{0, 0}, {5, 5}, {16, 0}, {0, 8},
                                                        {4, 8}, {2, 4}, {17, 3}, {1, 0}};
  for (const auto& [srcOffset, dstOffset] : pairs) {
    const std::string failure = check(checker, kLarge, srcOffset, dstOffset, config);
    ASSERT_TRUE(failure.empty()) << failure;
  }
}

TEST(GpuKernels, SmCopyOnOneGpuAllSizesAndOffsets) {
  PEERLINK_REQUIRE_GPUS(1);
  checkAllSizesAndOffsets(kLocalCopy);
}

TEST(GpuKernels, SmCopyWritesToPeerAllSizesAndOffsets) {
  PEERLINK_REQUIRE_PEERS_0_1();
  checkAllSizesAndOffsets(kWriteCopy);
}

TEST(GpuKernels, SmCopyReadsFromPeerAllSizesAndOffsets) {
  PEERLINK_REQUIRE_PEERS_0_1();
  checkAllSizesAndOffsets(kReadCopy);
}

// Both cache hints, both unrolls, odd block shapes and a one-SM grid (many grid-stride passes).
TEST(GpuKernels, SmCopyVariantsAreCorrect) {
  PEERLINK_REQUIRE_GPUS(1);
  std::vector<CopyPlacement> placements = {kLocalCopy};
  if (peersUnavailable().empty()) placements.insert(placements.end(), {kWriteCopy, kReadCopy});
  const std::vector<size_t> sizes = {17, 4097, kMiB + 7, 16 * kMiB + 3};
  const std::vector<std::pair<size_t, size_t>> pairs = {{0, 0}, {3, 3}, {0, 8}, {4, 8}, {2, 4}, {1, 0}};
  for (const CopyPlacement& placement : placements) {
    CopyChecker checker(placement, 16 * kMiB + 3, 0x5eed0001);
    for (const CopyHint hint : {CopyHint::Plain, CopyHint::Streaming}) {
      for (const int unroll : {4, 8}) {
        for (const auto& [threads, smCount] : {std::pair{32, 0}, {512, 0}, {1024, 0}, {32, 1}, {1024, 1}}) {
          const SmCopyConfig config{hint, unroll, threads, smCount};
          for (const size_t bytes : sizes) {
            if (smCount == 1 && bytes > 2 * kMiB) continue;  // one block: many passes already at 1 MiB
            for (const auto& [srcOffset, dstOffset] : pairs) {
              const std::string failure = check(checker, bytes, srcOffset, dstOffset, config, smCount);
              ASSERT_TRUE(failure.empty()) << failure;
            }
          }
        }
      }
    }
  }
}

// Each call throws before launching anything, so host pointers do.
TEST(GpuKernels, LaunchesRejectBadArguments) {
  PEERLINK_REQUIRE_GPUS(1);
  uint64_t word = 0;
  EXPECT_NO_THROW(launchSmCopy(nullptr, nullptr, 0, 0, nullptr));
  EXPECT_THROW(launchSmCopy(nullptr, &word, 8, 0, nullptr), Error);
  const SmCopyConfig badUnroll{CopyHint::Plain, 5, 512, 0}, badThreads{CopyHint::Plain, 4, 48, 0};
  EXPECT_THROW(launchSmCopy(&word, &word, 8, 0, nullptr, badUnroll), Error);
  EXPECT_THROW(launchSmCopy(&word, &word, 8, 0, nullptr, badThreads), Error);
  EXPECT_THROW(launchPutSignal(&word, &word, 8, nullptr, 1, false, nullptr), Error);
  EXPECT_THROW(launchWaitSignal(&word, 1, 1, nullptr, nullptr), Error);
}

// What the kernels report, in mapped pinned memory, reset to pending: the host reads it while they run, and
// with unified addressing its host pointer is its device pointer.
struct Reports {
  DeviceStatus status[2];
  uint64_t elapsedNs;
};
struct MappedReports {
  PinnedBuffer memory{sizeof(Reports), cudaHostAllocMapped | cudaHostAllocPortable};
  Reports* r = new (memory.data()) Reports{{pendingStatus(), pendingStatus()}, 0};
};

// The receiver's wait kernel is launched first, then the put: each transfer is checked for its flag, its
// data and the poisoned guard bytes around it. Flags only grow, so one flag serves every transfer.
void checkPutSignal(int from, int to) {
  const std::vector<std::pair<size_t, size_t>> transfers = {{8, 0}, {4096, 0}, {65536, 0}, {4096 + 3, 5}, {1, 7}};
  const std::vector<unsigned char> payload = randomBytes(65536 + 16, 0x5eed0002);
  const DeviceBuffer source = uploaded(from, payload);
  DeviceBuffer flag = filled(to, sizeof(uint64_t), 0);
  auto* flagPointer = static_cast<uint64_t*>(flag.data());
  Stream sender(from), receiver(to);
  MappedReports reports;
  uint64_t value = 0;
  for (const auto& [bytes, offset] : transfers) {
    ++value;
    const DeviceBuffer destination = filled(to, 65536 + 16 + 2 * kGuard, kPoison);
    reports.r->status[0] = pendingStatus();
    on(to, [&] { launchWaitSignal(flagPointer, value, 2'000'000'000, &reports.r->status[0], receiver.get()); });
    auto* dst = static_cast<unsigned char*>(destination.data()) + kGuard + offset;
    const auto* src = static_cast<const unsigned char*>(source.data()) + offset;
    on(from, [&] { launchPutSignal(dst, src, bytes, flagPointer, value, false, sender.get()); });
    ASSERT_TRUE(finishes(sender.get(), 5)) << "put-signal of " << bytes << " B did not finish";
    ASSERT_TRUE(finishes(receiver.get(), 5)) << "the wait for " << bytes << " B did not finish";
    const DeviceStatus status = reports.r->status[0];
    EXPECT_EQ(status.status, PEERLINK_STATUS_OK) << bytes << " B";
    EXPECT_EQ(status.observed, value) << bytes << " B";
    EXPECT_NO_THROW(throwIfDeviceFailed(status, "put-signal"));
    const std::vector<unsigned char> got = downloaded(destination);
    for (size_t i = 0; i < got.size(); ++i) {
      const bool inside = i >= kGuard + offset && i < kGuard + offset + bytes;
      ASSERT_EQ(got[i], inside ? payload[i - kGuard] : kPoison)
          << bytes << " B at offset " << offset << ": byte " << i << (inside ? "" : " (guard)");
    }
  }
}

// The wait spins before the put's first launch on the same GPU: passes by kernel_preload.cuh.
TEST(GpuKernels, PutSignalOnOneGpu) {
  PEERLINK_REQUIRE_GPUS(1);
  checkPutSignal(0, 0);
}

TEST(GpuKernels, PutSignalDeliversDataAndFlagAcrossGpus) {
  PEERLINK_REQUIRE_PEERS_0_1();
  checkPutSignal(0, 1);
  checkPutSignal(1, 0);
}

TEST(GpuKernels, DroppedFlagTimesOutWithinTheDeadline) {
  PEERLINK_REQUIRE_PEERS_0_1();
  const std::vector<unsigned char> payload = randomBytes(4096, 0x5eed0003);
  const DeviceBuffer source = uploaded(0, payload);
  const DeviceBuffer destination = filled(1, payload.size(), kPoison);
  DeviceBuffer flag = filled(1, sizeof(uint64_t), 0);
  Stream sender(0), receiver(1);
  MappedReports reports;
  auto* flagPointer = static_cast<uint64_t*>(flag.data());
  const Clock::time_point start = Clock::now();
  on(1, [&] { launchWaitSignal(flagPointer, 1, 50'000'000, &reports.r->status[0], receiver.get()); });
  on(0, [&] { launchPutSignal(destination.data(), source.data(), 4096, flagPointer, 1, true, sender.get()); });
  ASSERT_TRUE(finishes(receiver.get(), 2)) << "the wait kernel missed its 50 ms deadline by more than 1.95 s";
  const double seconds = secondsSince(start);
  ASSERT_TRUE(finishes(sender.get(), 2));
  std::printf("dropped flag: the host saw the wait end after %.1f ms (deadline 50 ms)\n", seconds * 1e3);
  EXPECT_GE(seconds, 0.040);
  const DeviceStatus status = reports.r->status[0];
  EXPECT_EQ(status.status, PEERLINK_STATUS_TIMEOUT);
  EXPECT_EQ(status.observed, 0u);
  try {  // the host's side: an Error naming the pair
    throwIfDeviceFailed(status, "put-signal 0 -> 1");
  } catch (const Error& error) {
    std::printf("%s\n", error.what());
    EXPECT_EQ(error.code(), ErrorCode::Timeout);
  }
  EXPECT_EQ(downloaded(destination), payload) << "the data goes even when the flag is dropped";
}

// One GPU's half of a ping-pong: its flag, the inbox the peer writes, the outbox it sends.
struct PingPongBuffers {
  std::vector<unsigned char> sent;
  DeviceBuffer flag;
  DeviceBuffer inbox;
  DeviceBuffer outbox;
  PingPongBuffers(int device, size_t bytes, uint64_t seed)
      : sent(randomBytes(bytes, seed)),
        flag(filled(device, sizeof(uint64_t), 0)),
        inbox(device, bytes),
        outbox(uploaded(device, sent)) {}
};

PingPongSide sideOf(PingPongBuffers& self, PingPongBuffers& peer, size_t bytes, bool initiator, Reports* reports) {
  PingPongSide side;
  side.localFlag = static_cast<uint64_t*>(self.flag.data());
  side.peerFlag = static_cast<uint64_t*>(peer.flag.data());
  side.peerPayload = peer.inbox.data();
  side.localPayload = self.outbox.data();
  side.payloadBytes = bytes;
  side.initiator = initiator;
  side.status = &reports->status[initiator ? 0 : 1];
  side.elapsedNs = &reports->elapsedNs;
  return side;
}

TEST(GpuKernels, PingPongMeasuresPlausibleLatency) {
  PEERLINK_REQUIRE_PEERS_0_1();
  Stream stream0(0), stream1(1);
  for (const size_t bytes : {size_t{0}, size_t{8}, size_t{4096}, size_t{65536}}) {
    PingPongBuffers a(0, std::max<size_t>(bytes, 1), 0x5eed0010), b(1, std::max<size_t>(bytes, 1), 0x5eed0011);
    MappedReports reports;
    Reports* r = reports.r;
    PingPongSide initiator = sideOf(a, b, bytes, true, r);
    PingPongSide responder = sideOf(b, a, bytes, false, r);
    initiator.iterations = responder.iterations = bytes == 0 ? 4000 : 1000;
    on(1, [&] { launchPingPong(responder, stream1.get()); });
    on(0, [&] { launchPingPong(initiator, stream0.get()); });
    ASSERT_TRUE(finishes(stream0.get(), 10)) << "the initiator did not finish";
    ASSERT_TRUE(finishes(stream1.get(), 10)) << "the responder did not finish";
    ASSERT_EQ(r->status[0].status, PEERLINK_STATUS_OK) << "initiator stalled in round " << r->status[0].step;
    ASSERT_EQ(r->status[1].status, PEERLINK_STATUS_OK) << "responder stalled in round " << r->status[1].step;
    const double oneWayUs = static_cast<double>(r->elapsedNs) / (2.0 * initiator.iterations) / 1e3;
    std::printf("ping-pong GPU 0 <-> 1, %zu B payload%s: one-way %.3f us (%d round trips)\n", bytes,
                bytes == 0 ? " (flag only)" : " + flag", oneWayUs, initiator.iterations);
    RecordProperty("one_way_us_" + std::to_string(bytes) + "B", std::to_string(oneWayUs));
    EXPECT_GT(oneWayUs, 0.3);
    EXPECT_LT(oneWayUs, 50.0);
    if (bytes > 0) {  // the last payload each side received is the other's outbox
      EXPECT_EQ(downloaded(b.inbox), a.sent);
      EXPECT_EQ(downloaded(a.inbox), b.sent);
    }
  }
}

TEST(GpuKernels, PingPongWithoutPartnerTimesOut) {
  PEERLINK_REQUIRE_PEERS_0_1();
  PingPongBuffers a(0, 4096, 1), b(1, 4096, 2);
  Stream stream0(0);
  for (const bool initiator : {true, false}) {
    MappedReports reports;
    PingPongSide side = sideOf(a, b, 4096, initiator, reports.r);
    side.timeoutNs = 50'000'000;
    on(0, [&] { launchPingPong(side, stream0.get()); });
    ASSERT_TRUE(finishes(stream0.get(), 2)) << "a lone ping-pong side missed its 50 ms deadline by more than 1.95 s";
    const DeviceStatus status = reports.r->status[initiator ? 0 : 1];
    EXPECT_EQ(status.status, PEERLINK_STATUS_TIMEOUT) << (initiator ? "initiator" : "responder");
    EXPECT_EQ(status.step, 0);
    EXPECT_EQ(status.observed, 0u);
  }
}

}  // namespace
}  // namespace peerlink::kernels
