// The LL (low-latency) put-with-signal protocol on real GPUs: data and flags in 16-byte lines, received
// into poisoned destinations (guards checked), on one GPU and across two; many messages on one line buffer
// through a sequence-number wrap; the dropped-flag timeout; the LL ping-pong's latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "gpu_test_buffers.hpp"
#include "kernels/kernel_preload.cuh"
#include "kernels/ll_protocol.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

using namespace ::peerlink::testing;  // shared gpu test helpers

static_assert(llLines(0) == 1 && llLines(1) == 1 && llLines(8) == 1 && llLines(9) == 2, "8 payload bytes per line");
static_assert(llLineBytes(65536) == 32 + 131072, "a header, then twice the payload");
static_assert(llNextSeq(1) == 2 && llNextSeq(UINT32_MAX) == 1, "sequence numbers skip 0");

constexpr unsigned char kPoison = 0xA5;
constexpr size_t kGuard = 64;
constexpr size_t kMaxBytes = 65536;
constexpr size_t kMaxOffset = 16;
constexpr uint64_t kTimeoutNs = 2'000'000'000;
const std::vector<size_t> kSizes = {1, 4, 8, 13, 4096, 4099, 65536};

// What the kernels report, in mapped pinned memory: the host reads it while they run.
struct Reports {
  DeviceStatus status[2];
  uint64_t elapsedNs;
};
struct MappedReports {
  PinnedBuffer memory{sizeof(Reports), cudaHostAllocMapped | cudaHostAllocPortable};
  Reports* r = new (memory.data()) Reports{{pendingStatus(), pendingStatus()}, 0};
};

// A sender GPU, a receiver GPU with its zeroed line buffer, a random source and a poisoned destination.
class LlLink {
 public:
  LlLink(int from, int to)
      : from_(from),
        to_(to),
        payload_(randomBytes(kMaxBytes + kMaxOffset, 0x5eed1000u + static_cast<unsigned>(10 * from + to))),
        source_(uploaded(from, payload_)),
        lines_(filled(to, llLineBytes(kMaxBytes), 0)),
        destination_(to, kMaxBytes + kMaxOffset + 2 * kGuard),
        sender_(from),
        receiver_(to) {}

  // One message: the receive is launched first (it spins), then the put; returns "" or what went wrong.
  std::string transfer(size_t bytes, size_t srcOffset, size_t dstOffset, uint32_t seq) {
    on(to_, [&] {
      PEERLINK_CUDA_CHECK(cudaMemset(destination_.data(), kPoison, destination_.size()));
      PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
    });
    reports_.r->status[0] = pendingStatus();
    auto* dst = static_cast<unsigned char*>(destination_.data()) + kGuard + dstOffset;
    const auto* src = static_cast<const unsigned char*>(source_.data()) + srcOffset;
    on(to_,
       [&] { launchLlReceive(dst, lines_.data(), bytes, seq, kTimeoutNs, &reports_.r->status[0], receiver_.get()); });
    on(from_, [&] { launchLlPut(lines_.data(), src, bytes, seq, false, sender_.get()); });
    const std::string what = std::to_string(from_) + " -> " + std::to_string(to_) + ", " + std::to_string(bytes) +
                             " B, src+" + std::to_string(srcOffset) + " dst+" + std::to_string(dstOffset) + ", seq " +
                             std::to_string(seq);
    if (!finishes(sender_.get(), 5)) return what + ": the put did not finish";
    if (!finishes(receiver_.get(), 5)) return what + ": the receive did not finish";
    const DeviceStatus status = reports_.r->status[0];
    if (status.status != PEERLINK_STATUS_OK || status.observed != seq) {
      return what + ": status " + std::to_string(status.status) + " at line " + std::to_string(status.step) +
             ", flag " + std::to_string(status.observed);
    }
    const std::vector<unsigned char> got = downloaded(destination_);
    const size_t begin = kGuard + dstOffset;
    for (size_t i = 0; i < got.size(); ++i) {
      const bool inside = i >= begin && i < begin + bytes;
      const unsigned char expected = inside ? payload_[srcOffset + i - begin] : kPoison;
      if (got[i] != expected) return what + ": byte " + std::to_string(i) + (inside ? " (data)" : " (guard)");
    }
    return "";
  }

