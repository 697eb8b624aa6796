// The communicator's world from the ranks' cards (world.hpp).
#include "coll/world.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/byte_codec.hpp"
#include "peerlink/error.hpp"
#include "peerlink/version.hpp"

namespace peerlink::coll {
namespace {

constexpr std::uint32_t kCardMagic = 0x44524350;  // "PCRD" in memory
constexpr std::uint16_t kCardVersion = 1;
constexpr std::size_t kMaxNameBytes = 256;
constexpr std::size_t kMaxSettings = 64;
constexpr std::size_t kMaxLinks = 256;
constexpr int kMaxWorldRanks = 1 << 16;

// The settings whose values decide a call's kernel, grid or chunks (ranks that differ would run different
// kernels for one call and wait for each other until the deadline).
constexpr const char* kSettingsThatMustAgree[] = {
    "PEERLINK_ALGO",
    "PEERLINK_PROTO",
    "PEERLINK_COLL_PUSH",
    "PEERLINK_COLL_CE",
    "PEERLINK_COLL_MAX_BLOCKS",
    "PEERLINK_COLL_RING_CHUNK",
    "PEERLINK_COLL_RING_REDUCE_BLOCKS",
    "PEERLINK_COLL_SHARE_GPUS",
    // Which pairs are host-staged (rank_transport.hpp): the staged plans or the kernels, on every rank alike.
    "PEERLINK_COLL_HOST_STAGED",
    "PEERLINK_COLL_STAGED_CHUNK",
    "PEERLINK_COLL_HOST_RING",
    "PEERLINK_COLL_HOST_RING_SHAPE",
    // The staging windows' size: where every rank's chunks lie in every window.
    "PEERLINK_COLL_STAGING_WINDOW",
    // Whether a call exchanges its buffers (shared_calls.hpp): every rank at the same calls.
    "PEERLINK_COLL_SHARE_BUFFERS",
    // Which calls on unregistered buffers run as the arena ring, on what grid (arena_ring.hpp).
    "PEERLINK_COLL_ARENA_RING",
    "PEERLINK_COLL_ARENA_RING_SHAPE",
    "PEERLINK_P2P_DISABLE",
    "PEERLINK_P2P_LEVEL",
    // Whether the doctor's verdicts count (peer_verdicts.hpp): every process's cache, merged, or none.
    "PEERLINK_VERIFY",
};

const CardLink* findLink(const RankCard& card, const std::string& busId) {
  for (const CardLink& link : card.links) {
    if (link.busId == busId) return &link;
  }
  return nullptr;
}

}  // namespace

std::vector<std::uint8_t> encodeRankCard(const RankCard& card) {
  ByteWriter out;
  out.put(kCardMagic);
  out.put(kCardVersion);
  out.put(static_cast<std::int32_t>(card.rank));
  out.put(static_cast<std::int32_t>(card.nranks));
  out.put(card.hostId);
  out.putString(card.host);
  out.put(card.pid);
  out.putString(card.version);
  out.putString(card.busId);
  out.putString(card.uuid);
  out.put(static_cast<std::int32_t>(card.smCount));
  out.put(static_cast<std::int32_t>(card.ccMajor));
  out.put(static_cast<std::int32_t>(card.ccMinor));
  out.put(static_cast<std::uint8_t>(card.posixFdHandles ? 1 : 0));
  out.put(static_cast<std::uint32_t>(card.settings.size()));
  for (const auto& [name, value] : card.settings) {
    out.putString(name);
    out.putString(value);
  }
  out.put(static_cast<std::uint32_t>(card.links.size()));
  for (const CardLink& link : card.links) {
    out.putString(link.busId);
    out.put(static_cast<std::int32_t>(link.path));
    out.put(static_cast<std::int32_t>(link.nvlinks));
    out.put(static_cast<std::uint8_t>(link.canAccessPeer ? 1 : 0));
  }
  std::vector<std::uint8_t>& bytes = out.bytes();
  if (bytes.size() > kRankCardBytes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("rank {}'s card takes {} bytes, more than the {} a card may take ({} GPUs, {} settings)",
                            card.rank, bytes.size(), kRankCardBytes, card.links.size() + 1, card.settings.size()));
  }
  bytes.resize(kRankCardBytes, 0);
  return bytes;
}

