// What a collective call runs, as one pure function of the call, the topology and the settings that steer
// the choice (PEERLINK_ALGO, PEERLINK_PROTO, PEERLINK_COLL_PUSH, PEERLINK_COLL_CE): the communicator asks it at every
// call, `peerlink coll --explain` for a sweep of sizes without a GPU, so both say the same.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/algorithm_select.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

struct ChoiceSettings {
  Algorithm forced = Algorithm::Auto;                ///< PEERLINK_ALGO
  Protocol protocol = Protocol::Auto;                ///< PEERLINK_PROTO
  PushMode push = PushMode::Auto;                    ///< PEERLINK_COLL_PUSH
  CopyEngineMode copyEngine = CopyEngineMode::Auto;  ///< PEERLINK_COLL_CE
};

/// The settings as `params` hold them (the registry has checked their values; anything else reads as AUTO).
ChoiceSettings choiceSettingsFrom(const Params& params);

/// The kernel a call of `collective` with `bytes` per rank (chooseKernel's meaning) runs over the GPUs
/// `devices` of `topology`: chooseAlgorithm, then chooseKernel with the LL scratch the communicator has,
/// then the LL line format (withLineFormat).
/// Assumes what the pipelined kernels need of the buffers (16-byte alignment); where a call's buffers
/// do not give it, the communicator runs a direct kernel instead and logs why.
KernelChoice chooseCallKernel(Collective collective, std::size_t bytes, bool inPlace, const Topology& topology,
                              const std::vector<int>& devices, const ChoiceSettings& settings);

/// "ll", "one_shot_direct", "two_shot", "reduce_scatter", "copy", "push_reduce", "ring_broadcast",
/// "split_two_shot", "ring_reduce", "ring_all_reduce", "ring_reduce_scatter", "ll128", "ce_copy", "ce_two_shot",
/// "ce_ring_all_reduce".
const char* kernelName(Kernel kernel) noexcept;

}  // namespace peerlink::coll
