// The world of a communicator: every rank's identity and GPU as all ranks know them, which ranks share a
// process or a machine, and the fabric facts the kernel choice depends on.
//
// Across processes each rank chooses its kernels alone, from its own call: ranks that saw different facts or
// settings would choose different kernels and wait for each other forever. So at creation every rank sends
// the others a card (what it is, what its process sees of the links from its GPU, the settings that steer the
// choice), every rank gathers the same cards, and makeWorld -- one pure function of the cards -- gives every
// rank the same world or the same error naming the ranks that disagree. One process makes the cards itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

namespace peerlink::coll {

/// What a rank's process knows of the link from the rank's GPU to another GPU of its machine.
struct CardLink {
  std::string busId;  ///< the other GPU
  PathClass path = PathClass::SYS;
  int nvlinks = 0;
  bool canAccessPeer = false;  ///< the rank's GPU may map the other's memory
};

/// One rank as it tells the others at creation.
struct RankCard {
  int rank = 0;
  int nranks = 0;
  std::uint64_t hostId = 0;  ///< which machine (bootstrap's host identity; one process: any constant)
  std::string host;          ///< the machine's name, for messages
  std::int64_t pid = 0;
  std::string version;  ///< peerlink's version and commit: ranks of different builds could disagree on kernels
  std::string busId;    ///< the GPU, "0000:00:06.0"
  std::string uuid;
  int smCount = 0;
  int ccMajor = 0;
  int ccMinor = 0;
  bool posixFdHandles = false;  ///< the GPU's memory can be shared by POSIX file descriptor (cuMem)
  /// The settings every rank must agree on (settingsThatMustAgree), as name and canonical value.
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<CardLink> links;  ///< to every other GPU this rank's process sees
};

/// The most bytes an encoded card may take: cards travel in a fixed-size all-gather.
constexpr std::size_t kRankCardBytes = 16384;

/// The card as bytes, padded to kRankCardBytes; Error(InvalidUsage) if it does not fit (too many GPUs).
std::vector<std::uint8_t> encodeRankCard(const RankCard& card);
/// Strict: every length and range checked; Error(InvalidInput) naming the field for anything else.
RankCard decodeRankCard(const std::uint8_t* data, std::size_t size);

/// The PEERLINK_* settings that decide which kernel a call runs and how its grid and chunks are cut: ranks
/// must agree on every one of them. Canonical values from `params`.
std::vector<std::pair<std::string, std::string>> settingsThatMustAgree(const Params& params);

/// The card of rank `rank` of `nranks`, which drives the GPU of CUDA ordinal `device` in `topology` (this
/// process's). Throws Error(InvalidUsage) when the topology has no such GPU.
RankCard makeRankCard(int rank, int nranks, const Topology& topology, int device, const Params& params,
                      std::uint64_t hostId, const std::string& host, std::int64_t pid);

/// The world as every rank derives it from the same cards.
struct World {
  int nranks = 0;
  std::vector<RankCard> cards;  ///< by rank
  std::vector<int> localRanks;  ///< the ranks this process drives, ascending
  bool spansProcesses = false;  ///< some rank lives in another process
  bool gpusShared = false;      ///< some GPU drives two ranks (PEERLINK_COLL_SHARE_GPUS)
  /// By rank: which of the world's GPUs it runs on (ranks sharing a GPU share its index), the index into
  /// `topology`'s GPUs.
  std::vector<int> gpu;
  /// The world's GPUs and the links between them as the ranks' cards tell them (a GPU's "CUDA ordinal" is its
  /// index): what the kernel choice's fabric comes from (fabricOf), the same on every rank. A link no rank's
  /// process could see is absent.
  Topology topology;

  bool isLocal(int rank) const;
  bool sameProcess(int a, int b) const;
  bool sameHost(int a, int b) const;
  /// "rank 3 (host a, pid 123, GPU 0000:00:06.0)".
  std::string describe(int rank) const;
};

/// Checks the cards against each other and derives the world. `localRanks`: the ranks this process drives.
/// Throws Error naming both ranks for: a card whose rank or world size is not its place's, another
/// peerlink build, a setting with another value, two ranks on one GPU (unless `shareGpus`), a pair of GPUs
/// of one machine without peer access (Unsupported), ranks on different machines (Unsupported: a world
/// across machines is node_world.hpp's, one of these per node joined over MPI).
World makeWorld(std::vector<RankCard> cards, const std::vector<int>& localRanks, bool shareGpus);

}  // namespace peerlink::coll