RankCard decodeRankCard(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size, "rank card");
  if (in.get<std::uint32_t>("magic") != kCardMagic) in.fail("magic", "not a peerlink rank card");
  if (const auto version = in.get<std::uint16_t>("version"); version != kCardVersion) {
    in.fail("version", fmt::format("{}, this peerlink reads {} (mixed peerlink builds?)", version, kCardVersion));
  }
  RankCard card;
  card.rank = in.getInRange<std::int32_t>("rank", 0, kMaxWorldRanks - 1);
  card.nranks = in.getInRange<std::int32_t>("nranks", 1, kMaxWorldRanks);
  if (card.rank >= card.nranks) in.fail("rank", fmt::format("{} of {} ranks", card.rank, card.nranks));
  card.hostId = in.get<std::uint64_t>("host id");
  card.host = in.getString("host", kMaxNameBytes);
  card.pid = in.get<std::int64_t>("pid");
  card.version = in.getString("version", kMaxNameBytes);
  card.busId = in.getString("bus id", kMaxNameBytes);
  card.uuid = in.getString("uuid", kMaxNameBytes);
  card.smCount = in.getInRange<std::int32_t>("SM count", 1, 1 << 20);
  card.ccMajor = in.getInRange<std::int32_t>("compute capability", 1, 1000);
  card.ccMinor = in.getInRange<std::int32_t>("compute capability minor", 0, 1000);
  card.posixFdHandles = in.getInRange<std::uint8_t>("POSIX fd handles", 0, 1) == 1;
  const auto settings = in.getInRange<std::uint32_t>("settings", 0, kMaxSettings);
  for (std::uint32_t i = 0; i < settings; ++i) {
    std::string name = in.getString("setting name", kMaxNameBytes);
    std::string value = in.getString("setting value", kMaxNameBytes);
    card.settings.emplace_back(std::move(name), std::move(value));
  }
  const auto links = in.getInRange<std::uint32_t>("links", 0, kMaxLinks);
  for (std::uint32_t i = 0; i < links; ++i) {
    CardLink link;
    link.busId = in.getString("link bus id", kMaxNameBytes);
    link.path = static_cast<PathClass>(
        in.getInRange<std::int32_t>("link path", static_cast<int>(PathClass::LOC), static_cast<int>(PathClass::SYS)));
    link.nvlinks = in.getInRange<std::int32_t>("link NVLinks", 0, 1024);
    link.canAccessPeer = in.getInRange<std::uint8_t>("link peer access", 0, 1) == 1;
    card.links.push_back(std::move(link));
  }
  if (card.busId.empty()) in.fail("bus id", "empty");
  in.expectZeroPadding();
  return card;
}

std::vector<std::pair<std::string, std::string>> settingsThatMustAgree(const Params& params) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (const char* name : kSettingsThatMustAgree) {
    for (const ParamValue& value : params.values()) {
      if (value.spec->name == name) settings.emplace_back(name, value.value);
    }
  }
  return settings;
}

RankCard makeRankCard(int rank, int nranks, const Topology& topology, int device, const Params& params,
                      std::uint64_t hostId, const std::string& host, std::int64_t pid) {
  const auto own = std::find_if(topology.gpus.begin(), topology.gpus.end(),
                                [&](const Gpu& gpu) { return gpu.cudaOrdinal == device; });
  if (own == topology.gpus.end()) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("rank {}: GPU {} is not in this process's topology ({} GPUs)",
                                                     rank, device, topology.gpus.size()));
  }
  RankCard card;
  card.rank = rank;
  card.nranks = nranks;
  card.hostId = hostId;
  card.host = host;
  card.pid = pid;
  card.version = std::string(kVersion) + "+" + kGitCommit;
  card.busId = own->pciBusId;
  card.uuid = own->uuid;
  card.smCount = own->smCount;
  card.ccMajor = own->ccMajor;
  card.ccMinor = own->ccMinor;
  card.posixFdHandles = own->handles.vmm && own->handles.posixFd;
  card.settings = settingsThatMustAgree(params);
  const int self = static_cast<int>(own - topology.gpus.begin());
  for (const GpuPair& pair : topology.pairs) {
    if (pair.src != self) continue;
    const Gpu& other = topology.gpus[static_cast<std::size_t>(pair.dst)];
    card.links.push_back({other.pciBusId, pair.path, pair.nvlinks, pair.canAccessPeer});
  }
  return card;
}

bool World::isLocal(int rank) const {
  return std::binary_search(localRanks.begin(), localRanks.end(), rank);
}

bool World::sameProcess(int a, int b) const {
  const RankCard& x = cards[static_cast<std::size_t>(a)];
  const RankCard& y = cards[static_cast<std::size_t>(b)];
  return x.hostId == y.hostId && x.pid == y.pid;
}

bool World::sameHost(int a, int b) const {
  return cards[static_cast<std::size_t>(a)].hostId == cards[static_cast<std::size_t>(b)].hostId;
}

std::string World::describe(int rank) const {
  const RankCard& card = cards[static_cast<std::size_t>(rank)];
  return fmt::format("rank {} (host {}, pid {}, GPU {})", rank, card.host, card.pid, card.busId);
}

