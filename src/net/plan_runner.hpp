// One process's part of a flat plan (coll/plan.hpp) over point-to-point messages: the plan's ranks are processes
// of a PointToPoint world, and each runs the steps as they concern it. The plan is the algorithm; this carries it
// out, so what the CPU tests prove of a plan (the host executor, against the closed forms) is what moves between
// nodes.
//
// A transfer is computed by its executor: sources on other processes are sent to it, it copies or reduces, and a
// result whose destination is another process's is sent there. Per step, every process posts all its receives
// and the sends of its own sources, waits for the sources it needs, computes, sends its results, and waits for
// the rest. A step's messages are posted only after the step before completed here, and the plan is race-free
// per step, so no process waits on one that waits on it, and data is never overwritten while a message reads it.
#pragma once

#include <chrono>
#include <cstddef>
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
  /// Memory for messages in flight, valid until release(); `bytes` may be 0.
  virtual void* temporary(std::size_t bytes) = 0;
  /// Every temporary may be reused.
  virtual void release() = 0;
  /// A buffer of at least `bytes` kept across calls (a plan's scratch), the same one each time it is big enough.
  virtual void* persistent(std::size_t bytes) = 0;
};

/// Host memory: memmove, hostReduce, a growing pool of temporaries.
class HostMemory final : public LocalMemory {
 public:
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override;
  void* temporary(std::size_t bytes) override;
  void release() override { used_ = 0; }
  void* persistent(std::size_t bytes) override;

 private:
  std::vector<std::byte> persistent_;
  std::vector<std::vector<std::byte>> pool_;
  std::size_t used_ = 0;
};

/// What a run needs beyond the plan.
struct MemberRun {
  PointToPoint* p2p = nullptr;
  std::vector<int> members;  ///< the PointToPoint rank of each plan rank
  int me = 0;                ///< this process's plan rank
  ReduceOp op = ReduceOp::Sum;
  int avgDivisor = 1;  ///< what a finishing Avg divides by
  int tag = 0;
  std::chrono::milliseconds timeout{30000};
  std::string name;  ///< "all_reduce across nodes (rail 1)", for messages
  /// "rank 3 (host b, pid 42)" for a PointToPoint rank.
  std::function<std::string(int)> describe;
  /// Why the world lost a rank (the first it lost), or empty: polled while waiting, and any loss ends the wait (a
  /// collective of the world cannot finish without the rank, even where this step waits on another).
  std::function<std::string()> lost;
};

/// Runs this process's part of every step of `plan`. `input`, `output` and `scratch` map the plan's buffers of
/// rank `run.me`. Throws Error(Timeout) naming every peer whose message did not come within the timeout (which
/// restarts at each step), Error(RemoteError) for a lost peer or a failed transfer, naming the step and the peer;
/// after an error the requests in flight are abandoned (their memory may still be used by the transport).
void runMemberPlan(const coll::Plan& plan, const MemberRun& run, const BufferMap& input, const BufferMap& output,
                   const BufferMap& scratch, LocalMemory& memory);

}  // namespace peerlink::net
