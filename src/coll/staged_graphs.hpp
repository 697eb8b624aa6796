// Staged calls replayed from CUDA graphs. An eager staged call (comm_launch_staged.hpp) is a few dozen stream
// operations: per chunk its copies, its kernel, and the events between the caller's stream and the copy stream. On
// 2x H200 a 256 MiB all-reduce, all-to-all and broadcast took 7-13 % longer issued one by one than replayed from a
// graph of the same operations (bench/results/2026-11-29-h200x2-all-to-all-own-parts/, call z7). A call whose shape
// and buffers came before is therefore captured once, into a graph per local rank, and replayed from then on: one
// launch per rank.
//
// The replay is the call: the kernels find the call's number and their peers' in device memory, as in any graph an
// application captures, so replays and eager calls mix in any order. A call seen for the first time runs eagerly
// (one that never comes back costs no capture); a capture that fails turns the graphs off for the communicator.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// What a staged call's captured operations depend on that may differ between calls; the world, its windows and
/// every setting are the communicator's. By local rank: the caller's buffers.
struct StagedCallKey {
  Collective collective = Collective::AllReduce;
  std::size_t count = 0;
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  std::vector<const void*> sends;
  std::vector<void*> recvs;
  bool operator==(const StagedCallKey& other) const;
};

/// Which calls replay a graph, which capture one, which run eagerly: a call replays the graph of its key where one
/// is kept; a call whose key came among the latest kRecentCalls before captures one into a free slot, or into the
/// least recently used one where that graph has not been replayed for kColdAfter calls; any other runs eagerly. So
/// calls cycling over more buffers than there are slots (a model's many layers) keep the graphs they have and run
/// the rest eagerly, rather than capturing again and again. Pure: the GPU side keeps a graph per slot.
///
/// A training step cycles over its gradient buckets: PyTorch DDP's 25 MiB buckets of a 77 M-parameter model are 11
/// calls a step, of which 8 slots left 2-3 eager every step (the profiled timeline of bench/results/
/// 2026-11-30-h200x2-rooted-sharing/, s6); with 64 every one replays (s7). 64 slots hold the buckets of models up to
/// some 400 M parameters (1.6 GB of float gradients); a graph is a few dozen nodes per rank.
class StagedGraphPolicy {
 public:
  static constexpr std::size_t kSlots = 64;
  static constexpr std::size_t kRecentCalls = 2 * kSlots;
  static constexpr std::uint64_t kColdAfter = 2 * kRecentCalls;
  // A cycle of calls as long as the slots is captured whole (each key comes back among the recent ones), and a graph
  // replayed once a cycle the recent calls can hold never counts as cold.
  static_assert(kRecentCalls >= kSlots && kColdAfter >= kRecentCalls, "cycles the slots hold must stay captured");

  enum class Action { Eager, Capture, Replay };
  struct Decision {
    Action action = Action::Eager;
    std::size_t slot = 0;  ///< Capture: the slot the graph goes to (its old graph, if any, is dropped); Replay: where
  };

  Decision decide(const StagedCallKey& key);
  /// The capture into `slot` failed: it holds nothing.
  void forget(std::size_t slot);

 private:
  std::array<std::optional<StagedCallKey>, kSlots> slots_;
  std::array<std::uint64_t, kSlots> lastUse_ = {};
  std::vector<StagedCallKey> recent_;  ///< the latest eager calls' keys, oldest first
  std::uint64_t clock_ = 0;
};

/// An instantiated graph, destroyed with its owner (a launch still running finishes first: CUDA frees it then).
class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(cudaGraphExec_t exec) : exec_(exec) {}
  ~GraphExec();
  GraphExec(GraphExec&& other) noexcept;
  GraphExec& operator=(GraphExec&& other) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const noexcept { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

/// A communicator's staged graphs: the policy, and per slot a graph per local rank (by local rank's index).
struct StagedGraphs {
  StagedGraphPolicy policy;
  std::array<std::vector<GraphExec>, StagedGraphPolicy::kSlots> graphs;
  bool off = false;  ///< a capture failed: every call runs eagerly
  std::uint64_t captures = 0;
  std::uint64_t replays = 0;
};

}  // namespace peerlink::coll
