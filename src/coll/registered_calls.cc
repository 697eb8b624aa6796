// Calls on registered windows (registered_calls.hpp).
#include "coll/registered_calls.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// The window and offset of a local call's buffer of `elements`, or nullopt when it lies in none.
std::optional<WindowHit> hitOf(const CommState& state, int rank, const void* pointer, std::size_t elements,
                               DataType type) {
  if (pointer == nullptr) return std::nullopt;
  return state.windows.find(rank, pointer, std::max<std::size_t>(1, elements * dataTypeSize(type)));
}

}  // namespace

PeerPointerTable registeredTable(const std::vector<CallArgs>& set, const std::vector<bool>& local, int lead,
                                 const WindowHit& send, const WindowHit& recv, int viewer) {
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
  const auto v = static_cast<std::size_t>(viewer);
  PeerPointerTable table;
  for (std::size_t p = 0; p < set.size(); ++p) {
    if (local[p]) {
      table.send[p] = set[p].send;
      table.recv[p] = set[p].recv;
      continue;
    }
    unsigned char* sendBase = send.window->base[v][p];
    unsigned char* recvBase = recv.window->base[v][p];
    table.send[p] = sendBase + send.offset;
    table.recv[p] = recvBase + recv.offset;
    if (gatherInPlace) table.send[p] = recvBase + recv.offset + rankBlock(static_cast<int>(p));
    if (scatterInPlace) table.recv[p] = sendBase + send.offset + rankBlock(static_cast<int>(p));
  }
  return table;
}

void checkSymmetricBuffers(const std::vector<CallArgs>& set, const std::vector<int>& localRanks, int lead,
                           const WindowHit& send, const WindowHit& recv) {
  const std::vector<bool> remote(set.size(), false);
  for (const int r : localRanks) {
    const auto i = static_cast<std::size_t>(r);
    const PeerPointerTable seen = registeredTable(set, remote, lead, send, recv, r);
    if (seen.send[i] == set[i].send && seen.recv[i] == set[i].recv) continue;
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{} on registered windows: rank {}'s buffers are not at rank {}'s offsets in window {} "
                            "(send at {} B, recv at {} B there): a call on windows needs every rank's buffers at the "
                            "same offsets of the same window, as NCCL's symmetric windows",
                            collectiveName(set[i].collective), r, lead, send.window->id, send.offset, recv.offset));
  }
}

std::optional<RegisteredCalls> registeredCalls(const std::vector<CallArgs>& set, const std::vector<int>& localRanks) {
  if (set.empty() || localRanks.empty()) return std::nullopt;
  const CallArgs& shape = set[static_cast<std::size_t>(localRanks.front())];
  if (shape.collective == Collective::Reduce) return std::nullopt;
  RegisteredCalls calls{set, std::nullopt};
  if (shape.collective != Collective::Broadcast) return calls;
  for (const int r : localRanks) {
    CallArgs& call = calls.set[static_cast<std::size_t>(r)];
    if (r == call.root && call.send != call.recv && call.count > 0) {
      calls.rootCopy = LocalCopy{r, call.recv, call.send, call.count * dataTypeSize(call.type)};
    }
    call.send = call.recv;
  }
  return calls;
}

std::optional<RegisteredSet> registeredSet(const CommState& state, const std::vector<CallArgs>& callerSet) {
  if (state.windows.noneRegistered()) return std::nullopt;
  std::optional<RegisteredCalls> calls = registeredCalls(callerSet, state.localRanks());
  if (!calls) return std::nullopt;
  const std::vector<CallArgs>& set = calls->set;
  const int lead = state.localRanks().front();
  std::optional<WindowHit> send;
  std::optional<WindowHit> recv;
  for (const int r : state.localRanks()) {
    const CallArgs& call = set[static_cast<std::size_t>(r)];
    // Every buffer the call names; registeredCalls left only those every rank uses.
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
  checkSymmetricBuffers(set, state.localRanks(), lead, *send, *recv);
  std::vector<bool> local(set.size(), false);
  for (const int r : state.localRanks()) local[static_cast<std::size_t>(r)] = true;
  std::vector<PeerPointerTable> tables(set.size());
  for (const int r : state.localRanks()) {
    tables[static_cast<std::size_t>(r)] = registeredTable(set, local, lead, *send, *recv, r);
  }
  std::vector<CallArgs> full = std::move(calls->set);  // `set` is not read after this
  const PeerPointerTable& leads = tables[static_cast<std::size_t>(lead)];
  for (std::size_t p = 0; p < full.size(); ++p) {
    full[p].send = leads.send[p];
    full[p].recv = leads.recv[p];
  }
  return RegisteredSet{std::move(full), SetPointers(std::move(tables)), calls->rootCopy};
}

void launchRegisteredSet(CommState& state, const RegisteredSet& registered, bool capturing) {
  if (const std::optional<LocalCopy>& copy = registered.rootCopy) {
    const CallArgs& call = registered.set[static_cast<std::size_t>(copy->rank)];
    DeviceGuard guard(state.devices[static_cast<std::size_t>(copy->rank)]);
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(copy->to, copy->from, copy->bytes, cudaMemcpyDeviceToDevice, call.stream));
  }
  launchCollectiveSet(state, registered.set, registered.pointers, capturing);
}

}  // namespace peerlink::coll
