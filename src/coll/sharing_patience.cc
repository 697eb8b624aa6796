// A shared call's patience (sharing_patience.hpp).
#include "coll/sharing_patience.hpp"

namespace peerlink::coll {
namespace {

// What sharing saved over the staging windows on 2x H200 under nccl-tests (bench/results/2026-11-30-h200x2-call-
// exchange/, s1, sharing ON against OFF in one run): about half a microsecond a MiB of the count and a few more
// (all-reduce 2 MiB 3.5 us, 32 MiB 34, 64 MiB 49, 512 MiB 255; all-gather's count of 32 MiB 25, 256 MiB 181;
// broadcast 4 MiB 7.5, 512 MiB 128).
constexpr std::chrono::nanoseconds kPatienceBase{5000};
constexpr double kPatienceNsPerByte = 500.0 / (1 << 20);

}  // namespace

std::chrono::nanoseconds sharingPatience(std::size_t bytes) {
  return kPatienceBase +
         std::chrono::nanoseconds(static_cast<long long>(static_cast<double>(bytes) * kPatienceNsPerByte));
}

}  // namespace peerlink::coll
