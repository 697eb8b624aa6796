// Communicator::split (communicator.hpp): every rank's color and key gathered, one new communicator per color
// this process has ranks of, its id made by the color's lowest rank and sent to the other members.
#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "coll/communicator_state.hpp"
#include "core/parallel_each.hpp"

namespace peerlink {

namespace {

constexpr int kSplitIdTag = 0x5350;  // "SP": a split's leader sends its group the new communicator's id

struct SplitEntry {
  std::int32_t color;
  std::int32_t key;
};

// The new ranks of one color: the members ordered by key, then by their rank in the parent.
std::vector<int> membersOf(const std::vector<SplitEntry>& entries, int color) {
  std::vector<int> members;
  for (int r = 0; r < static_cast<int>(entries.size()); ++r) {
    if (entries[static_cast<std::size_t>(r)].color == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return entries[static_cast<std::size_t>(a)].key < entries[static_cast<std::size_t>(b)].key;
  });
  return members;
}

}  // namespace

std::vector<std::shared_ptr<Communicator>> Communicator::split(const std::vector<int>& colors,
                                                               const std::vector<int>& keys) {
  State& state = *state_;
  state.throwIfPeerLost();
  if (state.nodes) {
    throw Error(ErrorCode::Unsupported,
                "Communicator::split: a communicator across nodes cannot be split yet (its transport is "
                "MPI_COMM_WORLD's); create the communicators you need from MPI_COMM_WORLD's ranks");
  }
  const std::vector<int> local = state.comm.localRanks();
  if (colors.size() != local.size() || keys.size() != local.size()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("Communicator::split: {} colors and {} keys for {} local ranks; one of each per local rank",
                            colors.size(), keys.size(), local.size()));
  }
  // Every rank's color and key.
  const int n = state.comm.nranks;
  std::vector<SplitEntry> entries(static_cast<std::size_t>(n));
  std::vector<std::vector<std::uint8_t>> mine;
  for (std::size_t i = 0; i < local.size(); ++i) {
    const SplitEntry entry{colors[i], keys[i]};
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&entry);
    mine.emplace_back(bytes, bytes + sizeof entry);
  }
  const std::vector<std::uint8_t> all =
      state.withExchange([&](coll::WorldExchange& exchange) { return exchange.allGather(mine, sizeof(SplitEntry)); });
  std::memcpy(entries.data(), all.data(), all.size());
  // One new communicator per color this process has ranks of, created side by side (each waits for its
  // members, some of which may be in processes that create another first).
  std::vector<int> ownColors;
  for (const int color : colors) {
    if (color >= 0 && std::find(ownColors.begin(), ownColors.end(), color) == ownColors.end()) {
      ownColors.push_back(color);
    }
  }
  std::vector<std::shared_ptr<Communicator>> made(ownColors.size());
  const Params params = state.comm.params;
  forEachInParallel(ownColors.size(), [&](std::size_t c) {
    const std::vector<int> members = membersOf(entries, ownColors[c]);
    std::vector<int> newRanks;
    std::vector<int> devices;
    for (int newRank = 0; newRank < static_cast<int>(members.size()); ++newRank) {
      const int old = members[static_cast<std::size_t>(newRank)];
      if (!state.comm.world.isLocal(old)) continue;
      newRanks.push_back(newRank);
      devices.push_back(state.comm.devices[static_cast<std::size_t>(old)]);
    }
    if (state.bootstraps.empty()) {  // one process: every member is here
      std::vector<int> ordered(members.size());
      for (std::size_t i = 0; i < members.size(); ++i) {
        ordered[i] = state.comm.devices[static_cast<std::size_t>(members[i])];
      }
      made[c] = std::make_shared<Communicator>(ordered, params);
      return;
    }
    // The leader (the member of lowest rank here) makes the id and sends it to the members of other
    // processes; this process's members take it from the leader if it is here, else receive it.
    const int leader = *std::min_element(members.begin(), members.end());
    const auto bootstrapOf = [&](int rank) -> Bootstrap& {
      const auto at = std::find(local.begin(), local.end(), rank) - local.begin();
      return *state.bootstraps[static_cast<std::size_t>(at)];
    };
    UniqueId id;
    if (state.comm.world.isLocal(leader)) {
      id = makeUniqueId(params);
      for (const int member : members) {
        if (!state.comm.world.isLocal(member)) bootstrapOf(leader).send(member, kSplitIdTag, id.bytes, sizeof id.bytes);
      }
    } else {
      const int receiver =
          *std::find_if(members.begin(), members.end(), [&](int member) { return state.comm.world.isLocal(member); });
      const std::vector<std::uint8_t> bytes = bootstrapOf(receiver).recv(leader, kSplitIdTag);
      if (bytes.size() != sizeof id.bytes) {
        throw Error(ErrorCode::InvalidInput,
                    fmt::format("Communicator::split: the id from rank {} has {} bytes", leader, bytes.size()));
      }
      std::memcpy(id.bytes, bytes.data(), sizeof id.bytes);
    }
    made[c] = std::make_shared<Communicator>(id, static_cast<int>(members.size()), newRanks, devices, params);
  });
  std::vector<std::shared_ptr<Communicator>> result(local.size());
  for (std::size_t i = 0; i < local.size(); ++i) {
    if (colors[i] < 0) continue;
    const auto c = std::find(ownColors.begin(), ownColors.end(), colors[i]) - ownColors.begin();
    result[i] = made[static_cast<std::size_t>(c)];
  }
  return result;
}

}  // namespace peerlink
