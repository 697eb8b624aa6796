// Host executor (host_executor.hpp).
#include "coll/host_executor.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

std::size_t elementsOf(const RankLayout& layout, BufferKind buffer) {
  switch (buffer) {
    case BufferKind::Input: return layout.inputElements;
    case BufferKind::Output: return layout.outputElements;
    case BufferKind::Scratch: return layout.scratchElements;
    case BufferKind::HostStage: return layout.hostStageElements;
  }
  return 0;
}

Bytes& bytesOf(HostRankBuffers& buffers, BufferKind buffer) {
  switch (buffer) {
    case BufferKind::Input: return buffers.input;
    case BufferKind::Output: return buffers.output;
    case BufferKind::Scratch: return buffers.scratch;
    case BufferKind::HostStage: return buffers.hostStage;
  }
  return buffers.input;
}

// One element range a transfer of the step touches.
struct Access {
  int rank;
  BufferKind buffer;
  std::size_t begin;
  std::size_t end;
  std::size_t transfer;  // index in the step
  bool write;

  auto key() const { return std::make_tuple(rank, static_cast<int>(buffer), begin); }
};

class StepChecker {
 public:
  StepChecker(const Plan& plan, std::size_t stepIndex) : plan_(plan), stepIndex_(stepIndex) {}

  void check() {
    const Step& step = plan_.steps[stepIndex_];
    for (std::size_t t = 0; t < step.transfers.size(); ++t) checkTransfer(t, step.transfers[t]);
    std::sort(writes_.begin(), writes_.end(), [](const Access& a, const Access& b) { return a.key() < b.key(); });
    // Sorted by begin, an overlap among writes always shows between neighbours.
    for (std::size_t i = 1; i < writes_.size(); ++i) {
      if (sameBuffer(writes_[i - 1], writes_[i]) && writes_[i].begin < writes_[i - 1].end) {
        fail(writes_[i - 1], writes_[i], "writes");
      }
    }
    for (const Access& read : reads_) checkRead(read);
  }

 private:
  static bool sameBuffer(const Access& a, const Access& b) { return a.rank == b.rank && a.buffer == b.buffer; }

  void checkTransfer(std::size_t index, const Transfer& transfer) {
    const auto bad = [&](const std::string& why) {
      throw Error(ErrorCode::Internal,
                  prefix() + "transfer " + std::to_string(index) + " (" + describeTransfer(transfer) + ") " + why);
    };
    if (transfer.executor < 0 || transfer.executor >= plan_.nranks) bad("has no executing rank");
    if (transfer.srcs.empty()) bad("has no source");
    if (transfer.kind == TransferKind::Copy && transfer.srcs.size() != 1) bad("copies from several sources");
    if (!plan_.steps[stepIndex_].acrossNodes && crossesNodes(plan_, transfer)) {
      bad("moves data between nodes in a step not marked across nodes");
    }
    if (transfer.count == 0) return;
    const auto inBounds = [&](const BufferRef& ref) {
      if (ref.rank < 0 || ref.rank >= plan_.nranks) bad("names rank " + std::to_string(ref.rank));
      const std::size_t size = elementsOf(plan_.ranks[static_cast<std::size_t>(ref.rank)], ref.buffer);
      if (ref.offset > size || transfer.count > size - ref.offset) {
        bad("reaches past rank " + std::to_string(ref.rank) + "'s " + bufferKindName(ref.buffer) + " of " +
            std::to_string(size) + " elements");
      }
    };
    inBounds(transfer.dst);
    if (transfer.dst.buffer == BufferKind::Input) {
      // The user's send buffer may be written only where the API puts the recv in it (in-place reduce-scatter).
      const RankLayout& layout = plan_.ranks[static_cast<std::size_t>(transfer.dst.rank)];
      const bool inRecv = layout.recv.buffer == BufferKind::Input && transfer.dst.offset >= layout.recv.offset &&
                          transfer.dst.offset + transfer.count <= layout.recv.offset + layout.recvElements;
      if (!inRecv) bad("writes the user's send buffer");
    }
    writes_.push_back(accessOf(transfer.dst, transfer.count, index, true));
    for (const BufferRef& src : transfer.srcs) {
      inBounds(src);
      reads_.push_back(accessOf(src, transfer.count, index, false));
    }
  }

  static Access accessOf(const BufferRef& ref, std::size_t count, std::size_t transfer, bool write) {
    return {ref.rank, ref.buffer, ref.offset, ref.offset + count, transfer, write};
  }

  void checkRead(const Access& read) {
    auto it = std::lower_bound(writes_.begin(), writes_.end(), read,
                               [](const Access& a, const Access& b) { return a.key() < b.key(); });
    if (it != writes_.begin() && sameBuffer(*(it - 1), read)) --it;  // it may begin earlier and reach in
    for (; it != writes_.end() && sameBuffer(*it, read) && it->begin < read.end; ++it) {
      if (it->end <= read.begin) continue;
      // A Reduce may read exactly the elements it writes (element by element, dst = op(dst, ...)).
      const bool ownRange = it->transfer == read.transfer && it->begin == read.begin && it->end == read.end;
      if (!ownRange) fail(*it, read, "reads");
    }
  }

