// The collectives' kernel choice as one pure function (peerlink/collective_choice.hpp): the algorithm, the
// kernel and its line format (choice_algorithm.cc, choice_kernel.cc), then the kernel's needs against the
// call's buffers and the communicator's resources (below); and the settings that steer it.
#include "peerlink/collective_choice.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "coll/choice_rules.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink {
namespace coll {
namespace {

// Why `kernel` cannot run `call` (empty: it can): its needs in the order they are checked.
std::string unmetNeed(const KernelInfo& kernel, const CallShape& call, const ChoiceResources& resources) {
  if ((kernel.needs & kNeedsPushStage) != 0 && !resources.pushStages) return "the communicator has no push stage";
  if ((kernel.needs & kNeedsAligned) != 0) {
    const bool blocksAligned = call.collective != Collective::ReduceScatter || call.bytes % 16 == 0;
    if (call.aligned != Fact::Yes || !blocksAligned) return "a buffer or block does not start on a 16-byte boundary";
  }
  if (kernel.roundsFit != nullptr && !kernel.roundsFit(call.bytes, call.nranks, resources)) {
    return "a block would need more than 2^" + std::to_string(kernels::kCollRoundBits) + " rounds";
  }
  return {};
}

const KernelFallback* fallbackFor(const KernelInfo& kernel, Collective collective) {
  for (const KernelFallback& fallback : kernel.fallbacks) {
    if ((fallback.collectives & collectiveBit(collective)) != 0) return &fallback;
  }
  return nullptr;
}

// The flow of `kernel` for a call: its row's, but a copy that the receivers pull (the one-shot broadcast, every
// rank reading the root; send/recv) reads peers, and a reduce-scatter's push reduces into its own output only.
DataFlow flowOf(const KernelChoice& choice, Collective collective) {
  if (choice.kernel == Kernel::Copy &&
      (collective == Collective::SendRecv ||
       (collective == Collective::Broadcast && choice.algorithm != Algorithm::TwoShot))) {
    return DataFlow::ReadsPeers;
  }
  if (choice.kernel == Kernel::PushReduce && collective == Collective::ReduceScatter) return DataFlow::ThroughStages;
  return kernelInfo(choice.kernel).flow;
}

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

KernelChoice withNeedsMet(KernelChoice choice, const CallShape& call, const ChoiceResources& resources) {
  choice.wanted = choice.kernel;
  // A fallback needs nothing the kernel it replaces had (the registry's rows say so); the bound keeps a
  // mistaken row from looping.
  for (int step = 0; step < kKernelCount; ++step) {
    const KernelInfo& info = kernelInfo(choice.kernel);
    const std::string unmet = unmetNeed(info, call, resources);
    const KernelFallback* fallback = fallbackFor(info, call.collective);
    if (unmet.empty() || fallback == nullptr) break;
    const Kernel wanted = choice.wanted;
    choice.replace(
        fallback->algorithm, fallback->kernel,
        std::string(info.name) + " steps aside (" + unmet + "): " + kernelName(fallback->kernel) + " instead");
    choice.wanted = wanted;
  }
  return choice;
}

}  // namespace coll

std::string reasonText(const CollectiveChoice& choice) {
  std::string text;
  for (const std::string& part : choice.reasons) text += (text.empty() ? "" : "; ") + part;
  return text;
}

bool storesIntoPeers(const CollectiveChoice& choice) {
  return choice.flow != DataFlow::ReadsPeers;
}

CollectiveChoice chooseCollective(const CallShape& call, const CollectiveFabric& fabric,
                                  const ChoiceResources& resources, const ChoiceSettings& settings) {
  const coll::AlgorithmChoice algorithm =
      coll::chooseAlgorithm(call.collective, call.bytes, call.nranks, fabric, settings.forced);
  const bool ll128Lines =
      fabric.ll128Capable && (settings.protocol == Protocol::Auto || settings.protocol == Protocol::Ll128);
  coll::KernelChoice draft = coll::kernelForAlgorithm(
      call.collective, call.bytes, call.inPlace != Fact::No, call.nranks, fabric.nvlinkMesh, algorithm,
      settings.protocol, resources.llMaxBytes, settings.push, ll128Lines, settings.copyEngine);
  draft = coll::withLineFormat(std::move(draft), call.collective, call.bytes, call.nranks, settings.protocol,
                               fabric.ll128Capable);
  draft = coll::withNeedsMet(std::move(draft), call, resources);
  CollectiveChoice choice;
  choice.algorithm = draft.algorithm;
  choice.kernel = draft.kernel;
  choice.wanted = draft.wanted;
  const KernelInfo& info = kernelInfo(draft.kernel);
  choice.protocol = info.protocol;
  choice.engine = info.engine;
  choice.flow = coll::flowOf(draft, call.collective);
  choice.reasons = std::move(draft.reasons);
  return choice;
}

ChoiceSettings choiceSettingsFrom(const Params& params) {
  ChoiceSettings settings;
  settings.forced = parseAlgorithm(params.getString("PEERLINK_ALGO")).value_or(Algorithm::Auto);
  settings.protocol = parseProtocol(params.getString("PEERLINK_PROTO")).value_or(Protocol::Auto);
  settings.push = parsePushMode(params.getString("PEERLINK_COLL_PUSH")).value_or(PushMode::Auto);
  settings.copyEngine = parseCopyEngineMode(params.getString("PEERLINK_COLL_CE")).value_or(CopyEngineMode::Auto);
  return settings;
}

bool pushStagesFor(const ChoiceSettings& settings, int nranks, const CollectiveFabric& fabric) {
  return settings.push == PushMode::Push || (settings.push == PushMode::Auto && nranks >= 3 && fabric.nvlinkMesh);
}

int collGridCap(const std::vector<int>& devices, const std::vector<int>& smCounts, int setting) {
  int cap = kernels::kCollMaxBlocks;
  for (std::size_t r = 0; r < devices.size() && r < smCounts.size(); ++r) {
    const auto sharing = std::count(devices.begin(), devices.end(), devices[r]);
    cap = std::min(cap, std::max(1, smCounts[r] / static_cast<int>(sharing)));
  }
  return setting > 0 ? std::min(cap, setting) : cap;
}

ChoiceResources communicatorResources(const Topology& topology, const std::vector<int>& devices, const Params& params) {
  std::vector<int> smCounts;
  for (int device : devices) {
    const auto gpu = std::find_if(topology.gpus.begin(), topology.gpus.end(),
                                  [device](const Gpu& candidate) { return candidate.cudaOrdinal == device; });
    smCounts.push_back(gpu != topology.gpus.end() ? gpu->smCount : kernels::kCollMaxBlocks);
  }
  ChoiceResources resources;
  resources.pushStages =
      pushStagesFor(choiceSettingsFrom(params), static_cast<int>(devices.size()), fabricOf(topology, devices));
  resources.llMaxBytes = kernels::kCollLlMaxBytes;
  resources.maxBlocks = collGridCap(devices, smCounts, static_cast<int>(params.getInt("PEERLINK_COLL_MAX_BLOCKS")));
  resources.ringChunkBytes = static_cast<std::size_t>(params.getInt("PEERLINK_COLL_RING_CHUNK"));
  resources.ringReduceBlocks = static_cast<int>(params.getInt("PEERLINK_COLL_RING_REDUCE_BLOCKS"));
  return resources;
}

const char* algorithmSetting(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::Auto: return "AUTO";
    case Algorithm::OneShot: return "ONESHOT";
    case Algorithm::TwoShot: return "TWOSHOT";
    case Algorithm::Ring: return "RING";
  }
  return "?";
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
  const std::string upper = coll::upperCase(name);
  for (Protocol protocol : {Protocol::Auto, Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
    if (upper == protocolName(protocol)) return protocol;
  }
  return std::nullopt;
}

std::optional<PushMode> parsePushMode(const std::string& name) {
  return coll::parseAutoOneZero(name, PushMode::Push, PushMode::Pull);
}

const char* pushModeName(PushMode push) noexcept {
  return coll::autoOneZeroName(push, PushMode::Push);
}

std::optional<CopyEngineMode> parseCopyEngineMode(const std::string& name) {
  return coll::parseAutoOneZero(name, CopyEngineMode::On, CopyEngineMode::Off);
}

const char* copyEngineModeName(CopyEngineMode mode) noexcept {
  return coll::autoOneZeroName(mode, CopyEngineMode::On);
}

const char* dataFlowName(DataFlow flow) noexcept {
  switch (flow) {
    case DataFlow::ReadsPeers: return "reads_peers";
    case DataFlow::ReadsAndStores: return "reads_and_stores";
    case DataFlow::StoresIntoPeers: return "stores_into_peers";
    case DataFlow::ThroughStages: return "through_stages";
  }
  return "?";
}

}  // namespace peerlink
