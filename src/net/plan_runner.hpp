// One process's part of a flat plan (coll/plan.hpp) over point-to-point messages: the plan's ranks are processes
// of a PointToPoint world, and each runs the steps as they concern it. The plan is the algorithm; this carries it
// out, so what the CPU tests prove of a plan (the host executor, against the closed forms) is what moves between
// nodes.
//
// A transfer is computed by its executor: sources on other processes are sent to it, it copies or reduces, and a
// result whose destination is another process's is sent there. A copy moves no byte twice: a source this process
// holds goes out from where it lies, and a copy from another process lands in its destination. Per step, every
// process posts all its receives and the sends of its own sources, computes each transfer it executes (in the
// plan's order) once its sources arrived, sends its results, and waits for the rest. A step's messages are posted
// only after the step before completed here, and the plan is race-free per step, so no process waits on one that
// waits on it, and data is never overwritten while a message reads it.
//
// MemberPlan never blocks: a call's pieces each run one (net_call.hpp), advanced in turn by one thread, so that
// piece k+1's messages move while piece k reduces.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "coll/plan.hpp"
#include "net/point_to_point.hpp"

namespace peerlink::net {

/// Where one kind of buffer of this process lies: segments of the plan's element range, each at its own address
/// (a piece of every block of a call, or of every send of a send/recv group: net_call.hpp). A transfer's range lies
/// within one segment.
struct BufferMap {
  struct Segment {
    std::size_t begin = 0;  ///< first element of the plan's range
    std::size_t elements = 0;
    void* data = nullptr;
  };
  std::vector<Segment> segments;  ///< in order of begin, not overlapping

  /// One contiguous range of `elements` elements.
  static BufferMap contiguous(void* data, std::size_t elements) { return {{{0, elements, data}}}; }
};

/// Copies and reductions on this process's memory: the host's (HostMemory), or a GPU's where MPI reads device
/// memory itself (the communicator supplies that one).
class LocalMemory {
 public:
  virtual ~LocalMemory() = default;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  /// dst = op(srcs...) element by element (coll/host_reduce.hpp's rules); `finish` divides Avg by `divisor`.
  virtual void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
                      int divisor, bool finish) = 0;
  /// Memory for messages in flight in `lane` (one per piece in flight), valid until release(lane); `bytes` may be 0.
  virtual void* temporary(std::size_t lane, std::size_t bytes) = 0;
  /// Every temporary of `lane` may be reused.
  virtual void release(std::size_t lane) = 0;
  /// A buffer of at least `bytes` kept across calls (a plan's scratch), the same one each time it is big enough.
  virtual void* persistent(std::size_t bytes) = 0;

  /// Whether copy and reduce only queue their work (on a GPU's stream) and return: MemberPlan then gives whole
  /// transfers, and sends a result, or ends a step, only once reached() says its work is done. Memory that computes
  /// within the call (HostMemory) is given slices between MPI's tests instead.
  virtual bool queues() const { return false; }
  /// A marker after every copy and reduction queued so far.
  virtual std::uint64_t mark() { return 0; }
  /// Whether the work queued before `marker` is done; never waits.
  virtual bool reached(std::uint64_t /*marker*/) { return true; }
  /// Keeps every buffer forever: after a failure, abandoned messages or queued work may still use them.
  virtual void leak() noexcept {}
};

/// Host memory: memmove, hostReduce, a growing pool of temporaries per lane, kept across calls.
class HostMemory final : public LocalMemory {
 public:
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override;
  void* temporary(std::size_t lane, std::size_t bytes) override;
  void release(std::size_t lane) override;
  void* persistent(std::size_t bytes) override;

 private:
  struct Lane {
    std::vector<std::vector<std::byte>> pool;
    std::size_t used = 0;
  };
  std::vector<std::byte> persistent_;
  std::vector<Lane> lanes_;
};

/// What a run needs beyond the plan.
struct MemberRun {
  PointToPoint* p2p = nullptr;
  std::vector<int> members;  ///< the PointToPoint rank of each plan rank
  int me = 0;                ///< this process's plan rank
  ReduceOp op = ReduceOp::Sum;
  int avgDivisor = 1;  ///< what a finishing Avg divides by
  int tag = 0;         ///< the call's first tag: its pieces in flight carry tag, tag + 1, ... (net_call.hpp)
  std::chrono::milliseconds timeout{30000};
  std::string name;  ///< "all_reduce across nodes (rail 1)", for messages
  /// "rank 3 (host b, pid 42)" for a PointToPoint rank.
  std::function<std::string(int)> describe;
  /// Why the world lost a rank (the first it lost), or empty: polled while waiting, and any loss ends the wait (a
  /// collective of the world cannot finish without the rank, even where this step waits on another).
  std::function<std::string()> lost;
};

