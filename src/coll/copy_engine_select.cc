// The copy-engine form of a large collective (copyEngineInstead, algorithm_select.hpp): whether the copies of
// an all-gather, all-to-all, all-reduce or send/recv group go to the copy engines, by the bytes a rank pushes
// to its peers.
#include "coll/algorithm_select.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kKiB = 1024;
// From here (the bytes one rank pushes to its peers: n - 1 messages) the copy engines move an all-gather's or
// all-to-all's data on an NVLink mesh (copyEngineInstead): past 380 GB/s where the SM kernels' stores reach
// ~350 on links loaded both ways, but every copy costs ~8 us more than its bytes, and a barrier kernel more.
// On 4x H100 (round 42 call A, graph times) all-to-all took 575.6 us at 64 MiB per peer (192 MiB pushed)
// against the SM kernel's 581.2 and 1094.6 against 1159.0 at 128 MiB, 311.6 against 296.8 at 32 MiB;
// all-gather 1105.5 against 1149.4 with 128 MiB per rank, 586.4 against 579.8 with 64 MiB (its local copy
// then on a copy engine too, ~40 us of the difference: now an SM kernel). On 2 GPUs (call E) the copy
// engines already won with 128 MiB pushed (all-gather 363.7 against 375.7 us) and tied with 64 MiB.
constexpr std::size_t kCeCopyFromPushedBytes = 192 * kKiB * kKiB;
// The same for an all-reduce's second half: each rank's reduced segment pushed to the peers by the copy
// engines instead of n ring broadcasts or the split two-shot's all-gather kernel. On 4 GPUs (call A) after
// the ring: 583.4 us at 128 MiB (96 MiB pushed) against the SM ring's 590.4, 1112.6 against 1127.2 at 256
// MiB, 2189.2 against 2223.2 at 512 MiB; after the two-shot's reduce-scatter at 64 MiB (48 MiB pushed)
// 317.3 against 308.1. On 2 GPUs, where the two-shot carries the large messages (call E): 769.3 against
// 779.9 at 256 MiB (128 MiB pushed), 1507.1 against 1545.3 at 512 MiB, 2981.6 against 3074.0 at 1 GiB,
// even at 128 MiB (397.8 against 398.4).
constexpr std::size_t kCeGatherFromPushedBytes = 96 * kKiB * kKiB;
// The same for send/recv: each rank's sends pushed by its copy engine instead of the receivers' SM kernels
// pulling. In nccl-tests' ring shift (every rank sends to the next, so every link carries data both ways) the
// pulling kernels fell to 0.92-0.94x NCCL from 256 MiB on 4x H200 (round 50 calls A-B: 336 GB/s at 1 GiB,
// NCCL's symmetric kernels 365). On 4x H100 (call E, graph times) the copy engines took 197.4 us at 64 MiB
// against the SM kernels' 206.5 and 2751.7 against 3182.8 at 1 GiB (390 GB/s, NCCL 365), but 111.5 against
// 106.2 at 32 MiB and 68.5 against 55.6 at 16 MiB: a copy's fixed cost and the second barrier kernel.
constexpr std::size_t kCeSendFromPushedBytes = 64 * kKiB * kKiB;

// The bytes one rank of `collective` with `bytes` per rank pushes to its n - 1 peers in the copy-engine form.
std::size_t pushedBytes(Collective collective, std::size_t bytes, int nranks) {
  const auto peers = static_cast<std::size_t>(nranks - 1);
  const auto ranks = static_cast<std::size_t>(nranks);
  if (collective == Collective::AllReduce) return (bytes + ranks - 1) / ranks * peers;  // a shard to each peer
  if (collective == Collective::SendRecv) return bytes;  // `bytes`: the most one rank sends in the group
  return bytes * peers;
}

}  // namespace

std::optional<KernelChoice> copyEngineInstead(Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh,
                                              const KernelChoice& choice, CopyEngineMode mode) {
  if (mode == CopyEngineMode::Off || nranks < 2) return std::nullopt;
  KernelChoice engine = choice;
  std::string how;
  switch (choice.kernel) {
    case Kernel::Ll:  // a small send/recv group: on the copy engines only when forced
      if (collective != Collective::SendRecv || mode != CopyEngineMode::On) return std::nullopt;
      [[fallthrough]];
    case Kernel::Copy:
      if (collective == Collective::SendRecv) {
        engine.kernel = Kernel::CeCopy;
        how = "each rank's copy engine pushes its sends into the receivers' buffers between two barrier kernels";
        break;
      }
      if (collective != Collective::AllGather && collective != Collective::AllToAll) return std::nullopt;
      engine.kernel = Kernel::CeCopy;
      how = "the copy engines push each rank's data to its peers, the next rank first, between two barrier kernels";
      break;
    case Kernel::TwoShot:
    case Kernel::SplitTwoShot:
      if (collective != Collective::AllReduce) return std::nullopt;
      engine.kernel = Kernel::CeTwoShot;
      how = "a direct-read reduce-scatter kernel, then the copy engines push each rank's shard to its peers";
      break;
    case Kernel::RingAllReduce:
      engine.kernel = Kernel::CeRingAllReduce;
      how = "the copy engines push each rank's reduced segment to its peers instead of the ring broadcasts";
      break;
    default: return std::nullopt;
  }
  if (mode == CopyEngineMode::On) {
    engine.reason += "; copies on the copy engines (PEERLINK_COLL_CE=1): " + how;
    return engine;
  }
  const std::size_t pushed = pushedBytes(collective, bytes, nranks);
  const std::size_t from = collective == Collective::SendRecv ? kCeSendFromPushedBytes
                           : engine.kernel == Kernel::CeCopy  ? kCeCopyFromPushedBytes
                                                              : kCeGatherFromPushedBytes;
  if (!nvlinkMesh || pushed < from) return std::nullopt;
  engine.reason += "; a rank pushes " + formatBytes(pushed) + " >= " + formatBytes(from) + ": " + how;
  return engine;
}

}  // namespace peerlink::coll
