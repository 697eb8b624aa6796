// Which algorithm a collective uses, as a pure function of the call and the topology (tested on CPU for
// every fixture). The communicator asks it at every call; PEERLINK_ALGO forces one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/collectives.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::coll {

struct AlgorithmChoice {
  Algorithm algorithm = Algorithm::OneShot;
  std::string reason;   ///< one line for logs and `describeChoice`, e.g. "4 KiB per rank: one-shot (latency-bound)"
  bool forced = false;  ///< PEERLINK_ALGO chose it: chooseKernel keeps the algorithm
};

/// The wire protocol of one-shot kernels (PEERLINK_PROTO): LL packs a flag into every 8 bytes of data, so a
/// receiver waits for the data itself (one step, no barrier; twice the bytes on the wire); LL128 does the
/// same with one 8-byte flag per 128-byte line (NVLink only: coll_ll128.cu); Simple moves plain data
/// between barriers.
enum class Protocol { Auto, Ll, Ll128, Simple };

/// A size as the choices' reasons write it: "512 B", "4 KiB", "1.5 MiB".
std::string formatBytes(std::size_t bytes);

/// "AUTO", "LL", "LL128", "SIMPLE" (PEERLINK_PROTO's spellings, case-insensitive); nullopt for anything else.
/// (This and the other settings' parsers and names are defined in choice_settings.cc.)
std::optional<Protocol> parseProtocol(const std::string& name);
/// The spelling parseProtocol reads back: "AUTO", "LL", "LL128", "SIMPLE".
const char* protocolName(Protocol protocol) noexcept;

/// How large reductions move data between GPUs (PEERLINK_COLL_PUSH): Push stores every byte to the peer
/// that needs it (into its stage, then the results into the outputs); Pull reads peers' inputs directly.
enum class PushMode { Auto, Push, Pull };

/// "AUTO", "1" (push), "0" (pull), case-insensitive; nullopt for anything else.
std::optional<PushMode> parsePushMode(const std::string& name);
/// The spelling parsePushMode reads back: "AUTO", "1", "0".
const char* pushModeName(PushMode push) noexcept;

/// Where the large-message kernels' copies run (PEERLINK_COLL_CE): On moves all-gather's and all-to-all's
/// data and all-reduce's gathered shards with the copy engines (cudaMemcpyAsync between barrier kernels), Off
/// with SM kernels; Auto by size, on an NVLink mesh.
enum class CopyEngineMode { Auto, On, Off };

/// "AUTO", "1" (on), "0" (off), case-insensitive; nullopt for anything else.
std::optional<CopyEngineMode> parseCopyEngineMode(const std::string& name);
/// The spelling parseCopyEngineMode reads back: "AUTO", "1", "0".
const char* copyEngineModeName(CopyEngineMode mode) noexcept;

/// The kernel a collective runs: the algorithm, then what the kernels can do with the buffers given.
enum class Kernel {
  Ll,             ///< LL one-shot (coll_ll.cu): every collective's small messages
  DirectOneShot,  ///< every rank reads every input and reduces the whole buffer (coll_reduce.cu)
  TwoShot,        ///< each rank reduces its shard into every output (coll_reduce.cu)
  ReduceScatter,  ///< each rank reduces its own segment of every input (coll_reduce.cu)
  Copy,           ///< direct copies between barriers (coll_copy.cu)
  PushReduce,     ///< two-shot all-reduce / reduce-scatter by stores only, through stages (coll_push_phased.cu)
  RingBroadcast,  ///< broadcast along the ranks from the root, stores only, a flag per chunk (coll_ring_broadcast.cu)
  SplitTwoShot,   ///< large two-shot all-reduce as two kernels: a direct-read reduce-scatter, a pushing all-gather
  RingReduce,     ///< reduce along the ranks towards the root, stores only, through stages (coll_ring_reduce.cu)
  RingAllReduce,  ///< all-reduce as n ring reduces then n ring broadcasts, one per segment, side by side
  RingReduceScatter,  ///< reduce-scatter as n ring reduces side by side, block j along the chain ending at rank j
  Ll128,              ///< the LL one-shot in 128-byte lines of 120 payload bytes (coll_ll128.cu): NVLink only
  CeCopy,             ///< all-gather, all-to-all: copy-engine pushes between barrier kernels
  CeTwoShot,          ///< all-reduce: SplitTwoShot's reduce-scatter kernel, then copy-engine pushes of the shards
  CeRingAllReduce,    ///< all-reduce: RingAllReduce's ring reduces, then copy-engine pushes of the segments
};
constexpr int kKernelCount = 15;

struct KernelChoice {
  Algorithm algorithm = Algorithm::OneShot;  ///< what the kernel is, in the vocabulary of the plans
  Kernel kernel = Kernel::Copy;
  std::string reason;
};

/// Whether every ordered pair of `devices` talks over NVLink (directly or through NVSwitch).
bool isNvlinkMesh(const Topology& topology, const std::vector<int>& devices);

