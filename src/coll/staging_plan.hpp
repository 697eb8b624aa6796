// How a call whose buffers the peers cannot reach runs through the staging windows: each rank copies its part
// of the input into its window, the collective runs between the windows (which every rank has mapped), and
// each rank copies its part of the result out -- a window's worth of elements at a time.
//
// Across processes a rank's buffers are reachable by its peers only once registered; the LL kernels need no
// peer's buffer, every other kernel reads or writes some. Every rank cuts a call into the same chunks (from
// the call's shape and the window's size only), so the ranks' kernels stay matched.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// `rows` rows of `rowBytes`, row j from src + srcOffset + j * srcPitch to dst + dstOffset + j * dstPitch.
struct StridedCopy {
  std::size_t srcOffset = 0;
  std::size_t dstOffset = 0;
  std::size_t rowBytes = 0;
  std::size_t rows = 1;
  std::size_t srcPitch = 0;
  std::size_t dstPitch = 0;
};

/// One chunk of a staged call, as one rank runs it.
struct StagedChunk {
  std::size_t count = 0;           ///< the count of the collective run between the windows
  std::size_t recvOffset = 0;      ///< where its recv region starts in every window (its send region starts at 0)
  std::optional<StridedCopy> in;   ///< from the caller's send buffer into this rank's window
  std::optional<StridedCopy> out;  ///< from this rank's window into the caller's recv buffer
};

/// The chunks of a call of `collective` with `count` (the Communicator API's count) on rank `rank` of `nranks`
/// (`root` for broadcast and reduce), elements of `elementSize` bytes, through windows of `windowBytes`.
/// Empty for count 0. Send/recv is not a collective here.
std::vector<StagedChunk> stagedChunks(Collective collective, int nranks, int rank, int root, std::size_t count,
                                      std::size_t elementSize, std::size_t windowBytes);

/// The most elements per chunk: the largest count whose send and recv regions fit the window, the recv region
/// starting on a 256-byte boundary, cut to a whole number of 16-byte units where elements are smaller.
std::size_t stagedChunkCount(Collective collective, int nranks, std::size_t elementSize, std::size_t windowBytes);

}  // namespace peerlink::coll
