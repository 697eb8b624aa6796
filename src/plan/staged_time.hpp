// The time of a staged call (processes.hpp) as a rank runs it: the operations of coll::stagingSchedule, the
// communicator's own list, each taking its duration on its lane (the caller's stream or the copy stream). A lane
// runs its operations in the order they were issued; a wait holds it until the waited event's record (the one
// issued last before the wait, as CUDA binds it) has been reached on its lane; a record marks where its lane is.
// The call ends where the caller's stream ends (after the join where pipelined).
//
// Serial, that is the sum of every chunk's copies and kernel. Pipelined (two chunks or more), chunk k's kernel runs
// once its copy in is done and chunk k-1's kernel has ended, while the copy stream copies chunk k-1's result out
// and chunk k+1's input in: the time is the first copy in, then per chunk the longer of its kernel and the copies
// beside it, then the last copy out. The copies and kernels are taken not to slow each other down (they share the
// GPU's memory: a fitted copy efficiency carries what the overlap costs on average).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace peerlink::plan {

/// What each operation of a staged call takes on a rank, in µs, per chunk in order: nullopt where the rank makes
/// no copy on that side (a broadcast's root copies nothing out).
struct StagedDurations {
  std::vector<std::optional<double>> copyIn;
  std::vector<double> kernel;
  std::vector<std::optional<double>> copyOut;
};

/// A staged call's time and the operations that set it: end to end, each starting where the one before it on the
/// path ended (the critical path). An operation of nothing (a side with no copy) is never on the path.
struct StagedTime {
  double timeUs = 0;
  std::vector<bool> copyInOnPath;  ///< per chunk
  std::vector<bool> kernelOnPath;
  std::vector<bool> copyOutOnPath;
};

/// The time of a call of `durations.kernel.size()` chunks (each vector that long), run as coll::stagingSchedule
/// orders it: pipelined through the copy stream where `pipelined` and there are two chunks or more, else serial.
StagedTime stagedTime(const StagedDurations& durations, bool pipelined);

}  // namespace peerlink::plan
