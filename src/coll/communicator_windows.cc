// Communicator::registerWindow and deregisterWindow (communicator.hpp): every rank's window card gathered, the
// other processes' allocations opened on each GPU of this process (user_windows.hpp).
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll/communicator_state.hpp"
#include "coll/shared_calls.hpp"
#include "coll/world_agreement.hpp"
#include "core/log.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink {
namespace {

// The id registerWindow gives on a communicator that runs staged plans (UserWindows numbers its windows from 1).
constexpr int kUnusedWindow = 0;

// The ranks whose processes failed (coll::ranksThatFailed over the world's exchange): the same on every process.
std::vector<int> ranksThatFailed(coll::WorldExchange& exchange, const std::vector<int>& local, int nranks,
                                 bool failed) {
  return coll::ranksThatFailed([&exchange](const std::vector<std::vector<std::uint8_t>>& blobs,
                                           std::size_t bytes) { return exchange.allGather(blobs, bytes); },
                               local.size(), nranks, failed);
}

// Whether every process got through a stage of a registration: each local rank says whether its process did, all
// ranks learn all. Every process calls it whether its stage succeeded (`failed` nullopt) or not; afterwards, where
// any failed, every process throws: its own error, or Error(RemoteError) naming the ranks whose processes failed. So no
// process keeps a window another has not (its peers would reach buffers it stages, or the reverse).
void agree(coll::WorldExchange& exchange, const std::vector<int>& local, int nranks, const std::optional<Error>& failed,
           const char* stage) {
  const std::vector<int> ranks = ranksThatFailed(exchange, local, nranks, failed.has_value());
  if (failed) throw *failed;
  if (!ranks.empty()) {
    throw Error(ErrorCode::RemoteError,
                fmt::format("registerWindow: rank(s) {} could not {} (their own errors say why); no rank keeps the "
                            "window",
                            fmt::join(ranks, ", "), stage));
  }
}

// The error `work` throws; nullopt when it succeeds.
template <typename Work>
std::optional<Error> failureOf(Work&& work) {
  try {
    work();
  } catch (const Error& error) {
    return error;
  }
  return std::nullopt;
}

}  // namespace

int Communicator::registerWindow(const std::vector<void*>& buffers, const std::vector<std::size_t>& bytes) {
  State& state = *state_;
  state.throwIfPeerLost();
  // Across nodes only the node's calls can use windows: they are its communicator's.
  if (state.nodes) return state.nodes->node().registerWindow(buffers, bytes);
  const std::lock_guard<std::mutex> lock(state.mutex);
  coll::CommState& comm = state.comm;
  const std::vector<int>& local = comm.localRanks();
  if (buffers.size() != local.size() || bytes.size() != local.size()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("registerWindow: {} buffers and {} sizes for {} local ranks; one of each per local rank",
                            buffers.size(), bytes.size(), local.size()));
  }
  if (comm.planned) {
    // The staged plans reach no peer's buffer, so a window would go unused (and between GPUs without peer access
    // could not be opened): the ranks meet as they would, and nothing is mapped.
    state.withExchange([](coll::WorldExchange& exchange) {
      exchange.barrier();
      return 0;
    });
    return kUnusedWindow;
  }
  std::vector<std::vector<std::uint8_t>> mine;
  const std::optional<Error> unshared = failureOf([&] {
    for (std::size_t i = 0; i < local.size(); ++i) {
      coll::WindowCard card;
      const int device = comm.devices[static_cast<std::size_t>(local[i])];
      if (comm.world.spansProcesses) {
        DeviceGuard guard(device);
        card = coll::windowCardOf(buffers[i], bytes[i], device);
      } else {
        // A freed, host or foreign buffer would reach the kernels as a peer pointer: refused here as in a world of
        // processes.
        coll::checkWindowBuffer(buffers[i], bytes[i], device);
        card.bytes = bytes[i];
      }
      const auto* raw = reinterpret_cast<const std::uint8_t*>(&card);
      mine.emplace_back(raw, raw + sizeof card);
    }
  });
  const std::vector<std::uint8_t> all = state.withExchange([&](coll::WorldExchange& exchange) {
    agree(exchange, local, comm.nranks, unshared, "share their buffers");
    return exchange.allGather(mine, sizeof(coll::WindowCard));
  });
  std::vector<coll::WindowCard> cards(static_cast<std::size_t>(comm.nranks));
  std::memcpy(cards.data(), all.data(), all.size());
  std::vector<unsigned char*> own(static_cast<std::size_t>(comm.nranks), nullptr);
  for (std::size_t i = 0; i < local.size(); ++i) {
    own[static_cast<std::size_t>(local[i])] = static_cast<unsigned char*>(buffers[i]);
  }
  const PeerAccessTable& access = comm.peerAccess;
  int id = kUnusedWindow;
  const auto open = [&] {
    return failureOf([&] {
      id = comm.windows.add(cards, own, comm.devices,
                            [&access](int device, int peer) { return access.enabled(device, peer); });
    });
  };
  std::optional<Error> unopened = open();
  const std::vector<int> failed = state.withExchange([&](coll::WorldExchange& exchange) {
    return ranksThatFailed(exchange, local, comm.nranks, unopened.has_value());
  });
  if (failed.empty()) return id;
  // An open may fail while shared calls' cached windows map other allocations of the process (closeSharedCalls says
  // when): every rank lets its cached calls go and opens once more.
  if (!unopened) comm.windows.remove(id);
  logInfo(LogSubsys::Coll,
          "registerWindow: rank(s) {} could not open the others' buffers{}; every rank closes its {} cached shared "
          "calls and tries again",
          fmt::join(failed, ", "), unopened ? fmt::format(" (here: {})", unopened->what()) : "",
          coll::closeSharedCalls(comm));
  unopened = open();
  try {
    state.withExchange([&](coll::WorldExchange& exchange) {
      agree(exchange, local, comm.nranks, unopened, "open the others' buffers");
      return 0;
    });
  } catch (const Error&) {
    if (!unopened) comm.windows.remove(id);  // add() succeeded here, elsewhere it did not
    throw;
  }
  return id;
}

void Communicator::deregisterWindow(int window) {
  State& state = *state_;
  if (state.nodes) return state.nodes->node().deregisterWindow(window);
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (!(state.comm.planned && window == kUnusedWindow)) state.comm.windows.remove(window);
  // No rank frees its buffer while another still maps it.
  state.withExchange([](coll::WorldExchange& exchange) {
    exchange.barrier();
    return 0;
  });
}

}  // namespace peerlink
