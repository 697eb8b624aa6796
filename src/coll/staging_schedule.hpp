// The order in which a rank runs a staged call's chunks (staging_plan.hpp): its copies into and out of its
// window and each chunk's kernel between the windows, as a list of stream operations every rank issues alike.
//
// Serial: each chunk's copy in, kernel and copy out one after another on the caller's stream. Pipelined (two
// chunks or more): the copies go on a second stream of the rank, forked from the caller's stream at the start
// and joined back at the end, so that while chunk k's kernel runs in one half of the windows the copy stream
// copies chunk k-1's result out of the other half and chunk k+1's input into it:
//
//   caller's stream: fork    | wait in, K0 | wait in, K1         | wait in, K2         | ... | wait join
//   copy stream:     wait fork, in0 | in1    | wait K0, out0, in2  | wait K1, out1, in3  | ... | wait K(last), out
//
// Why no rank touches a half while another may still use it (the device facts are windowAccessOf's):
// - Chunk k+2's copy in rewrites my half only after my kernel of chunk k ended (the copy stream waited for it),
//   and chunk k's copy out reads it only then. Every kernel the windows run lets no peer touch my window after
//   my kernel of the chunk ended: either no peer touches it at all, or my kernel waits, before it ends, for
//   every peer to have finished reading and storing into it (an end barrier, or every round's flag).
// - Peers touch my half for chunk k+2 only once my kernel of chunk k+2 has started (a start barrier, or the ring's
//   wait for its next rank to start), and that kernel starts only after my copy in of chunk k+2, which follows my
//   copy out of chunk k on the copy stream: so my copy out has read chunk k's result before anyone overwrites it.
// - The first copy follows everything on the caller's stream before the call (the fork), so the caller's input is
//   ready and earlier calls' kernels have left the windows; the caller's stream goes on only after the last copy
//   out (the join).
// - A peer's stores into my window are visible to my copy out: the barrier or flag my kernel waits on releases them
//   at system scope and my kernel acquires it; the copy starts after my kernel has completed. A kernel launched to
//   overlap the one before it on the stream (programmatic dependent launch) still waits for the copy in (an event
//   is a full dependency), and touches memory only after the kernel before it has completed.
// - On the caller's buffers the copies keep the serial order but one: chunk k+1's copy in may run before chunk
//   k's copy out. They touch different elements (chunks cut the caller's blocks into disjoint ranges, in place
//   too), which test_coll_staging_schedule checks with the other rules above as a happens-before relation.
#pragma once

#include <cstddef>
#include <vector>

#include "peerlink/collective_choice.hpp"

namespace peerlink::coll {

/// Where an operation goes: the caller's stream, or the rank's copy stream.
enum class StagingLane { Caller, Copies };

/// A staged call's events, on each rank: the fork, the last copy in, each half's last kernel, the join.
enum class StagingEvent { Forked, CopiedIn, KernelDoneEven, KernelDoneOdd, Joined };
constexpr int kStagingEvents = 5;

/// One operation of a rank's schedule.
struct StagingOp {
  enum class Kind {
    Record,   ///< records `event` on `lane`
    Wait,     ///< makes `lane` wait for `event`'s latest record
    CopyIn,   ///< chunk `chunk`'s copy into the rank's window (where it has one), on `lane`
    Kernel,   ///< chunk `chunk`'s collective between the windows, on the caller's stream
    CopyOut,  ///< chunk `chunk`'s copy out of the rank's window (where it has one), on `lane`
  };
  Kind kind = Kind::Kernel;
  StagingLane lane = StagingLane::Caller;
  StagingEvent event = StagingEvent::Forked;
  std::size_t chunk = 0;
};

/// The operations of a call of `chunks` chunks (chunk k in half k mod 2), in the order a rank issues them:
/// pipelined through the copy stream where `pipelined` and there are two chunks or more, else serial.
std::vector<StagingOp> stagingSchedule(std::size_t chunks, bool pipelined);

/// What a rank issues after the first `issued` operations of `schedule` when issuing the next one failed (a CUDA
/// error part way through the call): where the copy stream was forked and is not yet joined, the join -- the copy
/// stream records Joined and the caller's stream waits for it -- so the caller's stream still passes every copy
/// issued, and an event recorded behind the call there (LaunchTracking) covers them before the windows may be
/// freed. Empty where nothing was forked, or the join was issued.
std::vector<StagingOp> stagingAbandon(const std::vector<StagingOp>& schedule, std::size_t issued);

/// How a kernel run between the windows touches the ranks' windows, read from its device code.
enum class WindowAccess {
  /// Only its own rank's window: the LL kernels (peers' LL scratch), the ring reduce and reduce-scatter (peers'
  /// ring stages; a chain's last rank stores into its own output), the push reduce-scatter (peers' push stages).
  OwnOnly,
  /// Peers' windows too, only while the owner's kernel runs: a peer starts after the owner has started (a block
  /// barrier, or a ring's wait for its next rank) and has finished before the owner's kernel ends (the owner's end
  /// barrier, or its wait for every round a ring stores into it).
  WhileOwnerRuns,
};

/// What windowAccessOf says of `kernel` (send/recv's LL kernel: OwnOnly, it is never run between windows).
WindowAccess windowAccessOf(Kernel kernel);

}  // namespace peerlink::coll
