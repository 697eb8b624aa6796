// runMemberPlan (plan_runner.hpp).
#include "net/plan_runner.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>

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

void* HostMemory::temporary(std::size_t bytes) {
  if (used_ == pool_.size()) pool_.emplace_back();
  std::vector<std::byte>& buffer = pool_[used_++];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

void* HostMemory::persistent(std::size_t bytes) {
  if (persistent_.size() < bytes) persistent_.resize(bytes);
  return persistent_.data();
}

namespace {

using Request = PointToPoint::Request;

// A message in flight and whom it concerns.
struct Pending {
  Request request;
  int peer;  // PointToPoint rank
  std::size_t bytes;
  bool receive;
};

class StepRunner {
 public:
  StepRunner(const coll::Plan& plan, const MemberRun& run, const BufferMap& input, const BufferMap& output,
             const BufferMap& scratch, LocalMemory& memory)
      : plan_(plan), run_(run), maps_{input, output, scratch}, memory_(memory), size_(dataTypeSize(plan.type)) {}

  void runStep(std::size_t s) {
    step_ = s;
    const coll::Step& step = plan_.steps[s];
    memory_.release();
    std::vector<std::vector<const void*>> sources(step.transfers.size());
    std::vector<void*> results(step.transfers.size(), nullptr);  // where a result from elsewhere lands first
    std::vector<Pending> needed;                                 // the sources this process computes with
    std::vector<Pending> rest;                                   // everything else
    try {
      // Receives first: the sources this process needs, then results other executors send it.
      for (std::size_t t = 0; t < step.transfers.size(); ++t) {
        const coll::Transfer& transfer = step.transfers[t];
        if (transfer.executor != run_.me) continue;
        for (const coll::BufferRef& src : transfer.srcs) {
          if (src.rank == run_.me) {
            sources[t].push_back(address(src, transfer.count));
            continue;
          }
          void* landing = memory_.temporary(bytesOf(transfer));
          needed.push_back(receive(src.rank, landing, bytesOf(transfer)));
          sources[t].push_back(landing);
        }
      }
      for (std::size_t t = 0; t < step.transfers.size(); ++t) {
        const coll::Transfer& transfer = step.transfers[t];
        if (transfer.executor == run_.me || transfer.dst.rank != run_.me) continue;
        results[t] = memory_.temporary(bytesOf(transfer));
        rest.push_back(receive(transfer.executor, results[t], bytesOf(transfer)));
      }
      // This process's sources for executors elsewhere, in the order they post their receives.
      for (const coll::Transfer& transfer : step.transfers) {
        if (transfer.executor == run_.me) continue;
        for (const coll::BufferRef& src : transfer.srcs) {
          if (src.rank == run_.me)
            rest.push_back(send(transfer.executor, address(src, transfer.count), bytesOf(transfer)));
        }
      }
      await(needed);
      for (std::size_t t = 0; t < step.transfers.size(); ++t) {
        const coll::Transfer& transfer = step.transfers[t];
        if (transfer.executor != run_.me) continue;
        const bool local = transfer.dst.rank == run_.me;
        void* dst = local ? address(transfer.dst, transfer.count) : memory_.temporary(bytesOf(transfer));
        compute(transfer, dst, sources[t]);
        if (!local) rest.push_back(send(transfer.dst.rank, dst, bytesOf(transfer)));
      }
      await(rest);
      for (std::size_t t = 0; t < step.transfers.size(); ++t) {
        if (results[t] != nullptr) {
          memory_.copy(address(step.transfers[t].dst, step.transfers[t].count), results[t], bytesOf(step.transfers[t]));
        }
      }
    } catch (...) {
      for (const Pending& pending : needed) run_.p2p->abandon(pending.request);
      for (const Pending& pending : rest) run_.p2p->abandon(pending.request);
      throw;
    }
  }

 private:
  std::size_t bytesOf(const coll::Transfer& transfer) const { return transfer.count * size_; }

  // The memory of element `ref.offset` of this process's buffer, checked to lie in one segment with `count` more.
  void* address(const coll::BufferRef& ref, std::size_t count) const {
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

  void compute(const coll::Transfer& transfer, void* dst, const std::vector<const void*>& srcs) {
    if (transfer.kind == coll::TransferKind::Copy) {
      memory_.copy(dst, srcs[0], bytesOf(transfer));
      return;
    }
    memory_.reduce(plan_.type, run_.op, dst, srcs, transfer.count, run_.avgDivisor, transfer.finish);
  }

  Pending receive(int planRank, void* data, std::size_t bytes) {
    const int peer = run_.members[static_cast<std::size_t>(planRank)];
    return {run_.p2p->irecv(peer, run_.tag, data, bytes), peer, bytes, true};
  }
  Pending send(int planRank, const void* data, std::size_t bytes) {
    const int peer = run_.members[static_cast<std::size_t>(planRank)];
    return {run_.p2p->isend(peer, run_.tag, data, bytes), peer, bytes, false};
  }

  // Polls until every request completed, a peer is lost, or the step's deadline passes; completed requests leave
  // the list (so that a failure abandons only the others).
  void await(std::vector<Pending>& pending) {
    const auto end = std::chrono::steady_clock::now() + run_.timeout;
    for (unsigned polls = 0;; ++polls) {
      for (std::size_t i = 0; i < pending.size();) {
        std::size_t received = 0;
        bool done = false;
        try {
          done = run_.p2p->test(pending[i].request, &received);
        } catch (const Error& error) {
          const int peer = pending[i].peer;
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
          throw Error(ErrorCode::RemoteError,
                      prefix() + "a message with " + run_.describe(peer) + " failed: " + error.what());
        }
        if (!done) {
          ++i;
          continue;
        }
        if (pending[i].receive && received != pending[i].bytes) {
          const Pending bad = pending[i];
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
          throw Error(ErrorCode::Internal, prefix() + run_.describe(bad.peer) + " sent " + std::to_string(received) +
                                               " bytes where " + std::to_string(bad.bytes) +
                                               " were expected (do the ranks run the same calls in the same order?)");
        }
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (pending.empty()) return;
      const std::string why = run_.lost ? run_.lost() : std::string();
      if (!why.empty()) throw Error(ErrorCode::RemoteError, prefix() + why);
      if (std::chrono::steady_clock::now() >= end) throw Error(ErrorCode::Timeout, timeoutText(pending));
      // Spin a while (MPI progresses inside test), then yield the core: 2 cores may hold 4 ranks.
      if (polls > 256) std::this_thread::sleep_for(std::chrono::microseconds(polls > 4096 ? 200 : 10));
    }
  }

  std::string timeoutText(const std::vector<Pending>& pending) const {
    std::set<int> silent;
    std::set<int> unread;
    for (const Pending& p : pending) (p.receive ? silent : unread).insert(p.peer);
    std::string text = prefix() + "nothing within " + std::to_string(run_.timeout.count()) + " ms ";
    std::string from;
    for (const int peer : silent) from += (from.empty() ? "" : ", ") + run_.describe(peer);
    std::string to;
    for (const int peer : unread) to += (to.empty() ? "" : ", ") + run_.describe(peer);
    if (!from.empty()) text += "from " + from;
    if (!to.empty()) text += std::string(from.empty() ? "" : "; ") + "and sends not taken by " + to;
    return text + " (is every rank running, making the same calls, and is the network between the nodes up?)";
  }

  std::string prefix() const {
    return "net " + run_.name + " on " + run_.describe(run_.members[static_cast<std::size_t>(run_.me)]) + ", step " +
           std::to_string(step_ + 1) + " of " + std::to_string(plan_.steps.size()) + ": ";
  }

  const coll::Plan& plan_;
  const MemberRun& run_;
  BufferMap maps_[3];
  LocalMemory& memory_;
  std::size_t size_;
  std::size_t step_ = 0;
};

}  // namespace

void runMemberPlan(const coll::Plan& plan, const MemberRun& run, const BufferMap& input, const BufferMap& output,
                   const BufferMap& scratch, LocalMemory& memory) {
  if (run.p2p == nullptr || run.members.size() != static_cast<std::size_t>(plan.nranks) || run.me < 0 ||
      run.me >= plan.nranks) {
    throw Error(ErrorCode::Internal, "runMemberPlan: " + coll::planName(plan) + " given " +
                                         std::to_string(run.members.size()) + " members and rank " +
                                         std::to_string(run.me));
  }
  StepRunner runner(plan, run, input, output, scratch, memory);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) runner.runStep(s);
}

}  // namespace peerlink::net
