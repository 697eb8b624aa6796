// The collectives' choice for one call from the settings and the topology (choice_settings.hpp).
#include "coll/choice_settings.hpp"

#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

ChoiceSettings choiceSettingsFrom(const Params& params) {
  ChoiceSettings settings;
  settings.forced = parseAlgorithm(params.getString("PEERLINK_ALGO")).value_or(Algorithm::Auto);
  settings.protocol = parseProtocol(params.getString("PEERLINK_PROTO")).value_or(Protocol::Auto);
  settings.push = parsePushMode(params.getString("PEERLINK_COLL_PUSH")).value_or(PushMode::Auto);
  settings.copyEngine = parseCopyEngineMode(params.getString("PEERLINK_COLL_CE")).value_or(CopyEngineMode::Auto);
  return settings;
}

KernelChoice chooseCallKernel(Collective collective, std::size_t bytes, bool inPlace, const Topology& topology,
                              const std::vector<int>& devices, const ChoiceSettings& settings) {
  const AlgorithmChoice algorithm = chooseAlgorithm(collective, bytes, topology, devices, settings.forced);
  const bool ll128 = ll128Capable(topology, devices);
  const bool ll128Lines = ll128 && (settings.protocol == Protocol::Auto || settings.protocol == Protocol::Ll128);
  const KernelChoice choice = chooseKernel(collective, bytes, inPlace, static_cast<int>(devices.size()),
                                           isNvlinkMesh(topology, devices), algorithm, settings.protocol,
                                           kernels::kCollLlMaxBytes, settings.push, ll128Lines, settings.copyEngine);
  return withLineFormat(choice, collective, bytes, static_cast<int>(devices.size()), settings.protocol, ll128);
}

const char* kernelName(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::Ll: return "ll";
    case Kernel::DirectOneShot: return "one_shot_direct";
    case Kernel::TwoShot: return "two_shot";
    case Kernel::ReduceScatter: return "reduce_scatter";
    case Kernel::Copy: return "copy";
    case Kernel::PushReduce: return "push_reduce";
    case Kernel::RingBroadcast: return "ring_broadcast";
    case Kernel::SplitTwoShot: return "split_two_shot";
    case Kernel::RingReduce: return "ring_reduce";
    case Kernel::RingAllReduce: return "ring_all_reduce";
    case Kernel::RingReduceScatter: return "ring_reduce_scatter";
    case Kernel::Ll128: return "ll128";
    case Kernel::CeCopy: return "ce_copy";
    case Kernel::CeTwoShot: return "ce_two_shot";
    case Kernel::CeRingAllReduce: return "ce_ring_all_reduce";
  }
  return "?";
}

}  // namespace peerlink::coll