/// What MemberPlan asks of memory that queues its work (LocalMemory::queues) running `plan` as rank `me`: each
/// transfer it computes is one copy() or reduce(); every source received from another process, and every result
/// bound for one, is a temporary of kTemporaryAlign-aligned bytes, all of a step's released when the next begins.
/// Pure (what a queued call queues at the call: net/queued_computations.hpp).
struct PlanDemand {
  std::size_t computations = 0;  ///< in the whole plan
  std::size_t mostComputationsInAStep = 0;
  std::size_t mostSources = 0;         ///< of one reduction
  std::size_t mostElements = 0;        ///< of one computation
  std::size_t mostTemporaryBytes = 0;  ///< of one step, each temporary rounded up to kTemporaryAlign
};
constexpr std::size_t kTemporaryAlign = 256;
PlanDemand planDemand(const coll::Plan& plan, int me);

/// This process's part of every step of `plan`, advanced by advance() until done(). `input`, `output` and `scratch`
/// map the plan's buffers of rank `run.me`; its messages carry `tag`, its temporaries are `memory`'s of `lane`.
class MemberPlan {
 public:
  MemberPlan(const coll::Plan& plan, const MemberRun& run, int tag, BufferMap input, BufferMap output,
             BufferMap scratch, LocalMemory& memory, std::size_t lane);
  /// Abandons the messages still in flight (after an error; their memory may still be used by the transport).
  ~MemberPlan();
  MemberPlan(const MemberPlan&) = delete;
  MemberPlan& operator=(const MemberPlan&) = delete;

  /// Does what can be done now without waiting: begins a step (posts its messages), tests the messages in flight,
  /// computes a slice of the next transfer whose sources are here. True when something happened. Where nothing
  /// did, throws Error(RemoteError) for a lost peer (run.lost) and Error(Timeout) naming every peer whose message
  /// did not come once the step has waited run.timeout (the deadline restarts at each step); a failed message is
  /// Error(RemoteError) naming the step and the peer.
  bool advance();
  bool done() const { return step_ >= plan_.steps.size(); }

 private:
  // A message in flight and whom it concerns.
  struct Pending {
    PointToPoint::Request request;
    int peer;  // PointToPoint rank
    std::size_t bytes;
    bool receive;
    std::size_t executed;  // a source of executed_[executed]; kNone otherwise
  };
  static constexpr std::size_t kNone = ~std::size_t{0};
  void beginStep();
  bool testMessages();
  bool computeNext();
  bool finishComputed();
  void checkHealth() const;
  std::size_t bytesOf(const coll::Transfer& transfer) const;
  void* address(const coll::BufferRef& ref, std::size_t count) const;
  Pending receive(int planRank, void* data, std::size_t bytes, std::size_t executed);
  Pending send(int planRank, const void* data, std::size_t bytes);
  std::string timeoutText() const;
  std::string prefix() const;

  const coll::Plan& plan_;
  const MemberRun& run_;
  int tag_;
  BufferMap maps_[3];
  LocalMemory& memory_;
  std::size_t lane_;
  std::size_t size_;
  std::size_t step_ = 0;
  bool begun_ = false;
  std::chrono::steady_clock::time_point deadline_;
  // The step in progress: its transfers this process executes, in the plan's order, each with its sources and
  // destination here, the sources still on their way; the next one to compute (elements done of it), and the first
  // not finished (its work queued, its result not sent yet). The step ends once every one finished.
  struct Executed {
    std::size_t transfer;
    std::vector<const void*> sources;
    void* dst;
    std::size_t waiting;   // sources not arrived yet
    bool compute;          // false: the data is in place once it arrived, or goes out as it lies
    std::uint64_t marker;  // the memory's marker after its computation (memory_.reached)
  };
  std::vector<Executed> executed_;
  std::size_t next_ = 0;      // the next to compute
  std::size_t finished_ = 0;  // the next whose computation may still be running; its result not sent yet
  std::size_t computed_ = 0;
  std::vector<Pending> pending_;
};

}  // namespace peerlink::net