/// What a call of `collective` with `bytes` per rank (every message's size: per-rank input of all-reduce,
/// broadcast, reduce and all-gather, per-peer block of all-to-all, per-rank output of reduce-scatter) runs
/// over `nranks` GPUs (`nvlinkMesh`: isNvlinkMesh), given the algorithm chooseAlgorithm picked; `inPlace`:
/// some rank calls it in place. `llMaxBytes` is the largest message the LL scratch holds.
/// `push` (PEERLINK_COLL_PUSH) decides between the push and the direct-read kernel where both apply.
/// `ll128Lines`: past its smallest sizes an LL choice will carry LL128 lines (ll128Capable, PEERLINK_PROTO
/// AUTO or LL128), so LL's size limits count LL128's bytes on the wire, not LL's. `copyEngine`
/// (PEERLINK_COLL_CE) decides whether the copies of a large all-gather, all-to-all, all-reduce or send/recv
/// group run on the copy engines (copyEngineInstead); a send/recv group's `bytes` is the most one rank sends.
KernelChoice chooseKernel(Collective collective, std::size_t bytes, bool inPlace, int nranks, bool nvlinkMesh,
                          const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes,
                          PushMode push = PushMode::Auto, bool ll128Lines = false,
                          CopyEngineMode copyEngine = CopyEngineMode::Auto);

/// The copy-engine form of `choice` (chooseKernel's SM kernel for `collective` with `bytes` per rank on
/// `nranks` ranks), or nullopt where it keeps the SM kernel: the direct copies of all-gather, all-to-all and
/// send/recv become Kernel::CeCopy, all-reduce's two-shot kernels Kernel::CeTwoShot and its ring
/// Kernel::CeRingAllReduce. On: wherever the form exists; Off: never; Auto: on an NVLink mesh where the data a
/// rank pushes to its peers reaches the size from which the copy engines were measured faster
/// (kCeCopyFromPushedBytes for the collectives' copies, kCeSendFromPushedBytes for send/recv,
/// kCeGatherFromPushedBytes for an all-reduce's gather: copy_engine_select.cc).
std::optional<KernelChoice> copyEngineInstead(Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh,
                                              const KernelChoice& choice, CopyEngineMode mode);

/// The push form of `kernel` (chooseKernel's direct-read TwoShot, SplitTwoShot or ReduceScatter for
/// `collective` with `bytes` per rank on `nranks` ranks), Kernel::PushReduce, or nullopt where the direct reads
/// stay: Push (PEERLINK_COLL_PUSH=1) always; Pull never; Auto for an all-reduce two-shot AUTO chose (not
/// `forced`) on 3+ ranks of an NVLink mesh from the size where pushing in two phases was measured faster
/// while every shard fits a stage slot (kAutoPushFrom, kernels::collPushPhasedFits: push_select.cc). `why`
/// is the direct kernel's reason, which the push's extends.
std::optional<KernelChoice> pushInstead(Collective collective, Kernel kernel, std::size_t bytes, int nranks,
                                        bool nvlinkMesh, bool forced, PushMode push, const std::string& why);

/// Whether the GPUs `devices` of `topology` may carry LL128 lines: every pair over NVLink (isNvlinkMesh) and
/// every GPU of compute capability 9.0 or later. LL128 trusts the path between two GPUs' SMs to deliver a
/// warp's 128-byte store whole (coll_ll128.cu); NCCL trusts NVLink on Volta to Hopper, peerlink only what
/// it has run on (Hopper).
bool ll128Capable(const Topology& topology, const std::vector<int>& devices);

/// The line format of an LL choice: `choice` (what chooseKernel returned for `collective` with messages of
/// `bytes` on `nranks` ranks) with Kernel::Ll128 in place of Kernel::Ll where the GPUs are `capable`
/// (ll128Capable) and PEERLINK_PROTO=LL128 forces it or, under AUTO, the collective is all-reduce or reduce
/// (LL128 at every size) or the LL lines a rank would send to its n - 1 peers are enough that their wire
/// time outweighs LL128's slightly longer path (32 KiB of lines). Any other choice comes back as it was.
KernelChoice withLineFormat(KernelChoice choice, Collective collective, std::size_t bytes, int nranks,
                            Protocol protocol, bool capable);

/// Whether a two-shot reduce of `bytes` per rank cuts the count among all n ranks, the root reducing a shard
/// too, rather than among the n - 1 others while the root only lends its input. One rank: always.
bool reduceTwoShotSharesRoot(std::size_t bytes, int nranks);

/// The most blocks per rank of a two-shot broadcast or reduce of `bytes` per rank, whose non-root ranks all
/// read the root (broadcast) or reduce into it (reduce) at once; 0 where the grid is only capped by the SM
/// count (smaller messages, fewer than 3 ranks, the reduce whose root reduces a shard too, other collectives).
int rootedTwoShotBlocks(Collective collective, std::size_t bytes, int nranks);

/// Whether a call of `collective` running `choice` stores into another rank's memory (pushed copies,
/// two-shot outputs, LL lines, the push reduction's stages). Its end barrier then releases this rank's
/// stores and acquires the peers'; when every access to a peer is a load (one-shot and reduce-scatter
/// reads, the direct broadcast, send/recv) it only says "done reading".
bool storesIntoPeers(Collective collective, const KernelChoice& choice);

/// The algorithms `collective` has, in order of preference for large messages.
std::vector<Algorithm> algorithmsOf(Collective collective);

/// The algorithm for `collective` with `bytesPerRank` (the call's count in bytes: the per-rank send size, for
/// reduce-scatter the block a rank receives) over the GPUs `devices` of
/// `topology`. `forced` (from PEERLINK_ALGO) wins when the collective has it; Auto or an algorithm the
/// collective does not have falls back to the size rule, and the reason says so.
AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytesPerRank, const Topology& topology,
                                const std::vector<int>& devices, Algorithm forced = Algorithm::Auto);

}  // namespace peerlink::coll
