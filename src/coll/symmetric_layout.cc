// The arena's regions (symmetric_layout.hpp).
#include "coll/symmetric_layout.hpp"

#include "kernels/coll_kernels.cuh"
#include "kernels/host_ring.cuh"

namespace peerlink::coll {
namespace {

std::size_t alignUp(std::size_t bytes) {
  return (bytes + kSymmetricAlignment - 1) / kSymmetricAlignment * kSymmetricAlignment;
}

}  // namespace

SymmetricLayout symmetricLayout(int nranks, bool pushStages, std::size_t windowBytes, bool ringArea) {
  const auto n = static_cast<std::size_t>(nranks > 0 ? nranks : 1);
  SymmetricLayout layout;
  std::size_t at = 0;
  const auto place = [&at](std::size_t bytes) {
    const std::size_t offset = at;
    at = alignUp(at + bytes);
    return offset;
  };
  // What must start zeroed comes first, in one range.
  layout.flags = place(kernels::kCollFlagBytes);
  layout.scratch = place(2 * n * kernels::kCollLlSlotBytes);
  // Apart from LL's: an LL receiver must never find LL128 payload where it expects its flags.
  layout.ll128Scratch = place(2 * n * kernels::kCollLl128SlotBytes);
  // Apart from the collectives' too: a pair's sets and the collectives are numbered apart, so their lines in
  // one slot could meet.
  layout.p2pScratch = place(2 * n * kernels::kCollP2pLlSlotBytes);
  layout.zeroedBytes = at;
  // The arena ring's area last in that range: its words zeroed, its slots (guarded by the words) after the range.
  layout.hasRingArea = windowBytes > 0 && ringArea;
  if (layout.hasRingArea) {
    layout.ringArea = place(kernels::kArenaRingAreaBytes);
    layout.zeroedBytes = layout.ringArea + kernels::kHostRingWordsBytes;
  }
  // Guarded by flags: never read before a peer wrote them.
  layout.hasRingStage = n > 1;
  if (layout.hasRingStage) layout.ringStage = place(kernels::kCollRingStageBytes);
  layout.hasStage = pushStages;
  if (pushStages) layout.stage = place(n * kernels::kCollPushSlotBytes);
  layout.windowBytes = alignUp(windowBytes);
  if (windowBytes > 0) layout.window = place(layout.windowBytes);
  layout.bytes = at;
  return layout;
}

}  // namespace peerlink::coll
