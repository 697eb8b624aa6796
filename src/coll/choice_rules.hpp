// The rules of the collectives' kernel choice (peerlink/collective_choice.hpp), stage by stage: the algorithm
// by size and fabric (choice_algorithm.cc), the kernel for it and its line format (choice_kernel.cc), the
// kernels' needs (collective_choice.cc). chooseCollective runs them in that order; the stages are here for it
// and for the tests that pin each rule down. Internal to src/coll/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/byte_size.hpp"  // formatByteSize: sizes as the reasons write them
#include "peerlink/collective_choice.hpp"

namespace peerlink::coll {

struct AlgorithmChoice {
  Algorithm algorithm = Algorithm::OneShot;
  std::string reason;   ///< e.g. "4 KiB per rank <= 256 KiB (NVLink between every pair): one-shot (latency-bound)"
  bool forced = false;  ///< PEERLINK_ALGO chose it: the kernel rules keep the algorithm
};

/// The algorithms `collective` has, in order of preference for large messages.
std::vector<Algorithm> algorithmsOf(Collective collective);

/// The algorithm for `collective` with `bytes` per rank (CallShape::bytes) over `nranks` ranks of `fabric`.
/// `forced` (PEERLINK_ALGO) wins where the collective has it; Auto, or an algorithm the collective does not
/// have, falls back to the size rules, and the reason says so.
AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytes, int nranks, const CollectiveFabric& fabric,
                                Algorithm forced = Algorithm::Auto);
/// The same over the GPUs `devices` of `topology`.
AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytes, const Topology& topology,
                                const std::vector<int>& devices, Algorithm forced = Algorithm::Auto);

/// A kernel choice being made: each rule that fires adds its reason; a rule that replaces the kernel drops the
/// clause of the kernel it replaces (the kernel's own reason, `kernelClause`), so no reason is edited later.
struct KernelChoice {
  Algorithm algorithm = Algorithm::OneShot;
  Kernel kernel = Kernel::Copy;
  Kernel wanted = Kernel::Copy;  ///< the kernel before its needs were checked (withNeedsMet)
  std::vector<std::string> reasons;
  int kernelClause = -1;  ///< the reason that names `kernel`'s own way of working, or -1

  /// A rule that keeps the kernel (or refines it, as the line format does) says why.
  void add(std::string reason);
  /// A rule that replaces the kernel: drops the replaced kernel's clause, adds `reason` as the new one's.
  void replace(Algorithm newAlgorithm, Kernel newKernel, std::string reason);
  /// The reasons joined by "; ".
  std::string reason() const;
};

/// The kernel of a call of `collective` with `bytes` per rank over `nranks` ranks (`nvlinkMesh`:
/// CollectiveFabric's), given `algorithm` (chooseAlgorithm's); `inPlace`: some rank may call it in place.
/// `llMaxBytes`: the largest message the LL scratch holds. `ll128Lines`: past its smallest sizes an LL choice
/// will carry LL128 lines (capable GPUs, PEERLINK_PROTO AUTO or LL128), so LL's size limits count LL128's
/// bytes on the wire. `push` decides between the push and the direct-read two-shot kernels, `copyEngine` whether
/// the copies of a large all-gather, all-to-all, all-reduce or send/recv group go to the copy engines. Assumes
/// every need of the kernel met (withNeedsMet checks them).
KernelChoice kernelForAlgorithm(Collective collective, std::size_t bytes, bool inPlace, int nranks, bool nvlinkMesh,
                                const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes,
                                PushMode push = PushMode::Auto, bool ll128Lines = false,
                                CopyEngineMode copyEngine = CopyEngineMode::Auto);

/// The line format of an LL choice: Kernel::Ll128OneShot in place of Kernel::LlOneShot where the GPUs are
/// `capable` (CollectiveFabric::ll128Capable) and PEERLINK_PROTO=LL128 forces it or, under AUTO, the collective
/// is all-reduce or reduce (LL128 at every size) or a rank's LL lines reach kLl128FromWireBytes. Any other
/// choice comes back as it was.
KernelChoice withLineFormat(KernelChoice choice, Collective collective, std::size_t bytes, int nranks,
                            Protocol protocol, bool capable);

/// `choice` for `call`, with the kernel that runs where a need of its kernel (KernelInfo::needs) is unmet:
/// its registry row's fallback, whose reason says which need and replaces the kernel's clause.
KernelChoice withNeedsMet(KernelChoice choice, const CallShape& call, const ChoiceResources& resources);

/// Whether a two-shot reduce of `bytes` per rank cuts the count among all n ranks, the root reducing a shard
/// too, rather than among the n - 1 others while the root only lends its input. One rank: always.
bool reduceTwoShotSharesRoot(std::size_t bytes, int nranks);

/// The most blocks per rank of a two-shot broadcast or reduce of `bytes` per rank, whose non-root ranks all
/// read the root (broadcast) or reduce into it (reduce) at once; 0 where the grid is only capped by the SM
/// count (smaller messages, fewer than 3 ranks, the reduce whose root reduces a shard too, other collectives).
int rootedTwoShotBlocks(Collective collective, std::size_t bytes, int nranks);

}  // namespace peerlink::coll
