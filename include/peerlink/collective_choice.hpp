// Which kernel a collective call runs, and why: one pure function of facts every rank of a call agrees on --
// the call's shape, the fabric between the ranks' GPUs, the communicator's resources and the settings. The
// communicator asks it at every call and `peerlink coll --explain` for a sweep of sizes without a GPU; with one
// process per GPU every rank will ask it alone, so it reads nothing but its arguments (no environment, no
// device), and ranks that agree on the facts choose the same kernel.
//
// The choice is the kernel that really runs: the needs a kernel has of the call's buffers and of the
// communicator (16-byte alignment, flag rounds that fit, push stages) are rules of the same function, and a
// kernel whose need is unmet gives way to the one its registry row names, with the reason.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/collectives.hpp"
#include "peerlink/params.hpp"
#include "peerlink/route.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// A fact about a call that one rank may not know for all: Unknown chooses what is safe either way.
enum class Fact { No, Yes, Unknown };

/// The wire protocol (PEERLINK_PROTO): LL packs a flag into every 8 bytes of data, so a receiver waits for the
/// data itself (one step, no barrier; twice the bytes on the wire); LL128 does the same with one 8-byte flag
/// per 128-byte line (NVLink of compute capability 9.0+ only); Simple moves plain data between barriers. A
/// choice's protocol is never Auto.
enum class Protocol { Auto, Ll, Ll128, Simple };

/// How large two-shot reductions move data (PEERLINK_COLL_PUSH): Push stores every byte to the rank that
/// needs it (into its stage, then the results into the outputs); Pull reads peers' inputs directly.
enum class PushMode { Auto, Push, Pull };

/// Where large copies run (PEERLINK_COLL_CE): On on the copy engines wherever a kernel has that form, Off in
/// SM kernels, Auto on the copy engines from the sizes where they were measured faster on an NVLink mesh.
enum class CopyEngineMode { Auto, On, Off };

/// How a kernel's data crosses between GPUs.
enum class DataFlow {
  ReadsPeers,       ///< it loads from peers' buffers and stores only into its own
  ReadsAndStores,   ///< it loads peers' inputs and stores results into peers' outputs
  StoresIntoPeers,  ///< it stores into peers' user buffers and loads only its own
  ThroughStages,    ///< it stores into peers' library buffers (LL scratch, stages); user buffers stay local
};

/// The collectives' kernels, each a row of the registry (kernelInfo). Names say what a kernel does; the
/// collectives it serves are in its row.
enum class Kernel {
  LlOneShot,      ///< every rank stores its message in LL lines into every peer's scratch (coll_ll.cu)
  Ll128OneShot,   ///< the same in 128-byte lines of 120 payload bytes (coll_ll128.cu)
  LlPairs,        ///< send/recv groups: each sender's messages in LL lines into its receivers' slots (coll_p2p_ll.cu)
  OneShotReduce,  ///< every rank (reduce: the root) reads every input and reduces the whole buffer (coll_reduce.cu)
  TwoShot,        ///< each rank reads its shard of every input, reduces it and stores it into every output
  ShardReduce,    ///< each rank reads its own block of every input and reduces it into its output
  Copy,           ///< copies between barriers, pushed or pulled (coll_copy.cu)
  PushReduce,     ///< each rank stores its pieces into the owners' stages, which reduce them (coll_push_phased.cu)
  RingBroadcast,  ///< a chain of stores from the root along the ranks (coll_ring_broadcast.cu)
  SplitTwoShot,   ///< TwoShot as two kernels: a ShardReduce-style reduce-scatter, then a pushing all-gather
  RingReduce,     ///< a chain of stores towards the root through each rank's stage (coll_ring_reduce.cu)
  RingAllReduce,  ///< n ring reduces side by side into each rank's segment, then n ring broadcasts from it
  RingReduceScatter,  ///< n ring reduces side by side, block j ending at rank j
  CeCopy,             ///< copy-engine pushes between barrier kernels
  CeTwoShot,          ///< SplitTwoShot's reduce-scatter kernel, then copy-engine pushes of each rank's shard
  CeRingAllReduce,    ///< RingAllReduce's ring reduces, then copy-engine pushes of each rank's segment
};
constexpr int kKernelCount = 16;

