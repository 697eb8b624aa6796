// Sharing the ranks' arenas between processes (arena_sharing.hpp).
#include "coll/arena_sharing.hpp"

#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/byte_codec.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::uint32_t kAddressMagic = 0x41524150;  // "PARA" in memory
constexpr std::size_t kMaxSocketPath = 400;

// Runs body(i) for i in [0, count) on a thread each; rethrows the first error (by index) once all ended.
template <typename Body>
void onThreads(std::size_t count, Body&& body) {
  std::vector<std::exception_ptr> errors(count);
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace

ShareKind arenaShareKind(const World& world) {
  for (const RankCard& card : world.cards) {
    if (!card.posixFdHandles) return ShareKind::Ipc;
  }
  return ShareKind::Cumem;
}

std::vector<std::uint8_t> encodeArenaAddress(const ArenaAddress& address) {
  if (address.socketPath.size() > kMaxSocketPath) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("socket path {} is longer than {} bytes", address.socketPath, kMaxSocketPath));
  }
  ByteWriter out;
  out.put(kAddressMagic);
  out.put(static_cast<std::uint8_t>(address.kind == ShareKind::Cumem ? 1 : 0));
  out.putString(address.socketPath);
  out.bytes().resize(kArenaAddressBytes, 0);
  return out.bytes();
}

ArenaAddress decodeArenaAddress(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size, "arena address");
  if (in.get<std::uint32_t>("magic") != kAddressMagic) in.fail("magic", "not a peerlink arena address");
  ArenaAddress address;
  address.kind = in.getInRange<std::uint8_t>("kind", 0, 1) == 1 ? ShareKind::Cumem : ShareKind::Ipc;
  address.socketPath = in.getString("socket path", kMaxSocketPath);
  if (address.socketPath.empty() || address.socketPath.front() != '/') in.fail("socket path", "not absolute");
  return address;
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
  // Every rank of another process maps every local arena once, for its own GPU.
  int remote = 0;
  for (int r = 0; r < world.nranks; ++r) remote += world.isLocal(r) ? 0 : 1;
  std::mutex importsMutex;
  const std::size_t jobs = local.size() * 2;  // a server and an importer per local rank
  onThreads(jobs, [&](std::size_t job) {
    const int rank = local[job / 2];
    RankResources& resources = state.ranks[static_cast<std::size_t>(rank)];
    if (job % 2 == 0) {
      for (int served = 0; served < remote; ++served) {
        try {
          resources.arena.shared->serveOne(timeout);
        } catch (const Error& error) {
          throw Error(error.code(), fmt::format("{} sharing its buffers ({} of {} ranks of other processes mapped "
                                                "them): {}",
                                                world.describe(rank), served, remote, error.what()));
        }
      }
      return;
    }
    SymmetricTable& table = state.tables[static_cast<std::size_t>(rank)];
    for (int p = 0; p < world.nranks; ++p) {
      if (world.isLocal(p)) continue;
      try {
        ImportedBuffer imported(addresses[static_cast<std::size_t>(p)].socketPath, resources.device, timeout);
        setTableRank(table, p, state.layout, imported.data());
        const std::lock_guard<std::mutex> lock(importsMutex);
        state.imports.push_back(std::move(imported));
      } catch (const Error& error) {
        throw Error(error.code(), fmt::format("{} mapping the buffers of {}: {}", world.describe(rank),
                                              world.describe(p), error.what()));
      }
    }
  });
}

}  // namespace peerlink::coll
