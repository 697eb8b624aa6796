// Calls on registered windows (registered_calls.hpp).
#include "coll/registered_calls.hpp"

#include <algorithm>

namespace peerlink::coll {
namespace {

// The window and offset of a local call's buffer of `elements`, or nullopt when it lies in none.
std::optional<WindowHit> hitOf(const CommState& state, int rank, const void* pointer, std::size_t elements,
                               DataType type) {
  if (pointer == nullptr) return std::nullopt;
  return state.windows.find(rank, pointer, std::max<std::size_t>(1, elements * dataTypeSize(type)));
}

}  // namespace

std::optional<std::vector<CallArgs>> registeredSet(const CommState& state, const std::vector<CallArgs>& set) {
  // A process of several ranks would need every other process's allocations opened for each of its GPUs:
  // legacy IPC opens one for the GPU that opens it; such a process stages its calls.
  if (state.windows.empty() || state.localRanks().size() != 1) return std::nullopt;
  const int lead = state.localRanks().front();
  std::optional<WindowHit> send;
  std::optional<WindowHit> recv;
  for (const int r : state.localRanks()) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    // Every buffer the call names, ignored ones too: their offsets stand for the root's.
    const std::size_t sendElements =
        std::max(sendElementsOf(call.collective, state.nranks, call.count, call.root, call.root), std::size_t{1});
    const std::size_t recvElements =
        std::max(recvElementsOf(call.collective, state.nranks, call.count, call.root, call.root), std::size_t{1});
    const std::optional<WindowHit> mySend = hitOf(state, r, call.send, sendElements, call.type);
    const std::optional<WindowHit> myRecv = hitOf(state, r, call.recv, recvElements, call.type);
    if (!mySend || !myRecv) return std::nullopt;
    if (r == lead) {
      send = mySend;
      recv = myRecv;
    }
  }
  // In place, an all-gather's send (a reduce-scatter's recv) is the rank's own block of the other buffer: at
  // another offset on every rank.
  const CallArgs& first = set[static_cast<std::size_t>(lead)];
  const std::size_t block = first.count * dataTypeSize(first.type);
  const auto* leadSend = static_cast<const unsigned char*>(first.send);
  const auto* leadRecv = static_cast<const unsigned char*>(first.recv);
  const auto rankBlock = [&](int rank) { return block * static_cast<std::size_t>(rank); };
  const bool gatherInPlace =
      first.collective == Collective::AllGather && leadSend == leadRecv + rankBlock(lead) && block > 0;
  const bool scatterInPlace =
      first.collective == Collective::ReduceScatter && leadRecv == leadSend + rankBlock(lead) && block > 0;
  std::vector<CallArgs> full = set;
  for (int p = 0; p < state.nranks; ++p) {
    if (state.world.isLocal(p)) continue;
    CallArgs& call = full[static_cast<std::size_t>(p)];
    unsigned char* sendBase = send->window->base[static_cast<std::size_t>(p)];
    unsigned char* recvBase = recv->window->base[static_cast<std::size_t>(p)];
    call.recv = recvBase + recv->offset;
    call.send = sendBase + send->offset;
    if (gatherInPlace) call.send = recvBase + recv->offset + rankBlock(p);
    if (scatterInPlace) call.recv = sendBase + send->offset + rankBlock(p);
  }
  return full;
}

}  // namespace peerlink::coll
