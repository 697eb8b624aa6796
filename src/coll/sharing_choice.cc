// When a call shares its buffers, and how long AUTO waits (sharing_choice.hpp).
#include "coll/sharing_choice.hpp"

namespace peerlink::coll {
namespace {

// A shared call is a meeting of the processes' hosts (shared_calls.hpp): where the ranks issue their calls in step,
// as nccl-tests does, sharing was ahead of the staging windows from a count of 2 MiB (4 MiB for broadcasts, reduces
// and all-to-all blocks) and ahead of NCCL at every size (bench/results/2026-11-30-h200x2-call-exchange/, s1, s3:
// all-reduce 32 MiB 107 us shared against 141 staged). Where they do not -- a training step's ranks reach each
// gradient bucket's all-reduce some 0.3-0.5 ms apart -- the host a rank loses waiting outweighs what sharing saves:
// PyTorch DDP's steps took 0.4-1.4 ms longer with its 7 MiB buckets shared than staged (s3-s5), even with the
// exchange's patience (below). So AUTO shares from 32 MiB: the all-gathers and reduce-scatters of large shards, the
// large all-reduces, where sharing saves the most. DDP's buckets of a larger model reach it (a bucket closes on the
// parameter that passes the 25 MiB cap: a 77 M-parameter transformer's came to 32.0 MiB), and the patience then
// stages nearly all of them (1744 of 1794 calls: bench/results/2026-11-30-h200x2-ddp-sharing/, which also has why a
// longer wait while the caller's stream is busy does not pay).
constexpr std::size_t kShareFrom = std::size_t{32} << 20;

// Broadcasts and reduces are no part of a training step's loop (DDP broadcasts the parameters once, at its start),
// and nccl-tests' ranks, in step, gain from 4 MiB: staged, its broadcasts and reduces of 4-16 MiB ran at 0.91-0.95x
// NCCL's speed (s6); shared from 4 MiB, at 1.02-1.49x (bench/results/2026-11-30-h200x2-rooted-sharing/, s1).
constexpr std::size_t kRootedShareFrom = std::size_t{4} << 20;

// What sharing saved over the staging windows on 2x H200 under nccl-tests
// (bench/results/2026-11-30-h200x2-call-exchange/, s1, sharing ON against OFF in one run): about half a microsecond
// a MiB of the count (all-reduce 32 MiB 34 us, 64 MiB 49, 512 MiB 255; all-gather's count of 32 MiB 25, 256 MiB
// 181; broadcast 512 MiB 128). And a base that ranks in step clear: with 5 us, nccl-tests' reduces of 8-32 MiB left
// some exchanges early and fell to 0.90-0.97x NCCL's time where waiting they were ahead (s5 against s3).
constexpr std::chrono::nanoseconds kPatienceBase{20000};
constexpr double kPatienceNsPerByte = 500.0 / (1 << 20);

}  // namespace

std::size_t shareFromBytes(Collective collective) {
  const bool rooted = collective == Collective::Broadcast || collective == Collective::Reduce;
  return rooted ? kRootedShareFrom : kShareFrom;
}

bool sharesAtCall(BufferSharing mode, Collective collective, std::size_t bytes, bool capturing) {
  if (capturing || bytes == 0) return false;
  switch (mode) {
    case BufferSharing::Off: return false;
    case BufferSharing::On: return true;
    case BufferSharing::Auto: return bytes >= shareFromBytes(collective);
  }
  return false;
}

std::chrono::nanoseconds sharingPatience(std::size_t bytes) {
  return kPatienceBase +
         std::chrono::nanoseconds(static_cast<long long>(static_cast<double>(bytes) * kPatienceNsPerByte));
}

}  // namespace peerlink::coll