/// What a kernel needs of a call's buffers and of the communicator (a bit set, KernelInfo::needs).
enum KernelNeed : unsigned {
  kNeedsNothing = 0,
  /// Every buffer (reduce-scatter: every block) on a 16-byte boundary: the kernel moves 16-byte units.
  kNeedsAligned = 1u << 0,
  /// The communicator's push stages (ChoiceResources::pushStages).
  kNeedsPushStage = 1u << 1,
};

struct ChoiceResources;

/// What runs instead of a kernel whose need is unmet, for the collectives in `collectives` (a bit per
/// Collective).
struct KernelFallback {
  unsigned collectives = 0;
  Algorithm algorithm = Algorithm::OneShot;
  Kernel kernel = Kernel::Copy;
};

/// One row of the kernel registry.
struct KernelInfo {
  Kernel kernel = Kernel::Copy;
  const char* name = "";        ///< as logs, --explain and JSON print it: "ll", "two_shot", "ring_broadcast", ...
  const char* deviceCode = "";  ///< the file of src/kernels/ its device code lives in
  unsigned collectives = 0;     ///< the collectives it serves (a bit per Collective)
  Protocol protocol = Protocol::Simple;
  Engine engine = Engine::Sm;
  DataFlow flow = DataFlow::ReadsPeers;  ///< Copy: per call (pushed, or pulled by broadcast one-shot and send/recv)
  unsigned needs = kNeedsNothing;        ///< KernelNeed bits
  /// A pipelined kernel: whether a call of `bytes` over `nranks` ranks leaves each block fewer rounds than its
  /// flags can number (kernels::collRoundsFit), on the grid and chunks the communicator's resources give it; a
  /// kernel whose rounds wrap into the next call's flag values must not run. Null: no rounds to fit.
  bool (*roundsFit)(std::size_t bytes, int nranks, const ChoiceResources& resources) = nullptr;
  KernelFallback fallbacks[2] = {};  ///< where a need is unmet: the first entry that serves the collective
  const char* summary = "";          ///< one line: what it does
};

/// The bit of `collective` in KernelInfo::collectives and KernelFallback::collectives.
constexpr unsigned collectiveBit(Collective collective) {
  return 1u << static_cast<unsigned>(collective);
}

/// Every kernel's row, in Kernel's order.
const std::array<KernelInfo, kKernelCount>& kernelRegistry();
const KernelInfo& kernelInfo(Kernel kernel);
/// KernelInfo::name.
const char* kernelName(Kernel kernel) noexcept;

/// One call as every rank sees it.
struct CallShape {
  Collective collective = Collective::AllReduce;
  /// Every message's size: the per-rank input of all-reduce, broadcast, reduce and all-gather, the per-peer
  /// block of all-to-all, the per-rank output of reduce-scatter; a send/recv group's most one rank sends.
  std::size_t bytes = 0;
  int nranks = 1;
  Fact inPlace = Fact::No;       ///< some rank calls it in place (Unknown: some rank may)
  Fact aligned = Fact::Unknown;  ///< every buffer the call touches starts on a 16-byte boundary (Unknown: assume not)
};

/// The links between the ranks' GPUs, as the rules need them (fabricOf).
struct CollectiveFabric {
  bool nvlinkMesh = false;    ///< every ordered pair talks over NVLink, directly or through NVSwitch
  std::string detail;         ///< for reasons: "NVLink between every pair", or the first pair that is not
  bool ll128Capable = false;  ///< an NVLink mesh of compute capability 9.0+ GPUs: LL128 lines arrive whole
};

/// What the communicator has for its kernels.
struct ChoiceResources {
  bool pushStages = false;         ///< every rank has push stages (pushStagesFor)
  std::size_t llMaxBytes = 0;      ///< the largest message the LL scratch holds (kernels::kCollLlMaxBytes)
  int maxBlocks = 1;               ///< the grid cap (collGridCap)
  std::size_t ringChunkBytes = 0;  ///< PEERLINK_COLL_RING_CHUNK: the rings' largest chunk, 0 each kernel's own
  int ringReduceBlocks = 0;        ///< PEERLINK_COLL_RING_REDUCE_BLOCKS: the reduce chain's grid, 0 its own
};