  [[noreturn]] void fail(const Access& write, const Access& other, const char* verb) const {
    const Step& step = plan_.steps[stepIndex_];
    const std::size_t begin = std::max(write.begin, other.begin);
    const std::size_t end = std::min(write.end, other.end);
    const std::string where = "rank " + std::to_string(write.rank) + " " + bufferKindName(write.buffer) + "[" +
                              std::to_string(begin) + ", " + std::to_string(end) + ")";
    throw Error(ErrorCode::Internal, prefix() + "race on " + where + ": transfer " + std::to_string(write.transfer) +
                                         " (" + describeTransfer(step.transfers[write.transfer]) +
                                         ") writes it while transfer " + std::to_string(other.transfer) + " (" +
                                         describeTransfer(step.transfers[other.transfer]) + ") " + verb + " it");
  }

  std::string prefix() const { return "plan " + planName(plan_) + ": step " + std::to_string(stepIndex_) + ": "; }

  const Plan& plan_;
  std::size_t stepIndex_;
  std::vector<Access> writes_;
  std::vector<Access> reads_;
};

void checkLayout(const Plan& plan) {
  if (plan.nranks < 1 || plan.ranks.size() != static_cast<std::size_t>(plan.nranks)) {
    throw Error(ErrorCode::Internal, "plan " + planName(plan) + ": " + std::to_string(plan.ranks.size()) +
                                         " rank layouts for " + std::to_string(plan.nranks) + " ranks");
  }
}

}  // namespace

std::vector<HostRankBuffers> allocateHostBuffers(const Plan& plan, std::byte fill) {
  const std::size_t size = dataTypeSize(plan.type);
  std::vector<HostRankBuffers> buffers(plan.ranks.size());
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    buffers[r].input.assign(plan.ranks[r].inputElements * size, fill);
    buffers[r].output.assign(plan.ranks[r].outputElements * size, fill);
    buffers[r].scratch.assign(plan.ranks[r].scratchElements * size, fill);
    buffers[r].hostStage.assign(plan.ranks[r].hostStageElements * size, fill);
  }
  return buffers;
}

void checkPlan(const Plan& plan) {
  checkLayout(plan);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) StepChecker(plan, s).check();
}

void executePlan(const Plan& plan, ReduceOp op, std::vector<HostRankBuffers>& buffers) {
  checkLayout(plan);
  if (!reduceOpSupported(plan.type, op)) {
    throw Error(ErrorCode::InvalidUsage,
                std::string(reduceOpName(op)) + " is not defined for " + dataTypeName(plan.type));
  }
  const std::size_t size = dataTypeSize(plan.type);
  if (buffers.size() != plan.ranks.size()) {
    throw Error(ErrorCode::InvalidUsage,
                "executePlan: " + std::to_string(buffers.size()) + " ranks' buffers for " + planName(plan));
  }
  for (std::size_t r = 0; r < buffers.size(); ++r) {
    for (BufferKind kind : {BufferKind::Input, BufferKind::Output, BufferKind::Scratch, BufferKind::HostStage}) {
      if (bytesOf(buffers[r], kind).size() < elementsOf(plan.ranks[r], kind) * size) {
        throw Error(ErrorCode::InvalidUsage, "executePlan: rank " + std::to_string(r) + "'s " + bufferKindName(kind) +
                                                 " is smaller than " + planName(plan) + " needs");
      }
    }
  }
  const auto address = [&](const BufferRef& ref) {
    return bytesOf(buffers[static_cast<std::size_t>(ref.rank)], ref.buffer).data() + ref.offset * size;
  };
  std::vector<const void*> srcs;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    StepChecker(plan, s).check();
    // Race-free, so running the transfers one after the other gives what running them concurrently would.
    for (const Transfer& transfer : plan.steps[s].transfers) {
      if (transfer.count == 0) continue;
      if (transfer.kind == TransferKind::Copy) {
        std::memmove(address(transfer.dst), address(transfer.srcs[0]), transfer.count * size);
        continue;
      }
      srcs.clear();
      for (const BufferRef& src : transfer.srcs) srcs.push_back(address(src));
      hostReduce(plan.type, op, address(transfer.dst), srcs, transfer.count, plan.nranks, transfer.finish);
    }
  }
}

std::vector<Bytes> runPlanOnHost(const Plan& plan, ReduceOp op, const std::vector<Bytes>& sendData, std::byte poison) {
  checkLayout(plan);
  const std::size_t size = dataTypeSize(plan.type);
  if (sendData.size() != plan.ranks.size()) {
    throw Error(ErrorCode::InvalidUsage,
                "runPlanOnHost: " + std::to_string(sendData.size()) + " send buffers for " + planName(plan));
  }
  std::vector<HostRankBuffers> buffers = allocateHostBuffers(plan, poison);
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const RankLayout& layout = plan.ranks[r];
    const std::size_t bytes = layout.sendElements * size;
    if (sendData[r].size() < bytes) {
      throw Error(ErrorCode::InvalidUsage, "runPlanOnHost: rank " + std::to_string(r) + "'s send data is " +
                                               std::to_string(sendData[r].size()) + " bytes, needs " +
                                               std::to_string(bytes));
    }
    if (bytes > 0)
      std::memcpy(bytesOf(buffers[r], layout.send.buffer).data() + layout.send.offset * size, sendData[r].data(),
                  bytes);
  }
  executePlan(plan, op, buffers);
  std::vector<Bytes> recv(plan.ranks.size());
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const RankLayout& layout = plan.ranks[r];
    const std::byte* begin = bytesOf(buffers[r], layout.recv.buffer).data() + layout.recv.offset * size;
    recv[r].assign(begin, begin + layout.recvElements * size);
  }
  return recv;
}

}  // namespace peerlink::coll