World makeWorld(std::vector<RankCard> cards, const std::vector<int>& localRanks, bool shareGpus) {
  World world;
  world.nranks = static_cast<int>(cards.size());
  world.cards = std::move(cards);
  world.localRanks = localRanks;
  std::sort(world.localRanks.begin(), world.localRanks.end());
  if (world.nranks == 0) throw Error(ErrorCode::InvalidUsage, "a communicator needs at least one rank");
  for (int r = 0; r < world.nranks; ++r) {
    const RankCard& card = world.cards[static_cast<std::size_t>(r)];
    if (card.rank != r || card.nranks != world.nranks) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("the card in place {} of {} says rank {} of {} ranks (host {}, pid {}): every "
                              "process must create the communicator with the same world size",
                              r, world.nranks, card.rank, card.nranks, card.host, card.pid));
    }
  }
  for (const int r : world.localRanks) {
    if (r < 0 || r >= world.nranks) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("local rank {} is outside the world of {}", r, world.nranks));
    }
  }
  const RankCard& first = world.cards.front();
  for (int r = 1; r < world.nranks; ++r) {
    const RankCard& card = world.cards[static_cast<std::size_t>(r)];
    if (card.version != first.version) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{} runs peerlink {} and {} runs {}: every rank must run the same build",
                              world.describe(0), first.version, world.describe(r), card.version));
    }
    if (card.settings != first.settings) {
      std::map<std::string, std::string> mine(first.settings.begin(), first.settings.end());
      std::string difference = "a different list of settings";
      for (const auto& [name, value] : card.settings) {
        const auto found = mine.find(name);
        if (found != mine.end() && found->second != value) {
          difference = fmt::format("{}={} there, {} here", name, value, found->second);
          break;
        }
      }
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{} and {} differ in a setting that chooses kernels ({}): set the same PEERLINK_* "
                              "values in every process",
                              world.describe(r), world.describe(0), difference));
    }
    if (!world.sameHost(0, r)) {
      throw Error(ErrorCode::Unsupported,
                  fmt::format("{} and {} are on different machines: a world of one host's GPUs cannot span "
                              "machines (a communicator across machines joins one per node over MPI: "
                              "docs/multinode.md)",
                              world.describe(0), world.describe(r)));
    }
    if (!world.sameProcess(0, r)) world.spansProcesses = true;
  }
  // The world's GPUs, by bus id, in rank order of first appearance.
  for (int r = 0; r < world.nranks; ++r) {
    const RankCard& card = world.cards[static_cast<std::size_t>(r)];
    int index = -1;
    for (int g = 0; g < static_cast<int>(world.topology.gpus.size()); ++g) {
      if (world.topology.gpus[static_cast<std::size_t>(g)].pciBusId == card.busId) index = g;
    }
    if (index >= 0) {
      const int sharer = static_cast<int>(std::find(world.gpu.begin(), world.gpu.end(), index) - world.gpu.begin());
      if (!shareGpus) {
        throw Error(ErrorCode::InvalidUsage,
                    fmt::format("{} and {} use the same GPU: one rank per GPU (PEERLINK_COLL_SHARE_GPUS=1 lets ranks "
                                "share a GPU for testing)",
                                world.describe(sharer), world.describe(r)));
      }
      world.gpusShared = true;
      world.gpu.push_back(index);
      continue;
    }
    Gpu gpu;
    gpu.cudaOrdinal = static_cast<int>(world.topology.gpus.size());
    gpu.pciBusId = card.busId;
    gpu.uuid = card.uuid;
    gpu.smCount = card.smCount;
    gpu.ccMajor = card.ccMajor;
    gpu.ccMinor = card.ccMinor;
    world.gpu.push_back(gpu.cudaOrdinal);
    world.topology.gpus.push_back(std::move(gpu));
  }
  // Each ordered pair's link as the first rank on its source GPU saw it.
  world.topology.source = "the ranks' cards";
  world.topology.host = first.host;
  const auto gpus = static_cast<int>(world.topology.gpus.size());
  for (int src = 0; src < gpus; ++src) {
    const auto owner = static_cast<std::size_t>(std::find(world.gpu.begin(), world.gpu.end(), src) - world.gpu.begin());
    const RankCard& from = world.cards[owner];
    for (int dst = 0; dst < gpus; ++dst) {
      if (dst == src) continue;
      const CardLink* link = findLink(from, world.topology.gpus[static_cast<std::size_t>(dst)].pciBusId);
      if (link == nullptr) continue;
      // A pair without peer access is kept: the communicator carries it through host memory (rank_transport.hpp).
      GpuPair pair;
      pair.src = src;
      pair.dst = dst;
      pair.canAccessPeer = link->canAccessPeer;
      pair.path = link->path;
      pair.nvlinks = link->nvlinks;
      world.topology.pairs.push_back(pair);
    }
  }
  return world;
}

}  // namespace peerlink::coll
