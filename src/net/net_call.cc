// runCall and runPeerOps (net_call.hpp): pieces, the staged pipeline, the direct path.
#include "net/net_call.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "coll/choice_rules.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

class HostDevice final : public DeviceAccess {
 public:
  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
  }
  std::uint64_t mark() override { return 0; }
  bool reached(std::uint64_t) override { return true; }
  void* allocateHost(std::size_t bytes) override { return ::operator new(std::max<std::size_t>(bytes, 1)); }
  void freeHost(void* memory) noexcept override { ::operator delete(memory); }
};

// One piece of a call: its flat plan, and where this process's part of the plan's Input and Output lies in the
// caller's memory.
struct Piece {
  coll::Plan plan;
  BufferMap input;
  BufferMap output;
  std::size_t inputElements = 0;
  std::size_t outputElements = 0;
  std::size_t scratchElements = 0;
};

std::size_t pieceElements(const CallContext& context, DataType type) {
  const std::size_t align = coll::alignElementsOf(type);
  return std::max(align, context.chunkBytes / dataTypeSize(type) / align * align);
}

// `blocks` blocks of `elements` elements, block b at element b * stride + offset of `base`.
BufferMap blocksOf(const void* base, std::size_t blocks, std::size_t elements, std::size_t stride, std::size_t offset,
                   std::size_t elementSize) {
  BufferMap map;
  auto* bytes = static_cast<std::byte*>(const_cast<void*>(base));
  for (std::size_t b = 0; b < blocks; ++b) {
    map.segments.push_back({b * elements, elements, bytes + (b * stride + offset) * elementSize});
  }
  return map;
}

std::string callName(const CallContext& context, const char* what) {
  return context.run.name.empty() ? std::string(what) : context.run.name;
}

class Pipeline {
 public:
  Pipeline(const CallContext& context, DataType type, ReduceOp op, int divisor, std::string name)
      : context_(context), size_(dataTypeSize(type)), name_(std::move(name)) {
    run_ = context.run;
    run_.op = op;
    run_.avgDivisor = divisor;
    run_.name = name_;
  }

  template <typename Make>
  void run(std::size_t pieces, Make make) {
    if (pieces == 0) return;
    if (context_.path == NetPath::Direct) {
      for (std::size_t p = 0; p < pieces; ++p) direct(make(p));
      return;
    }
    staged(pieces, make);
  }

 private:
  // The caller's memory goes to MPI as it is. In place (send and recv overlap), each piece's send data is first
  // copied aside, so that every rank runs the same out-of-place plan whatever its buffers.
  void direct(Piece piece) {
    LocalMemory& memory = *context_.caller;
    const std::size_t scratchBytes = piece.scratchElements * size_;
    const std::size_t inputBytes = piece.inputElements * size_;
    auto* aside = static_cast<std::byte*>(memory.persistent(scratchBytes + inputBytes));
    if (overlaps(piece.input, piece.output)) {
      for (const BufferMap::Segment& segment : piece.input.segments) {
        memory.copy(aside + scratchBytes + segment.begin * size_, segment.data, segment.elements * size_);
      }
      piece.input = BufferMap::contiguous(aside + scratchBytes, piece.inputElements);
    }
    runMemberPlan(piece.plan, run_, piece.input, piece.output, BufferMap::contiguous(aside, piece.scratchElements),
                  memory);
  }

  bool overlaps(const BufferMap& a, const BufferMap& b) const {
    for (const BufferMap::Segment& x : a.segments) {
      for (const BufferMap::Segment& y : b.segments) {
        const auto* x0 = static_cast<const std::byte*>(x.data);
        const auto* y0 = static_cast<const std::byte*>(y.data);
        if (x0 < y0 + y.elements * size_ && y0 < x0 + x.elements * size_) return true;
      }
    }
    return false;
  }

