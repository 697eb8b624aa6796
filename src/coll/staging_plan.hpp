// How a call whose buffers the peers cannot reach runs through the staging windows: each rank copies its part
// of the input into its window, the collective runs between the windows (which every rank has mapped), and
// each rank copies its part of the result out -- half a window's worth of elements at a time, the chunks taking
// the halves in turn, so one chunk's copies can run while the other half's kernel runs (staging_schedule.hpp).
//
// Across processes a rank's buffers are reachable by its peers only once registered; the LL kernels need no
// peer's buffer, every other kernel reads or writes some. Every rank cuts a call into the same chunks (from
// the call's shape and the window's size only), so the ranks' kernels stay matched.
//
// Only the parts of a rank's buffers its peers' kernels touch need the window: where the chunk's kernel reads and
// stores this rank's own part in its own kernel only (ownPartsStayLocal), the rank copies in what the peers read,
// copies out what they store, and its kernel reads and stores the rest in the caller's buffers -- a two-shot all-reduce
// of n ranks copies (n-1)/n of the data each way instead of all of it, a reduce-scatter nothing out, an all-gather
// nothing in, an all-to-all nothing in and (n-1)/n out. The window's layout stays the whole form's, so ranks may stage
// either way.
#pragma once

#include <cstddef>
#include <vector>

#include "peerlink/collective_choice.hpp"
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

/// Where a rank's kernel finds its own send and recv for a chunk: in its window (at the chunk's regions, as the
/// peers do), or in the caller's buffers (at ownSendOffset / ownRecvOffset; the peers still use the window).
enum class OwnBuffers { Window, Caller };

/// One chunk of a staged call, as one rank runs it.
struct StagedChunk {
  std::size_t first = 0;         ///< where it starts in each block of the caller's buffers, in elements
  std::size_t count = 0;         ///< the count of the collective run between the windows
  int half = 0;                  ///< the half of every window it runs in: chunk k takes half k mod 2
  std::size_t sendOffset = 0;    ///< where its send region starts in every window (its half's start)
  std::size_t recvOffset = 0;    ///< where its recv region starts in every window (inside the same half)
  std::vector<StridedCopy> in;   ///< from the caller's send buffer into this rank's window
  std::vector<StridedCopy> out;  ///< from this rank's window into the caller's recv buffer
  OwnBuffers own = OwnBuffers::Window;
  /// With own == Caller: this rank's send and recv for the chunk's kernel, as byte offsets from the caller's send
  /// and recv. Blocked collectives: placed so that the kernel's block of this rank lands on the caller's (the
  /// kernel reaches no other block of its own buffers).
  std::size_t ownSendOffset = 0;
  std::size_t ownRecvOffset = 0;
  /// With own == Caller: bytes between the blocks of its own send its kernel reads (all-to-all: the caller's
  /// block), 0 where they are adjacent or it reads one.
  std::size_t ownSendPitch = 0;
};

/// The bytes of each half of a window of `windowBytes`: the second half starts there (a 256-byte boundary).
std::size_t stagingHalfBytes(std::size_t windowBytes);

/// The chunks of a call of `collective` with `count` (the Communicator API's count) on rank `rank` of `nranks`
/// (`root` for broadcast and reduce), elements of `elementSize` bytes, through windows of `windowBytes`: chunks of
/// nearly equal counts in the halves by turns, as few as fit a half each -- but a call of more than 16 MiB a block
/// in at least one chunk per 16 MiB, up to four, so its copies overlap kernels whatever the window's size. Empty
/// for count 0. Send/recv is not a collective here.
std::vector<StagedChunk> stagedChunks(Collective collective, int nranks, int rank, int root, std::size_t count,
                                      std::size_t elementSize, std::size_t windowBytes);

/// Whether `kernel` (`algorithm`: what the choice says) running `collective` touches each rank r's send and recv
/// in its own kernel only in parts the peers' kernels never read nor store into, so rank r's own kernel may use
/// the caller's buffers for them: the two-shot all-reduce (shard r), the one-shot reduction (the reduce's root
/// and every all-reduce rank read the peers' inputs, store only their own output), the shard reduction of a
/// reduce-scatter (block r of the input, the whole output), the all-gather's push copy (block r of the output),
/// the all-to-all's push copy (the whole input, block r of the output) and the broadcast's direct copy (every
/// rank reads the root's input). Others keep the whole form.
bool ownPartsStayLocal(Collective collective, Kernel kernel, Algorithm algorithm);

/// `chunk` (of stagedChunks, the whole form) as rank `rank` runs it with its own parts in the caller's buffers,
/// where ownPartsStayLocal: the copies only of the parts the peers touch, own == Caller. `count`: the call's.
/// Unchanged where the kernel does not allow it, or the chunk is in that form already.
void keepOwnPartsLocal(StagedChunk& chunk, Collective collective, Kernel kernel, Algorithm algorithm, int nranks,
                       int rank, int root, std::size_t count, std::size_t elementSize);

/// Whether a rank whose chunks are `chunks` copies anything between its buffers and its window: not a broadcast's
/// non-root nor a reduce's root with their own parts kept local (their kernels read and store the caller's buffers
/// and the peers' windows only). Such a rank runs only its kernels, without the copy stream
/// (stagingSchedule's serial form): a stream capture carries a stream's dependencies on until its next node, so a
/// copy stream that captures none hands every kernel, through its events, the dependencies of every kernel
/// before it -- a graph of 20 broadcasts of 64 chunks grew some 800,000 edges and did not launch.
bool copiesAnything(const std::vector<StagedChunk>& chunks);

/// The most elements per chunk in a region of `regionBytes` (a half window): the largest count whose send and
/// recv regions fit, the recv region starting on a 256-byte boundary, cut to a whole number of 16-byte units
/// where elements are smaller.
std::size_t stagedChunkCount(Collective collective, int nranks, std::size_t elementSize, std::size_t regionBytes);

}  // namespace peerlink::coll
