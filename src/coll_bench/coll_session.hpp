// The GPU side of `peerlink coll` (coll_bench.hpp): streams, buffers, peerlink's communicator and NCCL's
// communicators for one run, and one measurement at a time (warm-up, timed iterations, the checked run).
#pragma once

#include <memory>
#include <string>

#include "coll_bench/coll_bench.hpp"
#include "coll_bench/coll_world.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

class CollSession {
 public:
  /// Sets up everything the run's sizes need for this process's ranks of `world` (which outlives the session)
  /// and records in `run` every rank's device, NCCL's status and which configurations are available (with the
  /// reason for those that are not). Throws Error(InvalidUsage) for a root beyond the ranks.
  CollSession(const Params& params, const CollBenchOptions& options, const CollWorld& world, CollRun& run);
  ~CollSession();
  CollSession(const CollSession&) = delete;
  CollSession& operator=(const CollSession&) = delete;

  /// Communicator::describeChoice for a call of `bytesPerRank` (its count argument in bytes, as the call
  /// passes it: reduce-scatter its block, all-to-all one peer's part); empty without peerlink.
  std::string peerlinkChoice(std::size_t bytesPerRank) const;

  /// One configuration at one size and placement: the checked run (options.check), then warm-up and the
  /// timed iterations. A failure is recorded in the result, except Error(Timeout), which is thrown: a
  /// kernel that does not finish leaves nothing else runnable.
  CollMeasurement measure(CollConfig config, Placement placement, const CollSizing& sizing);

  /// nccl-tests' warm-up before its sweep: options.warmup iterations of every available configuration
  /// out of place at `sizing`, untimed and unchecked (the sweep runs it at its largest and smallest size).
  /// The first cells of a sweep are then timed like the others, not as the process's first collectives
  /// (a sweep's first cell, an eager 8-byte all-reduce, took 12.8 us on 4x H200 where the next took 7.7-8.4).
  /// A configuration that fails here is left to measure() to report; Error(Timeout) is thrown as there.
  void warmUp(const CollSizing& sizing);

  /// After a timeout: leaks every resource instead of freeing it (freeing would wait for the stuck work).
  void abandon() noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace peerlink::coll
