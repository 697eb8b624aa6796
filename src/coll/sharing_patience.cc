// A shared call's patience (sharing_patience.hpp).
#include "coll/sharing_patience.hpp"

namespace peerlink::coll {
namespace {

// What sharing saved over the staging windows on 2x H200 under nccl-tests
// (bench/results/2026-11-30-h200x2-call-exchange/, s1, sharing ON against OFF in one run): about half a microsecond
// a MiB of the count (all-reduce 32 MiB 34 us, 64 MiB 49, 512 MiB 255; all-gather's count of 32 MiB 25, 256 MiB
// 181; broadcast 512 MiB 128). And a base that ranks in step clear: with 5 us, nccl-tests' reduces of 8-32 MiB left
// some exchanges early and fell to 0.90-0.97x NCCL's time where waiting they were ahead (s5 against s3).
constexpr std::chrono::nanoseconds kPatienceBase{20000};
constexpr double kPatienceNsPerByte = 500.0 / (1 << 20);

}  // namespace

std::chrono::nanoseconds sharingPatience(std::size_t bytes) {
  return kPatienceBase +
         std::chrono::nanoseconds(static_cast<long long>(static_cast<double>(bytes) * kPatienceNsPerByte));
}

}  // namespace peerlink::coll
