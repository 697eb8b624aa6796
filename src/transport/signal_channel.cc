#include "peerlink/signal_channel.hpp"

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "kernels/ll_protocol.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/transport.hpp"

namespace peerlink {

struct SignalChannel::Impl {
  int src = -1;
  int dst = -1;
  std::size_t maxBytes = 0;
  std::uint64_t timeoutNs = 0;
  bool dropFlag = false;
  DeviceBuffer lines;
  // Mapped pinned memory: the receive kernel writes its status where the host reads it without a copy.
  PinnedBuffer status{sizeof(kernels::DeviceStatus), cudaHostAllocMapped | cudaHostAllocPortable};
  std::uint32_t sendSeq = 0;
  std::uint32_t receiveSeq = 0;

  kernels::DeviceStatus* statusSlot() const { return static_cast<kernels::DeviceStatus*>(status.data()); }

  void checkSize(std::size_t bytes, const char* what) const {
    if (bytes > maxBytes) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{} of {} bytes GPU {} -> GPU {}: the channel carries at most {}", what, bytes, src, dst,
                              maxBytes));
    }
  }
};

SignalChannel::SignalChannel(Transport& transport, int src, int dst, std::size_t maxBytes)
    : impl_(std::make_unique<Impl>()) {
  const int count = static_cast<int>(transport.topology().gpus.size());
  if (src < 0 || src >= count || dst < 0 || dst >= count || src == dst) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("a signal channel joins two different GPUs of 0..{}, not {} and {}", count - 1, src, dst));
  }
  if (maxBytes > kernels::kLlMaxMessageBytes) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("signal channel messages are at most {} bytes, not {}",
                                                     kernels::kLlMaxMessageBytes, maxBytes));
  }
  impl_->src = src;
  impl_->dst = dst;
  impl_->maxBytes = maxBytes;
  impl_->timeoutNs = static_cast<std::uint64_t>(transport.params().getInt("PEERLINK_TIMEOUT_MS")) * 1000000ull;
  impl_->dropFlag = transport.params().getBool("PEERLINK_FAULT_DROP_FLAG");
  transport.enablePeerAccess(src, dst);
  impl_->lines = DeviceBuffer(dst, kernels::llLineBytes(maxBytes));
  DeviceGuard guard(dst);
  PEERLINK_CUDA_CHECK(cudaMemset(impl_->lines.data(), 0, impl_->lines.size()));
  PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());  // later kernels run on non-blocking streams
  *impl_->statusSlot() = {PEERLINK_STATUS_OK, 0, 0};
}

SignalChannel::~SignalChannel() = default;

int SignalChannel::src() const noexcept {
  return impl_->src;
}
int SignalChannel::dst() const noexcept {
  return impl_->dst;
}

void SignalChannel::send(const void* data, std::size_t bytes, cudaStream_t srcStream) {
  impl_->checkSize(bytes, "send");
  impl_->sendSeq = kernels::llNextSeq(impl_->sendSeq);
  DeviceGuard guard(impl_->src);
  kernels::launchLlPut(impl_->lines.data(), data, bytes, impl_->sendSeq, impl_->dropFlag, srcStream);
}

void SignalChannel::receive(void* data, std::size_t bytes, cudaStream_t dstStream) {
  impl_->checkSize(bytes, "receive");
  impl_->receiveSeq = kernels::llNextSeq(impl_->receiveSeq);
  DeviceGuard guard(impl_->dst);
  kernels::launchLlReceive(data, impl_->lines.data(), bytes, impl_->receiveSeq, impl_->timeoutNs, impl_->statusSlot(),
                           dstStream);
}

void SignalChannel::check() {
  const kernels::DeviceStatus status = *impl_->statusSlot();
  if (status.status == PEERLINK_STATUS_OK || status.status == kernels::kStatusPending) return;
  *impl_->statusSlot() = {PEERLINK_STATUS_OK, 0, 0};
  kernels::throwIfDeviceFailed(
      status, fmt::format("put-with-signal GPU {} -> GPU {} (receive on GPU {}, message {}, {} ms deadline)",
                          impl_->src, impl_->dst, impl_->dst, impl_->receiveSeq, impl_->timeoutNs / 1000000));
}

}  // namespace peerlink
