// MemberPlan and HostMemory (plan_runner.hpp).
#include "net/plan_runner.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "coll/host_reduce.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {

void HostMemory::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
}

void HostMemory::reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
                        int divisor, bool finish) {
  coll::hostReduce(type, op, dst, srcs, count, divisor, finish);
}

void* HostMemory::temporary(std::size_t lane, std::size_t bytes) {
  if (lane >= lanes_.size()) lanes_.resize(lane + 1);
  Lane& mine = lanes_[lane];
  if (mine.used == mine.pool.size()) mine.pool.emplace_back();
  std::vector<std::byte>& buffer = mine.pool[mine.used++];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

void HostMemory::release(std::size_t lane) {
  if (lane < lanes_.size()) lanes_[lane].used = 0;
}

void* HostMemory::persistent(std::size_t bytes) {
  if (persistent_.size() < bytes) persistent_.resize(bytes);
  return persistent_.data();
}

namespace {

// A computation runs in slices of this many bytes, the messages in flight tested between them: MPI moves data only
// inside those tests, so a long reduction would stall every other piece's messages.
constexpr std::size_t kSliceBytes = std::size_t{256} << 10;

// What this process does for a transfer it executes (MemberPlan::beginStep, computeNext; planDemand counts it).
struct ExecutedRole {
  bool landsInPlace = false;  // a copy from another process into this one's buffer: received where it belongs
  bool computes = false;      // copied or reduced here, through the memory
  bool resultAside = false;   // computed into a temporary, for another process
};

ExecutedRole roleOf(const coll::Transfer& transfer, int me) {
  const bool local = transfer.dst.rank == me;
  const bool copy = transfer.kind == coll::TransferKind::Copy;
  ExecutedRole role;
  role.landsInPlace = copy && local && transfer.srcs[0].rank != me;
  role.computes = !role.landsInPlace && !(copy && !local);  // a copy elsewhere goes out from its source
  role.resultAside = role.computes && !local;
  return role;
}

std::size_t aligned(std::size_t bytes) {
  return (bytes + kTemporaryAlign - 1) / kTemporaryAlign * kTemporaryAlign;
}

}  // namespace

PlanDemand planDemand(const coll::Plan& plan, int me) {
  PlanDemand demand;
  const std::size_t size = dataTypeSize(plan.type);
  for (const coll::Step& step : plan.steps) {
    std::size_t computations = 0;
    std::size_t temporaryBytes = 0;
    for (const coll::Transfer& transfer : step.transfers) {
      if (transfer.executor != me) continue;
      const ExecutedRole role = roleOf(transfer, me);
      if (role.landsInPlace) continue;
      for (const coll::BufferRef& src : transfer.srcs) {
        if (src.rank != me) temporaryBytes += aligned(transfer.count * size);
      }
      if (!role.computes) continue;
      ++computations;
      if (role.resultAside) temporaryBytes += aligned(transfer.count * size);
      demand.mostElements = std::max(demand.mostElements, transfer.count);
      if (transfer.kind != coll::TransferKind::Copy)
        demand.mostSources = std::max(demand.mostSources, transfer.srcs.size());
    }
    demand.computations += computations;
    demand.mostComputationsInAStep = std::max(demand.mostComputationsInAStep, computations);
    demand.mostTemporaryBytes = std::max(demand.mostTemporaryBytes, temporaryBytes);
  }
  return demand;
}

MemberPlan::MemberPlan(const coll::Plan& plan, const MemberRun& run, int tag, BufferMap input, BufferMap output,
                       BufferMap scratch, LocalMemory& memory, std::size_t lane)
    : plan_(plan),
      run_(run),
      tag_(tag),
      maps_{std::move(input), std::move(output), std::move(scratch)},
      memory_(memory),
      lane_(lane),
      size_(dataTypeSize(plan.type)) {
  if (run.p2p == nullptr || run.members.size() != static_cast<std::size_t>(plan.nranks) || run.me < 0 ||
      run.me >= plan.nranks) {
    throw Error(ErrorCode::Internal, "MemberPlan: " + coll::planName(plan) + " given " +
                                         std::to_string(run.members.size()) + " members and rank " +
                                         std::to_string(run.me));
  }
}

MemberPlan::~MemberPlan() {
  for (const Pending& pending : pending_) run_.p2p->abandon(pending.request);
}

bool MemberPlan::advance() {
  if (done()) return false;
  bool progressed = false;
  if (!begun_) {
    beginStep();
    progressed = true;
  }
  progressed = testMessages() || progressed;
  progressed = computeNext() || progressed;
  if (finished_ == executed_.size() && pending_.empty()) {
    ++step_;
    begun_ = false;
    if (!done()) beginStep();
    return true;
  }
  if (!progressed) checkHealth();
  return progressed;
}

// Receives first: the sources this process needs, then results other executors send it; then this process's
// sources for executors elsewhere, in the order they post their receives. Its results go out as computeNext reaches
// them, in the plan's order, the order their destinations post the receives.
void MemberPlan::beginStep() {
  const coll::Step& step = plan_.steps[step_];
  memory_.release(lane_);
  executed_.clear();
  next_ = 0;
  finished_ = 0;
  computed_ = 0;
  deadline_ = std::chrono::steady_clock::now() + run_.timeout;
  begun_ = true;
  for (std::size_t t = 0; t < step.transfers.size(); ++t) {
    const coll::Transfer& transfer = step.transfers[t];
    if (transfer.executor != run_.me) continue;
    const std::size_t index = executed_.size();
    const ExecutedRole role = roleOf(transfer, run_.me);
    Executed& e = executed_.emplace_back(Executed{t, {}, nullptr, 0, role.computes, 0});
    if (transfer.dst.rank == run_.me) e.dst = address(transfer.dst, transfer.count);
    if (role.landsInPlace) {
      // Lands where it belongs.
      pending_.push_back(receive(transfer.srcs[0].rank, e.dst, bytesOf(transfer), index));
      e.sources.push_back(e.dst);
      e.waiting = 1;
      continue;
    }
    for (const coll::BufferRef& src : transfer.srcs) {
      if (src.rank == run_.me) {
        e.sources.push_back(address(src, transfer.count));
        continue;
      }
      void* landing = memory_.temporary(lane_, bytesOf(transfer));
      pending_.push_back(receive(src.rank, landing, bytesOf(transfer), index));
      e.sources.push_back(landing);
      ++e.waiting;
    }
  }
  for (const coll::Transfer& transfer : step.transfers) {
    if (transfer.executor == run_.me || transfer.dst.rank != run_.me) continue;
    pending_.push_back(receive(transfer.executor, address(transfer.dst, transfer.count), bytesOf(transfer), kNone));
  }
  for (const coll::Transfer& transfer : step.transfers) {
    if (transfer.executor == run_.me) continue;
    for (const coll::BufferRef& src : transfer.srcs) {
      if (src.rank == run_.me)
        pending_.push_back(send(transfer.executor, address(src, transfer.count), bytesOf(transfer)));
    }
  }
}

// Completed messages leave the list (so that a failure abandons only the others).
bool MemberPlan::testMessages() {
  bool progressed = false;
  for (std::size_t i = 0; i < pending_.size();) {
    std::size_t received = 0;
    bool finished = false;
    const Pending pending = pending_[i];
    try {
      finished = run_.p2p->test(pending.request, &received);
    } catch (const Error& error) {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      throw Error(ErrorCode::RemoteError,
                  prefix() + "a message with " + run_.describe(pending.peer) + " failed: " + error.what());
    }
    if (!finished) {
      ++i;
      continue;
    }
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    if (pending.receive && received != pending.bytes) {
      throw Error(ErrorCode::Internal, prefix() + run_.describe(pending.peer) + " sent " + std::to_string(received) +
                                           " bytes where " + std::to_string(pending.bytes) +
                                           " were expected (do the ranks run the same calls in the same order?)");
    }
    if (pending.executed != kNone) --executed_[pending.executed].waiting;
    progressed = true;
  }
  return progressed;
}

// The transfers this process executes, in the plan's order, each once its sources are here: computed (a slice at a
// time where the memory computes in the call, so that the messages are tested between slices; whole where it
// queues the work), then finished.
bool MemberPlan::computeNext() {
  bool progressed = finishComputed();
  while (next_ < executed_.size() && executed_[next_].waiting == 0) {
    Executed& e = executed_[next_];
    if (!e.compute) {
      ++next_;
      progressed = finishComputed() || progressed;
      continue;
    }
    const coll::Transfer& transfer = plan_.steps[step_].transfers[e.transfer];
    if (e.dst == nullptr) e.dst = memory_.temporary(lane_, bytesOf(transfer));
    const bool queues = memory_.queues();
    const std::size_t slice = std::max<std::size_t>(1, kSliceBytes / size_);
    const std::size_t count = queues ? transfer.count : std::min(slice, transfer.count - computed_);
    const std::size_t at = computed_ * size_;
    auto* dst = static_cast<std::byte*>(e.dst) + at;
    if (transfer.kind == coll::TransferKind::Copy) {
      memory_.copy(dst, static_cast<const std::byte*>(e.sources[0]) + at, count * size_);
    } else {
      std::vector<const void*> srcs;
      srcs.reserve(e.sources.size());
      for (const void* source : e.sources) srcs.push_back(static_cast<const std::byte*>(source) + at);
      memory_.reduce(plan_.type, run_.op, dst, srcs, count, run_.avgDivisor, transfer.finish);
    }
    computed_ += count;
    if (computed_ < transfer.count) return true;
    e.marker = memory_.mark();
    ++next_;
    computed_ = 0;
    finishComputed();
    if (!queues) return true;
    progressed = true;
  }
  return progressed;
}

// The transfers computed (or with nothing to compute) whose work is done, in the plan's order: a result bound for
// another process is sent there, in the order its destination posted the receives.
bool MemberPlan::finishComputed() {
  bool progressed = false;
  while (finished_ < next_ && memory_.reached(executed_[finished_].marker)) {
    const Executed& e = executed_[finished_];
    const coll::Transfer& transfer = plan_.steps[step_].transfers[e.transfer];
    if (transfer.dst.rank != run_.me) {
      pending_.push_back(send(transfer.dst.rank, e.compute ? e.dst : e.sources[0], bytesOf(transfer)));
    }
    ++finished_;
    progressed = true;
  }
  return progressed;
}

void MemberPlan::checkHealth() const {
  const std::string why = run_.lost ? run_.lost() : std::string();
  if (!why.empty()) throw Error(ErrorCode::RemoteError, prefix() + why);
  if (std::chrono::steady_clock::now() >= deadline_) throw Error(ErrorCode::Timeout, timeoutText());
}

std::size_t MemberPlan::bytesOf(const coll::Transfer& transfer) const {
  return transfer.count * size_;
}

// The memory of element `ref.offset` of this process's buffer, checked to lie in one segment with `count` more.
void* MemberPlan::address(const coll::BufferRef& ref, std::size_t count) const {
  const BufferMap& map = maps_[static_cast<int>(ref.buffer)];
  const auto segment =
      std::upper_bound(map.segments.begin(), map.segments.end(), ref.offset,
                       [](std::size_t offset, const BufferMap::Segment& s) { return offset < s.begin; });
  if (segment == map.segments.begin() || ref.offset + count > (segment - 1)->begin + (segment - 1)->elements ||
      (segment - 1)->data == nullptr) {
    throw Error(ErrorCode::Internal, prefix() + "elements [" + std::to_string(ref.offset) + ", " +
                                         std::to_string(ref.offset + count) + ") of the " +
                                         coll::bufferKindName(ref.buffer) + " lie in no one segment given");
  }
  return static_cast<std::byte*>((segment - 1)->data) + (ref.offset - (segment - 1)->begin) * size_;
}

MemberPlan::Pending MemberPlan::receive(int planRank, void* data, std::size_t bytes, std::size_t executed) {
  const int peer = run_.members[static_cast<std::size_t>(planRank)];
  return {run_.p2p->irecv(peer, tag_, data, bytes), peer, bytes, true, executed};
}

MemberPlan::Pending MemberPlan::send(int planRank, const void* data, std::size_t bytes) {
  const int peer = run_.members[static_cast<std::size_t>(planRank)];
  return {run_.p2p->isend(peer, tag_, data, bytes), peer, bytes, false, kNone};
}

std::string MemberPlan::timeoutText() const {
  std::set<int> silent;
  std::set<int> unread;
  for (const Pending& p : pending_) (p.receive ? silent : unread).insert(p.peer);
  const auto named = [&](const std::set<int>& peers) {
    std::string text;
    for (const int peer : peers) text += (text.empty() ? "" : ", ") + run_.describe(peer);
    return text;
  };
  std::vector<std::string> parts;
  if (!silent.empty()) parts.push_back("from " + named(silent));
  if (!unread.empty()) parts.push_back("sends not taken by " + named(unread));
  if (finished_ < next_) {
    parts.push_back(std::to_string(next_ - finished_) + " computation(s) queued here not finished (on the GPU)");
  }
  std::string text = prefix() + "nothing within " + std::to_string(run_.timeout.count()) + " ms";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? " " : "; and ") + parts[i];
  return text + " (is every rank running, making the same calls, and is the network between the nodes up?)";
}

std::string MemberPlan::prefix() const {
  return "net " + run_.name + " on " + run_.describe(run_.members[static_cast<std::size_t>(run_.me)]) + ", step " +
         std::to_string(step_ + 1) + " of " + std::to_string(plan_.steps.size()) + ": ";
}

}  // namespace peerlink::net
