// Where each rank's symmetric buffers lie in its one allocation (the arena): the flag area, the LL, LL128 and
// send/recv LL scratch, the ring reduce's stage, the push reduction's stages and the staging window of calls
// whose buffers peers cannot reach. One allocation per rank, so sharing a rank's buffers with another process
// is one export and one import, and every rank computes every peer's layout alike from the world's size.
#pragma once

#include <cstddef>

namespace peerlink::coll {

struct SymmetricLayout {
  /// Offsets from the arena's start, in bytes.
  std::size_t flags = 0;         ///< kernels::kCollFlagBytes: [phase][block][from rank]
  std::size_t scratch = 0;       ///< LL: 2 parities x nranks senders x kCollLlSlotBytes
  std::size_t ll128Scratch = 0;  ///< LL128: 2 x nranks x kCollLl128SlotBytes
  std::size_t p2pScratch = 0;    ///< send/recv LL: 2 x nranks x kCollP2pLlSlotBytes
  std::size_t ringArea = 0;      ///< the arena ring's area (kArenaRingAreaBytes, its words zeroed), with a window
  std::size_t ringStage = 0;     ///< kCollRingStageBytes (2+ ranks), else absent
  std::size_t stage = 0;         ///< push stages: nranks x kCollPushSlotBytes, when the communicator may push
  std::size_t window = 0;        ///< the staging window (windowBytes), when the world spans processes
  std::size_t zeroedBytes = 0;   ///< [0, zeroedBytes) must be zero before any kernel runs (flags and lines)
  std::size_t bytes = 0;         ///< the arena's size
  bool hasRingStage = false;
  bool hasStage = false;
  bool hasRingArea = false;
  std::size_t windowBytes = 0;
};

/// Every region starts on this boundary (beyond the 16 bytes the kernels' vector accesses need).
constexpr std::size_t kSymmetricAlignment = 4096;

/// The arena of a rank of an `nranks` world; `pushStages` when the push reduction may run; `windowBytes` (0:
/// none) of staging window, and beside a window the arena ring's area where `ringArea` (arena_ring.hpp).
SymmetricLayout symmetricLayout(int nranks, bool pushStages, std::size_t windowBytes, bool ringArea = false);

}  // namespace peerlink::coll