  DeviceBuffer& lines() { return lines_; }
  const DeviceBuffer& source() const { return source_; }
  DeviceBuffer& destination() { return destination_; }
  cudaStream_t sender() const { return sender_.get(); }
  cudaStream_t receiver() const { return receiver_.get(); }
  DeviceStatus* status() { return &reports_.r->status[0]; }

 private:
  int from_, to_;
  std::vector<unsigned char> payload_;
  DeviceBuffer source_;
  DeviceBuffer lines_;
  DeviceBuffer destination_;
  Stream sender_, receiver_;
  MappedReports reports_;
};

// Every size with aligned and unaligned sources and destinations; seq grows by one per message.
void checkAllSizes(int from, int to) {
  LlLink link(from, to);
  uint32_t seq = 1;
  for (const size_t bytes : kSizes) {
    for (const auto& [srcOffset, dstOffset] : {std::pair<size_t, size_t>{0, 0}, {3, 5}, {8, 1}, {1, 8}}) {
      const std::string failure = link.transfer(bytes, srcOffset, dstOffset, seq);
      ASSERT_TRUE(failure.empty()) << failure;
      seq = llNextSeq(seq);
    }
  }
}

// First in this file: in a fresh process the receive is the first LL launch on GPU 0 and spins while the
// put, on another stream of the same GPU, launches; with lazy module loading (the default) this waits for
// the receive unless every kernel was loaded before it started (kernel_preload.cuh).
TEST(GpuLl, PutReceiveOnOneGpu) {
  PEERLINK_REQUIRE_GPUS(1);
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  std::printf("CUDA_MODULE_LOADING=%s\n", loading != nullptr ? loading : "(unset: lazy)");
  checkAllSizes(0, 0);
}

TEST(GpuLl, PutReceiveAcrossGpus) {
  PEERLINK_REQUIRE_PEERS_0_1();
  checkAllSizes(0, 1);
  checkAllSizes(1, 0);
}

// Messages of changing sizes on one line buffer (lines of larger, older messages stay behind), with seq
// running through 2^32 - 1 and wrapping to 1.
TEST(GpuLl, ConsecutiveMessagesReuseTheLineBufferThroughASeqWrap) {
  PEERLINK_REQUIRE_GPUS(1);
  const bool peers = peersUnavailable().empty();
  LlLink link(0, peers ? 1 : 0);
  const std::vector<size_t> sizes = {65536, 13, 4099, 1, 8, 4096, 4, 65536, 0};
  uint32_t seq = UINT32_MAX - 40;
  bool wrapped = false;
  for (int message = 0; message < 120; ++message) {
    const size_t bytes = sizes[static_cast<size_t>(message) % sizes.size()];
    const size_t offset = static_cast<size_t>(message) % kMaxOffset;  // other data each time
    const std::string failure = link.transfer(bytes, offset, (offset * 7) % kMaxOffset, seq);
    ASSERT_TRUE(failure.empty()) << "message " << message << ": " << failure;
    wrapped = wrapped || seq == UINT32_MAX;
    seq = llNextSeq(seq);
  }
  EXPECT_TRUE(wrapped);
  EXPECT_GT(seq, 60u);
}

