// How a call whose buffers the peers cannot reach runs through the staging windows: each rank copies its part
// of the input into its window, the collective runs between the windows (which every rank has mapped), and
// each rank copies its part of the result out -- half a window's worth of elements at a time, the chunks taking
// the halves in turn, so one chunk's copies can run while the other half's kernel runs (staging_schedule.hpp).
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
  int half = 0;                    ///< the half of every window it runs in: chunk k takes half k mod 2
  std::size_t sendOffset = 0;      ///< where its send region starts in every window (its half's start)
  std::size_t recvOffset = 0;      ///< where its recv region starts in every window (inside the same half)
  std::optional<StridedCopy> in;   ///< from the caller's send buffer into this rank's window
  std::optional<StridedCopy> out;  ///< from this rank's window into the caller's recv buffer
};

/// The bytes of each half of a window of `windowBytes`: the second half starts there (a 256-byte boundary).
std::size_t stagingHalfBytes(std::size_t windowBytes);

/// The chunks of a call of `collective` with `count` (the Communicator API's count) on rank `rank` of `nranks`
/// (`root` for broadcast and reduce), elements of `elementSize` bytes, through windows of `windowBytes`: one
/// chunk in the first half where the call fits half a window, else as few chunks of nearly equal counts as fit
/// a half each, in the halves by turns. Empty for count 0. Send/recv is not a collective here.
std::vector<StagedChunk> stagedChunks(Collective collective, int nranks, int rank, int root, std::size_t count,
                                      std::size_t elementSize, std::size_t windowBytes);

/// The most elements per chunk in a region of `regionBytes` (a half window): the largest count whose send and
/// recv regions fit, the recv region starting on a 256-byte boundary, cut to a whole number of 16-byte units
/// where elements are smaller.
std::size_t stagedChunkCount(Collective collective, int nranks, std::size_t elementSize, std::size_t regionBytes);

}  // namespace peerlink::coll
