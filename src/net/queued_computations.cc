// AskedTickets and AskedMemory (queued_computations.hpp).
#include "net/queued_computations.hpp"

#include <string>

#include "peerlink/error.hpp"

namespace peerlink::net {

AskedKernel askedKernel(DataType type, ReduceOp op, std::size_t mostElements) {
  return {type, op, kernels::planReduceBlocksOverHostMemory(mostElements)};
}

AskedTickets::AskedTickets(AskedComputations& words)
    : words_(words), published_(words.asked.value.load(std::memory_order_acquire)) {}

void AskedTickets::ask(std::uint64_t ticket, const kernels::PlanReduceArgs& args) {
  if (!computed(ticket - kAskedRing) || cyclicAtLeast(published_, ticket)) {
    throw Error(ErrorCode::Internal, "net: computation " + std::to_string(ticket) + " asked again, or before " +
                                         std::to_string(ticket - kAskedRing) + ", whose ring slot it takes, ran");
  }
  words_.ring[ticket % kAskedRing] = args;
  written_[ticket % kAskedRing] = ticket;
  const std::uint64_t before = published_;
  while (written_[(published_ + 1) % kAskedRing] == published_ + 1) ++published_;
  if (published_ != before) words_.asked.value.store(published_, std::memory_order_release);
}

void AskedTickets::skipTo(std::uint64_t last) {
  if (cyclicAtLeast(published_, last)) return;
  for (kernels::PlanReduceArgs& args : words_.ring) args.count = 0;
  published_ = last;
  words_.asked.value.store(last, std::memory_order_release);
}

AskedMemory::AskedMemory(AskedTickets& asked, const AskedKernel& kernel, std::uint64_t first, std::size_t count,
                         std::byte* landing, std::size_t landingBytes, const std::atomic<bool>* abandoned)
    : asked_(asked),
      kernel_(kernel),
      first_(first),
      next_(first),
      end_(first + count),
      landing_(landing),
      landingBytes_(landingBytes),
      abandoned_(abandoned) {}

void AskedMemory::copy(void* dst, const void* src, std::size_t bytes) {
  const std::size_t size = dataTypeSize(kernel_.type);
  if (bytes % size != 0) {
    throw Error(ErrorCode::Internal, "net: a queued copy of " + std::to_string(bytes) + " bytes, not whole " +
                                         dataTypeName(kernel_.type) + " elements");
  }
  ask(kernels::planReduceArgs(dst, &src, 1, dst == src ? 0 : bytes / size, 1, false));
}

void AskedMemory::reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
                         int divisor, bool finish) {
  if (type != kernel_.type || op != kernel_.op || srcs.empty() ||
      srcs.size() > static_cast<std::size_t>(kernels::kCollMaxRanks)) {
    throw Error(ErrorCode::Internal, "net: a queued " + std::string(reduceOpName(op)) + " of " +
                                         std::to_string(srcs.size()) + " sources of " + dataTypeName(type) +
                                         " where the call's kernel makes " + reduceOpName(kernel_.op) + " of 1 to " +
                                         std::to_string(kernels::kCollMaxRanks) + " of " + dataTypeName(kernel_.type));
  }
  ask(kernels::planReduceArgs(dst, srcs.data(), static_cast<int>(srcs.size()), count, divisor, finish));
}

void AskedMemory::ask(const kernels::PlanReduceArgs& args) {
  if (next_ == end_) {
    throw Error(ErrorCode::Internal, "net: a queued piece asked more than the " + std::to_string(end_ - first_) +
                                         " computations queued for it");
  }
  asked_.ask(next_, args);
  ++next_;
}

bool AskedMemory::reached(std::uint64_t marker) {
  if (abandoned_ != nullptr && abandoned_->load(std::memory_order_acquire)) {
    throw Error(ErrorCode::CudaError,
                "net: the caller could not queue the call's computations on the GPU (its error went to the caller)");
  }
  return marker < first_ || asked_.computed(marker);
}

void* AskedMemory::temporary(std::size_t /*lane*/, std::size_t bytes) {
  const std::size_t take = (bytes + kTemporaryAlign - 1) / kTemporaryAlign * kTemporaryAlign;
  if (used_ + take > landingBytes_) {
    throw Error(ErrorCode::Internal, "net: a queued piece's temporaries outgrew its landing room of " +
                                         std::to_string(landingBytes_) + " bytes");
  }
  std::byte* memory = landing_ + used_;
  used_ += take;
  return memory;
}

void AskedMemory::release(std::size_t /*lane*/) {
  used_ = 0;
}

void* AskedMemory::persistent(std::size_t /*bytes*/) {
  throw Error(ErrorCode::Internal, "net: a queued piece has no persistent memory");
}

}  // namespace peerlink::net