/// The settings that steer the choice.
struct ChoiceSettings {
  Algorithm forced = Algorithm::Auto;                ///< PEERLINK_ALGO
  Protocol protocol = Protocol::Auto;                ///< PEERLINK_PROTO
  PushMode push = PushMode::Auto;                    ///< PEERLINK_COLL_PUSH
  CopyEngineMode copyEngine = CopyEngineMode::Auto;  ///< PEERLINK_COLL_CE
};

/// What a call runs.
struct CollectiveChoice {
  Algorithm algorithm = Algorithm::OneShot;  ///< what the kernel is, in the vocabulary of the plans
  Kernel kernel = Kernel::Copy;              ///< the kernel that runs
  /// The kernel the rules chose before its needs were checked: where it differs from `kernel`, a need was
  /// unmet and the last reason says which.
  Kernel wanted = Kernel::Copy;
  Protocol protocol = Protocol::Simple;
  Engine engine = Engine::Sm;
  DataFlow flow = DataFlow::ReadsPeers;
  std::vector<std::string> reasons;  ///< one per rule that fired, in order
};

/// The reasons as one line, "; " between them.
std::string reasonText(const CollectiveChoice& choice);

/// Whether the call stores into another rank's memory (pushed copies, two-shot outputs, LL lines, stages): its
/// end barrier then releases this rank's stores and acquires the peers'; where every access to a peer is a
/// load it only says "done reading".
bool storesIntoPeers(const CollectiveChoice& choice);

/// The choice for `call`.
CollectiveChoice chooseCollective(const CallShape& call, const CollectiveFabric& fabric,
                                  const ChoiceResources& resources, const ChoiceSettings& settings);

/// The fabric between the GPUs `devices` (CUDA ordinals, a rank each) of `topology`.
CollectiveFabric fabricOf(const Topology& topology, const std::vector<int>& devices);

/// The settings as `params` hold them (the registry has checked their values).
ChoiceSettings choiceSettingsFrom(const Params& params);

/// Whether a communicator of `nranks` ranks over `fabric` allocates push stages: under PEERLINK_COLL_PUSH=1,
/// and under AUTO on 3+ ranks of an NVLink mesh (where AUTO may push).
bool pushStagesFor(const ChoiceSettings& settings, int nranks, const CollectiveFabric& fabric);

/// The grid cap of a communicator whose rank r runs on GPU `devices[r]` of `smCounts[r]` SMs: the fewest SMs
/// a rank has (ranks on one GPU split its SMs: a kernel waits for its peers' kernels, so all must fit at once),
/// at most kernels::kCollMaxBlocks and `setting` (PEERLINK_COLL_MAX_BLOCKS) where that is not 0.
int collGridCap(const std::vector<int>& devices, const std::vector<int>& smCounts, int setting);

/// What a communicator over the GPUs `devices` of `topology` with `params` has for its kernels (its push
/// stages, LL scratch, and grid cap from the topology's SM counts), for explaining choices without one.
ChoiceResources communicatorResources(const Topology& topology, const std::vector<int>& devices, const Params& params);

/// The settings' spellings as the registry accepts them: "AUTO", "ONESHOT", "TWOSHOT", "RING"; "AUTO", "LL",
/// "LL128", "SIMPLE"; "AUTO", "1", "0".
const char* algorithmSetting(Algorithm algorithm) noexcept;
const char* protocolName(Protocol protocol) noexcept;
const char* pushModeName(PushMode push) noexcept;
const char* copyEngineModeName(CopyEngineMode mode) noexcept;
/// The spellings above back (case-insensitive); nullopt for anything else.
std::optional<Protocol> parseProtocol(const std::string& name);
std::optional<PushMode> parsePushMode(const std::string& name);
std::optional<CopyEngineMode> parseCopyEngineMode(const std::string& name);

/// "reads_peers", "reads_and_stores", "stores_into_peers", "through_stages".
const char* dataFlowName(DataFlow flow) noexcept;

}  // namespace peerlink
