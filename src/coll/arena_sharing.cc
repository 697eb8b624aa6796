// Sharing the ranks' arenas between processes (arena_sharing.hpp).
#include "coll/arena_sharing.hpp"

#include <exception>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/parallel_each.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
ShareKind arenaShareKind(const World& world) {
  for (const RankCard& card : world.cards) {
    if (!card.posixFdHandles) return ShareKind::Ipc;
  }
  return ShareKind::Cumem;
}

void shareArenas(CommState& state, WorldExchange& exchange, std::chrono::milliseconds timeout) {
  const World& world = state.world;
  const std::vector<int>& local = world.localRanks;
  std::vector<std::vector<std::uint8_t>> mine;
  for (const int r : local) {
    const RankArena& arena = state.ranks[static_cast<std::size_t>(r)].arena;
    if (!arena.shared) throw Error(ErrorCode::Internal, fmt::format("rank {}'s arena is not exportable", r));
    mine.push_back(encodeArenaAddress({arena.shared->kind(), arena.shared->socketPath()}));
  }
  const std::vector<std::uint8_t> all = exchange.allGather(mine, kArenaAddressBytes);
  std::vector<ArenaAddress> addresses;
  for (int r = 0; r < world.nranks; ++r) {
    try {
      addresses.push_back(
          decodeArenaAddress(all.data() + static_cast<std::size_t>(r) * kArenaAddressBytes, kArenaAddressBytes));
    } catch (const Error& error) {
      throw Error(error.code(), fmt::format("from {}: {}", world.describe(r), error.what()));
    }
  }
  // Every other process maps every local arena once, for all of its GPUs: then one address reaches an arena
  // from every local GPU, and every local rank's table is the same (as in one process).
  std::set<std::pair<std::uint64_t, std::int64_t>> otherProcesses;
  for (int r = 0; r < world.nranks; ++r) {
    if (!world.isLocal(r))
      otherProcesses.insert(
          {world.cards[static_cast<std::size_t>(r)].hostId, world.cards[static_cast<std::size_t>(r)].pid});
  }
  const auto importers = static_cast<int>(otherProcesses.size());
  if (local.size() > 1 && arenaShareKind(world) == ShareKind::Ipc) {
    throw Error(ErrorCode::Unsupported,
                fmt::format("{} drives {} ranks in a world that spans processes, which needs the GPUs to share "
                            "memory by POSIX file descriptor (cuMem); some cannot: one rank per process then",
                            world.describe(local.front()), local.size()));
  }
  std::vector<int> remote;
  for (int r = 0; r < world.nranks; ++r) {
    if (!world.isLocal(r)) remote.push_back(r);
  }
  std::vector<std::unique_ptr<ImportedBuffer>> imported(remote.size());
  const int importingDevice = state.devices[static_cast<std::size_t>(local.front())];
  // A server per local arena and an importer per remote rank, side by side: every process serves while it
  // imports, so no process waits for one that waits for it.
  forEachInParallel(local.size() + remote.size(), [&](std::size_t job) {
    if (job < local.size()) {
      const int rank = local[job];
      ExportableBuffer& arena = *state.ranks[static_cast<std::size_t>(rank)].arena.shared;
      for (int served = 0; served < importers; ++served) {
        try {
          arena.serveOne(timeout);
        } catch (const Error& error) {
          throw Error(error.code(), fmt::format("{} sharing its buffers ({} of {} other processes mapped them): {}",
                                                world.describe(rank), served, importers, error.what()));
        }
      }
      return;
    }
    const int p = remote[job - local.size()];
    try {
      auto mapping =
          std::make_unique<ImportedBuffer>(addresses[static_cast<std::size_t>(p)].socketPath, importingDevice, timeout);
      for (const int rank : local) mapping->allowAccess(state.devices[static_cast<std::size_t>(rank)]);
      imported[job - local.size()] = std::move(mapping);
    } catch (const Error& error) {
      throw Error(error.code(), fmt::format("{} mapping the buffers of {}: {}", world.describe(local.front()),
                                            world.describe(p), error.what()));
    }
  });
  for (std::size_t i = 0; i < remote.size(); ++i) {
    for (const int rank : local) {
      setTableRank(state.tables[static_cast<std::size_t>(rank)], remote[i], state.layout, imported[i]->data());
    }
    state.imports.push_back(std::move(*imported[i]));
  }
}

}  // namespace peerlink::coll
