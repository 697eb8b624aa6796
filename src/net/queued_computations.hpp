// The copies and reductions a queued call across nodes asks of the GPU (net/queued_call.cc). At the call, the caller
// queues on the copy stream one kernel per computation its pieces' plans will make (planDemand), each behind a wait
// for its ticket; the transport's thread, running a piece's plan, writes each computation's arguments into a ring of
// pinned host memory and then its ticket to the asked word; the stream runs the kernel on them and writes the ticket
// to the computed word, which the thread polls before it sends the result on. The thread makes no CUDA call. Tickets
// number a world's queued computations in the order its thread asks them.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/plan_reduce.cuh"
#include "net/plan_runner.hpp"

namespace peerlink::net {

/// Ring slots: a computation's arguments are rewritten kAskedRing tickets later. A plan asks at most one step's
/// computations ahead of those computed (MemberPlan ends a step once its work is done); with two pieces in flight,
/// the later one's first step may ask before any of the earlier one's ran, so a call may be queued so only where a
/// piece's computations and one step's more fit the ring (queuedFits; the first piece is the largest). A later
/// piece's step waits for the earlier piece's computations too, within its own deadline.
constexpr std::size_t kAskedRing = 64;

/// In pinned host memory the GPU maps (AsyncFlags).
struct AskedComputations {
  struct alignas(64) Word {
    std::atomic<std::uint64_t> value{0};
  };
  Word asked;     ///< the transport's: the last ticket whose arguments lie in the ring
  Word computed;  ///< the device's: the last ticket whose kernel ended
  kernels::PlanReduceArgs ring[kAskedRing];
};

/// The kernel the device queues for each ticket of a call: its element type and operation, and its grid.
struct AskedKernel {
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int blocks = 1;
};
/// A call's kernel for computations of at most `mostElements` elements (the staged path's grid over pinned memory).
AskedKernel askedKernel(DataType type, ReduceOp op, std::size_t mostElements);

/// Whether ticket `value` is at or past `ticket`, as a stream's wait compares them (cyclically: the signed
/// difference at least 0).
inline bool cyclicAtLeast(std::uint64_t value, std::uint64_t ticket) {
  return static_cast<std::int64_t>(value - ticket) >= 0;
}

/// The transport thread's side of a world's computations (one per world; only that thread uses it). Pieces in flight
/// at once ask their tickets in any order; the asked word advances only over tickets whose arguments are all
/// written, since a stream's wait for a ticket lets every earlier one run.
class AskedTickets {
 public:
  explicit AskedTickets(AskedComputations& words);
  /// Writes ticket `ticket`'s arguments into the ring and advances the asked word as far as it may.
  /// Error(Internal) where the ring slot's last ticket has not run.
  void ask(std::uint64_t ticket, const kernels::PlanReduceArgs& args);
  /// Whether the computation of `ticket` ran.
  bool computed(std::uint64_t ticket) const {
    return cyclicAtLeast(words_.computed.value.load(std::memory_order_acquire), ticket);
  }
  /// Asks every ticket up to `last` not yet asked as a computation of nothing (after a call failed: the stream's
  /// waits for them end, and their kernels do nothing). Computations asked but not yet run may then do nothing too
  /// (their ring slots cleared): only for a broken world.
  void skipTo(std::uint64_t last);

 private:
  AskedComputations& words_;
  std::uint64_t published_;                          // the asked word
  std::array<std::uint64_t, kAskedRing> written_{};  // the ticket whose arguments each ring slot holds
};

/// A piece's memory on the transport's thread: its computations asked of the device, tickets `first` to
/// `first + count - 1`, each run by `kernel` (a copy is a reduction of one source); its temporaries in `landing`
/// (`landingBytes` of the piece's slot); a copy onto itself asked as nothing. Error(Internal) for more computations
/// than it was given, another type or
/// operation than the kernel's, more sources than it takes, or more temporaries than the landing holds (planDemand
/// said otherwise).
class AskedMemory final : public LocalMemory {
 public:
  /// `abandoned`: set where the caller could not queue the call's side (its computations may never run): a wait
  /// for one then fails at once (Error(CudaError)) instead of at the deadline.
  AskedMemory(AskedTickets& asked, const AskedKernel& kernel, std::uint64_t first, std::size_t count,
              std::byte* landing, std::size_t landingBytes, const std::atomic<bool>* abandoned = nullptr);
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override;
  void* temporary(std::size_t lane, std::size_t bytes) override;
  void release(std::size_t lane) override;
  void* persistent(std::size_t bytes) override;
  bool queues() const override { return true; }
  std::uint64_t mark() override { return next_ - 1; }
  bool reached(std::uint64_t marker) override;
  /// Tickets given that were not asked.
  std::size_t unasked() const { return static_cast<std::size_t>(end_ - next_); }

 private:
  void ask(const kernels::PlanReduceArgs& args);
  AskedTickets& asked_;
  AskedKernel kernel_;
  std::uint64_t first_;
  std::uint64_t next_;
  std::uint64_t end_;
  std::byte* landing_;
  std::size_t landingBytes_;
  const std::atomic<bool>* abandoned_;
  std::size_t used_ = 0;
};

}  // namespace peerlink::net