  // Piece k+1 is copied in while piece k's messages move and piece k-1 is copied out: slot k % 3 each.
  template <typename Make>
  void staged(std::size_t pieces, Make make) {
    StagingSlots& slots = *context_.slots;
    DeviceAccess& device = *context_.device;
    const Piece first = make(0);  // the largest
    slots.reserve(first.inputElements * size_, first.outputElements * size_, first.scratchElements * size_);
    std::vector<Piece> inFlight(StagingSlots::kSlots);
    std::uint64_t copiedIn[StagingSlots::kSlots] = {};
    std::uint64_t copiedOut[StagingSlots::kSlots] = {};
    bool outPending[StagingSlots::kSlots] = {};
    const auto copyIn = [&](std::size_t p) {
      const std::size_t s = p % StagingSlots::kSlots;
      if (outPending[s]) await(copiedOut[s], "copying a result out");
      outPending[s] = false;
      inFlight[s] = p == 0 ? first : make(p);
      for (const BufferMap::Segment& segment : inFlight[s].input.segments) {
        device.copyAsync(slots.slot(s).input + segment.begin * size_, segment.data, segment.elements * size_);
      }
      copiedIn[s] = device.mark();
    };
    copyIn(0);
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t s = p % StagingSlots::kSlots;
      await(copiedIn[s], "copying the send data in");
      if (p + 1 < pieces) copyIn(p + 1);
      const Piece& piece = inFlight[s];
      const StagingSlots::Slot slot = slots.slot(s);
      runMemberPlan(piece.plan, run_, BufferMap::contiguous(slot.input, piece.inputElements),
                    BufferMap::contiguous(slot.output, piece.outputElements),
                    BufferMap::contiguous(slot.scratch, piece.scratchElements), *context_.host);
      for (const BufferMap::Segment& segment : piece.output.segments) {
        device.copyAsync(segment.data, slot.output + segment.begin * size_, segment.elements * size_);
      }
      copiedOut[s] = device.mark();
      outPending[s] = true;
    }
    for (std::size_t s = 0; s < StagingSlots::kSlots; ++s) {
      if (outPending[s]) await(copiedOut[s], "copying a result out");
    }
  }

  void await(std::uint64_t marker, const char* what) {
    const auto end = std::chrono::steady_clock::now() + context_.run.timeout;
    for (unsigned polls = 0; !context_.device->reached(marker); ++polls) {
      if (std::chrono::steady_clock::now() >= end) {
        throw Error(ErrorCode::Timeout, "net " + name_ + ": " + what +
                                            " between the caller's memory and pinned host "
                                            "memory did not finish within " +
                                            std::to_string(context_.run.timeout.count()) + " ms");
      }
      if (polls > 256) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  const CallContext& context_;
  std::size_t size_;
  std::string name_;
  MemberRun run_;
};

void checkCall(const CallContext& context, const NetCall& call, int n) {
  const std::string what = std::string("net ") + collectiveName(call.collective);
  if (call.collective == Collective::SendRecv) {
    throw Error(ErrorCode::InvalidUsage, what + ": send/recv goes through runPeerOps");
  }
  if (hasRoot(call.collective) && (call.root < 0 || call.root >= n)) {
    throw Error(ErrorCode::InvalidUsage,
                what + ": root " + std::to_string(call.root) + " is not a rank of a group of " + std::to_string(n));
  }
  if (call.count == 0) return;
  const int me = context.run.me;
  if (sendElementsOf(call.collective, n, 1, me, call.root) > 0 && call.send == nullptr) {
    throw Error(ErrorCode::InvalidUsage, what + ": no send buffer");
  }
  if (recvElementsOf(call.collective, n, 1, me, call.root) > 0 && call.recv == nullptr) {
    throw Error(ErrorCode::InvalidUsage, what + ": no recv buffer");
  }
}

}  // namespace

std::unique_ptr<DeviceAccess> hostDeviceAccess() {
  return std::make_unique<HostDevice>();
}

const char* netPathName(NetPath path) noexcept {
  return path == NetPath::Staged ? "staged" : "direct";
}

StagingSlots::~StagingSlots() {
  if (!leaked_) release();
}

void StagingSlots::release() noexcept {
  for (Slot& slot : slots_) {
    for (std::byte* memory : {slot.input, slot.output, slot.scratch}) {
      if (memory != nullptr) device_.freeHost(memory);
    }
    slot = Slot{};
  }
}

void StagingSlots::reserve(std::size_t inputBytes, std::size_t outputBytes, std::size_t scratchBytes) {
  const std::size_t wanted[3] = {inputBytes, outputBytes, scratchBytes};
  for (int kind = 0; kind < 3; ++kind) {
    if (wanted[kind] <= sizes_[kind] && slots_[0].input != nullptr) continue;
    const std::size_t bytes = std::max(wanted[kind], sizes_[kind]);
    for (Slot& slot : slots_) {
      std::byte*& memory = kind == 0 ? slot.input : kind == 1 ? slot.output : slot.scratch;
      if (memory != nullptr) device_.freeHost(memory);
      memory = static_cast<std::byte*>(device_.allocateHost(std::max<std::size_t>(bytes, 16)));
    }
    sizes_[kind] = bytes;
  }
}

coll::Plan callPlan(const NetCall& call, int nranks, std::size_t count) {
  const std::vector<Algorithm> available = coll::algorithmsOf(call.collective);
  Algorithm algorithm = call.algorithm;
  if (algorithm == Algorithm::Auto) {
    const bool ring = std::find(available.begin(), available.end(), Algorithm::Ring) != available.end();
    algorithm = ring ? Algorithm::Ring : available.front();
  }
  return coll::buildPlan(call.collective, algorithm, nranks, count, call.root, false, 0, call.type);
}

