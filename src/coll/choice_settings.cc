// The collectives' choice for one call from the settings and the topology (choice_settings.hpp).
#include "coll/choice_settings.hpp"

#include <cctype>

#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {
namespace {

std::string upperCase(const std::string& text) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// The settings spelled "AUTO", "1" and "0" (PEERLINK_COLL_PUSH, PEERLINK_COLL_CE): Mode::Auto, `one`, `zero`.
template <typename Mode>
std::optional<Mode> parseAutoOneZero(const std::string& name, Mode one, Mode zero) {
  const std::string upper = upperCase(name);
  if (upper == "AUTO") return Mode::Auto;
  if (upper == "1") return one;
  if (upper == "0") return zero;
  return std::nullopt;
}

template <typename Mode>
const char* autoOneZeroName(Mode mode, Mode one) noexcept {
  if (mode == Mode::Auto) return "AUTO";
  return mode == one ? "1" : "0";
}

}  // namespace

// The settings' spellings (declared in algorithm_select.hpp beside the enums they name).
std::optional<CopyEngineMode> parseCopyEngineMode(const std::string& name) {
  return parseAutoOneZero(name, CopyEngineMode::On, CopyEngineMode::Off);
}

const char* copyEngineModeName(CopyEngineMode mode) noexcept {
  return autoOneZeroName(mode, CopyEngineMode::On);
}

std::optional<PushMode> parsePushMode(const std::string& name) {
  return parseAutoOneZero(name, PushMode::Push, PushMode::Pull);
}

const char* pushModeName(PushMode push) noexcept {
  return autoOneZeroName(push, PushMode::Push);
}

const char* protocolName(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::Auto: return "AUTO";
    case Protocol::Ll: return "LL";
    case Protocol::Ll128: return "LL128";
    case Protocol::Simple: return "SIMPLE";
  }
  return "?";
}

std::optional<Protocol> parseProtocol(const std::string& name) {
  const std::string upper = upperCase(name);
  if (upper == "AUTO") return Protocol::Auto;
  if (upper == "LL") return Protocol::Ll;
  if (upper == "LL128") return Protocol::Ll128;
  if (upper == "SIMPLE") return Protocol::Simple;
  return std::nullopt;
}

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