TEST(GpuLl, DroppedFlagTimesOutWithinTheDeadline) {
  PEERLINK_REQUIRE_GPUS(1);
  const bool peers = peersUnavailable().empty();
  LlLink link(0, peers ? 1 : 0);
  const uint64_t timeoutNs = 50'000'000;
  for (const uint32_t seq : {1u, 7u}) {  // seq 1: the dropped flag is the wrapped UINT32_MAX
    *link.status() = pendingStatus();
    const Clock::time_point start = Clock::now();
    on(peers ? 1 : 0, [&] {
      launchLlReceive(link.destination().data(), link.lines().data(), 4096, seq, timeoutNs, link.status(),
                      link.receiver());
    });
    on(0, [&] { launchLlPut(link.lines().data(), link.source().data(), 4096, seq, true, link.sender()); });
    ASSERT_TRUE(finishes(link.receiver(), 2)) << "the receive missed its 50 ms deadline by more than 1.95 s";
    const double seconds = secondsSince(start);
    ASSERT_TRUE(finishes(link.sender(), 2));
    const DeviceStatus status = *link.status();
    std::printf("dropped flag, seq %u: the host saw the receive end after %.1f ms (deadline 50 ms); %s\n", seq,
                seconds * 1e3, status.status == PEERLINK_STATUS_OK ? "OK" : "TIMEOUT");
    EXPECT_GE(seconds, 0.045);
    EXPECT_LT(seconds, 0.25) << "timeout + slack (timer read every 256 polls, host polling)";
    EXPECT_EQ(status.status, PEERLINK_STATUS_TIMEOUT);
    EXPECT_LT(status.step, 512) << "the stalled line";
    EXPECT_EQ(status.observed, seq == 1 ? UINT32_MAX : seq - 1) << "the flag the dropped put stored";
    try {
      throwIfDeviceFailed(status, "LL put 0 -> 1");
      ADD_FAILURE() << "no Error for a timeout";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Timeout) << error.what();
    }
    // The buffer recovers: the same message, sent properly, arrives.
    const std::string failure = link.transfer(4096, 0, 0, seq);
    EXPECT_TRUE(failure.empty()) << "after the timeout: " << failure;
  }
}

// One GPU's half of an LL ping-pong: its zeroed line buffer, what it sends, where it unpacks.
struct LlSideBuffers {
  std::vector<unsigned char> sent;
  DeviceBuffer lines, send, receive;
  LlSideBuffers(int device, size_t bytes, uint64_t seed)
      : sent(randomBytes(std::max<size_t>(bytes, 1), seed)),
        lines(filled(device, llLineBytes(bytes), 0)),
        send(uploaded(device, sent)),
        receive(filled(device, std::max<size_t>(bytes, 1), 0)) {}
};

LlPingPongSide sideOf(LlSideBuffers& self, LlSideBuffers& peer, size_t bytes, bool initiator, Reports* reports) {
  LlPingPongSide side;
  side.localLines = self.lines.data();
  side.peerLines = peer.lines.data();
  side.send = self.send.data();
  side.receive = self.receive.data();
  side.payloadBytes = bytes;
  side.initiator = initiator;
  side.status = &reports->status[initiator ? 0 : 1];
  side.elapsedNs = &reports->elapsedNs;
  return side;
}

TEST(GpuLl, PingPongMeasuresPlausibleLatency) {
  PEERLINK_REQUIRE_PEERS_0_1();
  Stream stream0(0), stream1(1);
  for (const size_t bytes : {size_t{0}, size_t{8}, size_t{64}, size_t{4096}, size_t{65536}}) {
    LlSideBuffers a(0, bytes, 0x5eed2000), b(1, bytes, 0x5eed2001);
    MappedReports reports;
    Reports* r = reports.r;
    LlPingPongSide initiator = sideOf(a, b, bytes, true, r);
    LlPingPongSide responder = sideOf(b, a, bytes, false, r);
    initiator.iterations = responder.iterations = bytes <= 64 ? 4000 : 1000;
    on(1, [&] { launchLlPingPong(responder, stream1.get()); });
    on(0, [&] { launchLlPingPong(initiator, stream0.get()); });
    ASSERT_TRUE(finishes(stream0.get(), 10)) << "the initiator did not finish";
    ASSERT_TRUE(finishes(stream1.get(), 10)) << "the responder did not finish";
    ASSERT_EQ(r->status[0].status, PEERLINK_STATUS_OK) << "initiator stalled in round " << r->status[0].step;
    ASSERT_EQ(r->status[1].status, PEERLINK_STATUS_OK) << "responder stalled in round " << r->status[1].step;
    const double oneWayUs = static_cast<double>(r->elapsedNs) / (2.0 * initiator.iterations) / 1e3;
    std::printf("LL ping-pong GPU 0 <-> 1, %6zu B%s: one-way %.3f us (%d round trips, %zu lines)\n", bytes,
                bytes == 0 ? " (flag only)" : "", oneWayUs, initiator.iterations, llLines(bytes));
    RecordProperty("ll_one_way_us_" + std::to_string(bytes) + "B", std::to_string(oneWayUs));
    EXPECT_GT(oneWayUs, 0.2);
    EXPECT_LT(oneWayUs, 50.0);
    if (bytes > 0) {  // the last message each side unpacked is the other's payload
      EXPECT_EQ(downloaded(b.receive), a.sent);
      EXPECT_EQ(downloaded(a.receive), b.sent);
    }
  }
}