void runCall(const CallContext& context, const NetCall& call) {
  const int n = static_cast<int>(context.run.members.size());
  checkCall(context, call, n);
  const int me = context.run.me;
  const std::size_t size = dataTypeSize(call.type);
  const std::size_t step = pieceElements(context, call.type);
  const std::size_t sendBlocks = sendElementsOf(call.collective, n, 1, me, call.root);
  const std::size_t recvBlocks = recvElementsOf(call.collective, n, 1, me, call.root);
  const auto make = [&](std::size_t p) {
    const std::size_t begin = p * step;
    const std::size_t count = std::min(step, call.count - begin);
    Piece piece;
    piece.plan = callPlan(call, n, count);
    const coll::RankLayout& layout = piece.plan.ranks[static_cast<std::size_t>(me)];
    piece.input = blocksOf(call.send, sendBlocks, count, call.count, begin, size);
    piece.output = blocksOf(call.recv, recvBlocks, count, call.count, begin, size);
    piece.inputElements = layout.inputElements;
    piece.outputElements = layout.outputElements;
    piece.scratchElements = layout.scratchElements;
    return piece;
  };
  const int divisor = call.avgDivisor > 0 ? call.avgDivisor : n;
  Pipeline(context, call.type, call.op, divisor, callName(context, collectiveName(call.collective)))
      .run((call.count + step - 1) / step, make);
}

void runPeerOps(const CallContext& context, const std::vector<PeerOp>& ops, DataType type) {
  const int n = static_cast<int>(context.run.members.size());
  const int me = context.run.me;
  std::size_t longest = 0;
  for (const PeerOp& op : ops) {
    if (op.peer < 0 || op.peer >= n) {
      throw Error(ErrorCode::InvalidUsage, std::string("net ") + (op.send ? "send to" : "recv from") + " rank " +
                                               std::to_string(op.peer) + ": not a rank of a group of " +
                                               std::to_string(n));
    }
    if (op.count > 0 && op.data == nullptr) throw Error(ErrorCode::InvalidUsage, "net send/recv: a null buffer");
    longest = std::max(longest, op.count);
  }
  const std::size_t size = dataTypeSize(type);
  const std::size_t step = pieceElements(context, type);
  // Piece p of every operation long enough: one step; sends to this rank itself are matched to its receives
  // from itself in order.
  const auto make = [&](std::size_t p) {
    Piece piece;
    coll::Plan& plan = piece.plan;
    plan.collective = Collective::SendRecv;
    plan.type = type;
    plan.nranks = n;
    plan.ranks.resize(static_cast<std::size_t>(n));
    coll::Step step0;
    std::vector<std::pair<std::size_t, std::size_t>> toSelf;  // (input offset, count)
    for (const PeerOp& op : ops) {
      if (!op.send || op.count <= p * step) continue;
      const std::size_t count = std::min(step, op.count - p * step);
      const std::size_t at = piece.inputElements;
      piece.input.segments.push_back({at, count, static_cast<std::byte*>(op.data) + p * step * size});
      piece.inputElements += count;
      if (op.peer == me) {
        toSelf.emplace_back(at, count);
        continue;
      }
      step0.transfers.push_back({op.peer,
                                 coll::TransferKind::Copy,
                                 {op.peer, coll::BufferKind::Output, 0},
                                 {{me, coll::BufferKind::Input, at}},
                                 count,
                                 false});
    }
    std::size_t self = 0;
    for (const PeerOp& op : ops) {
      if (op.send || op.count <= p * step) continue;
      const std::size_t count = std::min(step, op.count - p * step);
      const std::size_t at = piece.outputElements;
      piece.output.segments.push_back({at, count, static_cast<std::byte*>(op.data) + p * step * size});
      piece.outputElements += count;
      coll::BufferRef src{op.peer, coll::BufferKind::Input, 0};
      if (op.peer == me) {
        if (self >= toSelf.size() || toSelf[self].second != count) {
          throw Error(ErrorCode::InvalidUsage, "net send/recv on rank " + std::to_string(me) +
                                                   ": a receive from itself without a send to itself of that size");
        }
        src.offset = toSelf[self++].first;
      }
      step0.transfers.push_back(
          {me, coll::TransferKind::Copy, {me, coll::BufferKind::Output, at}, {src}, count, false});
    }
    plan.steps.push_back(std::move(step0));
    return piece;
  };
  Pipeline(context, type, ReduceOp::Sum, n, callName(context, "send/recv")).run((longest + step - 1) / step, make);
}

}  // namespace peerlink::net
