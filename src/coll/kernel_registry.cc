// The collectives' kernels, one row each (collective_choice.hpp's KernelInfo): what each serves, how its data
// moves, what it needs of a call and what runs instead where that is unmet. Adding a kernel: a row here, the
// rule that picks it (choice_kernel.cc), its device code (src/kernels/) and its launcher (comm_launch*.cc).
#include "coll/choice_rules.hpp"
#include "coll/partition.hpp"
#include "kernels/coll_kernels.cuh"

namespace peerlink {
namespace {

using namespace kernels;

constexpr unsigned kAllReduce = collectiveBit(Collective::AllReduce);
constexpr unsigned kBroadcast = collectiveBit(Collective::Broadcast);
constexpr unsigned kReduce = collectiveBit(Collective::Reduce);
constexpr unsigned kAllGather = collectiveBit(Collective::AllGather);
constexpr unsigned kReduceScatter = collectiveBit(Collective::ReduceScatter);
constexpr unsigned kAllToAll = collectiveBit(Collective::AllToAll);
constexpr unsigned kSendRecv = collectiveBit(Collective::SendRecv);
constexpr unsigned kEveryCollectiveButSendRecv =
    kAllReduce | kBroadcast | kReduce | kAllGather | kReduceScatter | kAllToAll;

// The rounds of the pipelined kernels, on the grids and chunks their launchers give them (comm_launch_large.cc).
bool ringBroadcastRoundsFit(std::size_t bytes, int, const ChoiceResources& r) {
  return collRoundsFit(bytes, collRingBroadcastBlocks(bytes, r.maxBlocks, r.ringChunkBytes),
                       collRingBroadcastChunkBytes(bytes, r.maxBlocks, r.ringChunkBytes));
}

bool ringReduceRoundsFit(std::size_t bytes, int, const ChoiceResources& r) {
  return collRingReduceRoundsFit(bytes,
                                 collRingReduceChunkBytes(bytes, r.maxBlocks, r.ringChunkBytes, r.ringReduceBlocks));
}

// n chains side by side: the longest chain (segment 0, partitionRange's, in bytes at 16-byte boundaries) sets
// the grids; the all-reduce's gather is checked too, whether its ring broadcasts or copy engines run it.
bool ringAllReduceRoundsFit(std::size_t bytes, int nranks, const ChoiceResources& r) {
  const std::size_t longest = coll::partitionRange(bytes, nranks, 0, 16).count;
  const CollRingChainsShape shape = collRingChainsShape(longest, nranks, r.maxBlocks, r.ringChunkBytes);
  return collRingReduceRoundsFit(longest, shape.reduceChunk) &&
         collRoundsFit(longest, shape.gatherBlocks / nranks, shape.gatherChunk);
}

bool ringReduceScatterRoundsFit(std::size_t bytes, int nranks, const ChoiceResources& r) {
  return collRingReduceRoundsFit(bytes, collRingChainsShape(bytes, nranks, r.maxBlocks, r.ringChunkBytes).reduceChunk);
}

// Kernel, name, device code, collectives served, protocol, engine, data flow, needs, rounds to fit, what runs
// instead where a need is unmet (per collective), what it does.
// clang-format off
constexpr std::array<KernelInfo, kKernelCount> kRows = {{
    {Kernel::LlOneShot, "ll", "coll_ll.cu", kEveryCollectiveButSendRecv, Protocol::Ll, Engine::Sm,
     DataFlow::ThroughStages, kNeedsNothing, nullptr, {},
     "every rank stores its message, a flag in every 8 bytes, into each peer's LL scratch; no barrier"},
    {Kernel::Ll128OneShot, "ll128", "coll_ll128.cu", kEveryCollectiveButSendRecv, Protocol::Ll128, Engine::Sm,
     DataFlow::ThroughStages, kNeedsNothing, nullptr, {},
     "the LL exchange in 128-byte lines of 120 payload bytes (NVLink of compute capability 9.0+)"},
    {Kernel::LlPairs, "p2p_ll", "coll_p2p_ll.cu", kSendRecv, Protocol::Ll, Engine::Sm, DataFlow::ThroughStages,
     kNeedsNothing, nullptr, {},
     "each sender stores its messages in LL lines into its slot at the receiver, no barrier (the copy kernel "
     "where a group's messages outgrow the slots)"},
    {Kernel::OneShotReduce, "one_shot_reduce", "coll_reduce.cu", kAllReduce | kReduce, Protocol::Simple, Engine::Sm,
     DataFlow::ReadsPeers, kNeedsNothing, nullptr, {},
     "between barriers, every rank (reduce: the root) reads every input and reduces the whole buffer"},
    {Kernel::TwoShot, "two_shot", "coll_reduce.cu", kAllReduce | kReduce, Protocol::Simple, Engine::Sm,
     DataFlow::ReadsAndStores, kNeedsNothing, nullptr, {},
     "between barriers, each rank reads its shard of every input, reduces it and stores it into every output "
     "(reduce: the root's)"},
    {Kernel::ShardReduce, "shard_reduce", "coll_reduce.cu", kReduceScatter, Protocol::Simple, Engine::Sm,
     DataFlow::ReadsPeers, kNeedsNothing, nullptr, {},
     "between barriers, each rank reads its own block of every input and reduces it into its output"},
    {Kernel::Copy, "copy", "coll_copy.cu", kBroadcast | kAllGather | kAllToAll | kSendRecv, Protocol::Simple,
     Engine::Sm, DataFlow::StoresIntoPeers, kNeedsNothing, nullptr, {},
     "copies between barriers: each rank pushes its data (broadcast one-shot and send/recv: the receivers pull)"},
    {Kernel::PushReduce, "push_reduce", "coll_push_phased.cu", kAllReduce | kReduceScatter, Protocol::Simple,
     Engine::Sm, DataFlow::StoresIntoPeers, kNeedsPushStage | kNeedsAligned, nullptr,
     {{kAllReduce, Algorithm::TwoShot, Kernel::TwoShot}, {kReduceScatter, Algorithm::OneShot, Kernel::ShardReduce}},
     "each rank stores its pieces into the owners' stages, which reduce them (all-reduce: and store the result "
     "into every output)"},
    {Kernel::RingBroadcast, "ring_broadcast", "coll_ring_broadcast.cu", kBroadcast, Protocol::Simple, Engine::Sm,
     DataFlow::StoresIntoPeers, kNeedsAligned, ringBroadcastRoundsFit,
     {{kBroadcast, Algorithm::OneShot, Kernel::Copy}, {}},
     "each rank stores every chunk into the next rank's output as it arrives, a flag per chunk"},
    {Kernel::SplitTwoShot, "split_two_shot", "coll_reduce.cu, coll_copy.cu", kAllReduce, Protocol::Simple, Engine::Sm,
     DataFlow::ReadsAndStores, kNeedsNothing, nullptr, {},
     "two kernels: each rank reads and reduces its shard into its own output, then stores it into every peer's"},
    {Kernel::RingReduce, "ring_reduce", "coll_ring_reduce.cu", kReduce, Protocol::Simple, Engine::Sm,
     DataFlow::ThroughStages, kNeedsAligned, ringReduceRoundsFit, {{kReduce, Algorithm::TwoShot, Kernel::TwoShot}, {}},
     "each rank combines every chunk with its input and stores it into the next rank's stage, the root into its "
     "output"},
    {Kernel::RingAllReduce, "ring_all_reduce", "coll_ring_reduce.cu, coll_ring_broadcast.cu", kAllReduce,
     Protocol::Simple, Engine::Sm, DataFlow::StoresIntoPeers, kNeedsAligned, ringAllReduceRoundsFit,
     {{kAllReduce, Algorithm::TwoShot, Kernel::TwoShot}, {}},
     "two kernels: n ring reduces side by side, segment j ending at rank j, then n ring broadcasts from there"},
    {Kernel::RingReduceScatter, "ring_reduce_scatter", "coll_ring_reduce.cu", kReduceScatter, Protocol::Simple,
     Engine::Sm, DataFlow::ThroughStages, kNeedsAligned, ringReduceScatterRoundsFit,
     {{kReduceScatter, Algorithm::OneShot, Kernel::ShardReduce}, {}},
     "n ring reduces side by side, block j ending at rank j"},
    {Kernel::CeCopy, "ce_copy", "coll_copy.cu (barriers)", kAllGather | kAllToAll | kSendRecv, Protocol::Simple,
     Engine::CopyEngine, DataFlow::StoresIntoPeers, kNeedsNothing, nullptr, {},
     "each rank's copy engine pushes its data to its peers, one copy after another, between barrier kernels"},
    {Kernel::CeTwoShot, "ce_two_shot", "coll_reduce.cu, coll_copy.cu (barriers)", kAllReduce, Protocol::Simple,
     Engine::CopyEngine, DataFlow::ReadsAndStores, kNeedsNothing, nullptr, {},
     "split two-shot's reduce-scatter kernel, then each rank's copy engine pushes its shard to its peers"},
    {Kernel::CeRingAllReduce, "ce_ring_all_reduce", "coll_ring_reduce.cu, coll_copy.cu (barriers)", kAllReduce,
     Protocol::Simple, Engine::CopyEngine, DataFlow::StoresIntoPeers, kNeedsAligned, ringAllReduceRoundsFit,
     {{kAllReduce, Algorithm::TwoShot, Kernel::CeTwoShot}, {}},
     "the ring all-reduce's ring reduces, then each rank's copy engine pushes its segment to its peers"},
}};
// clang-format on

}  // namespace

const std::array<KernelInfo, kKernelCount>& kernelRegistry() {
  return kRows;
}

const KernelInfo& kernelInfo(Kernel kernel) {
  return kRows[static_cast<std::size_t>(kernel)];
}

const char* kernelName(Kernel kernel) noexcept {
  const auto index = static_cast<std::size_t>(kernel);
  return index < kRows.size() ? kRows[index].name : "?";
}

}  // namespace peerlink