TEST(GpuLl, PingPongWithoutPartnerTimesOut) {
  PEERLINK_REQUIRE_PEERS_0_1();
  Stream stream0(0);
  for (const bool initiator : {true, false}) {
    LlSideBuffers a(0, 4096, 1), b(1, 4096, 2);
    MappedReports reports;
    LlPingPongSide side = sideOf(a, b, 4096, initiator, reports.r);
    side.timeoutNs = 20'000'000;
    on(0, [&] { launchLlPingPong(side, stream0.get()); });
    ASSERT_TRUE(finishes(stream0.get(), 2)) << "a lone side missed its 20 ms deadline by more than 1.98 s";
    const DeviceStatus status = reports.r->status[initiator ? 0 : 1];
    EXPECT_EQ(status.status, PEERLINK_STATUS_TIMEOUT) << (initiator ? "initiator" : "responder");
    EXPECT_EQ(status.step, 0);
    EXPECT_EQ(status.observed, 0u);
  }
}

// Each call throws before launching anything, so host pointers do.
TEST(GpuLl, LaunchesRejectBadArguments) {
  PEERLINK_REQUIRE_GPUS(1);
  alignas(16) unsigned char lines[64] = {};
  DeviceStatus status = pendingStatus();
  EXPECT_THROW(launchLlPut(nullptr, lines, 8, 1, false, nullptr), Error);
  EXPECT_THROW(launchLlPut(lines + 8, lines, 8, 1, false, nullptr), Error);
  EXPECT_THROW(launchLlPut(lines, lines, 8, 0, false, nullptr), Error);
  EXPECT_THROW(launchLlPut(lines, nullptr, 8, 1, false, nullptr), Error);
  EXPECT_THROW(launchLlPut(lines, lines, kLlMaxMessageBytes + 1, 1, false, nullptr), Error);
  EXPECT_THROW(launchLlReceive(lines, lines, 8, 1, 1, nullptr, nullptr), Error);
  EXPECT_THROW(launchLlReceive(lines, lines + 4, 8, 1, 1, &status, nullptr), Error);
  EXPECT_THROW(launchLlReceive(lines, lines, 8, 0, 1, &status, nullptr), Error);
  LlPingPongSide side;
  side.localLines = side.peerLines = lines;
  side.send = side.receive = lines;
  side.status = &status;
  side.payloadBytes = kLlMaxPingPongBytes + 1;
  EXPECT_THROW(launchLlPingPong(side, nullptr), Error);
  side.payloadBytes = 8;
  side.initiator = true;  // without elapsedNs
  EXPECT_THROW(launchLlPingPong(side, nullptr), Error);
}

// Loading is per device; a second call is a no-op.
TEST(GpuLl, KernelsLoadOnEveryDevice) {
  PEERLINK_REQUIRE_GPUS(1);
  int count = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int device = 0; device < count; ++device) {
    on(device, [] {
      EXPECT_NO_THROW(ensureKernelsLoaded());
      const Clock::time_point start = Clock::now();
      EXPECT_NO_THROW(ensureKernelsLoaded());
      EXPECT_LT(secondsSince(start), 0.001) << "the second call must not load again";
    });
  }
}

}  // namespace
}  // namespace peerlink::kernels
