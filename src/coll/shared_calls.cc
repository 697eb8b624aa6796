// Calls that share their buffers at the call (shared_calls.hpp).
#include "coll/shared_calls.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#include <list>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "coll/sharing_choice.hpp"
#include "coll/world_agreement.hpp"
#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/idle_wait.hpp"
#include "core/log.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// `bytes` of `buffer` as a window card of the allocation it lies in, where that allocation is device memory of
// GPU `device` that legacy IPC can share; false otherwise (host, managed, cuMem virtual memory, another GPU's, a
// pointer that is no allocation at all).
bool cardOf(SharedCalls& shared, const void* buffer, std::size_t bytes, int device, WindowCard& card) {
  if (buffer == nullptr || bytes == 0) return false;
  CUdeviceptr start = 0;
  std::size_t size = 0;
  unsigned long long id = 0;
  int ordinal = -1;
  unsigned int type = 0;
  int ipcCapable = 0;
  CUpointer_attribute attributes[] = {
      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
      CU_POINTER_ATTRIBUTE_BUFFER_ID,        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
  void* values[] = {&start, &size, &id, &ordinal, &type, &ipcCapable};
  if (driverApi().pointerGetAttributes(6, attributes, values, reinterpret_cast<CUdeviceptr>(buffer)) != CUDA_SUCCESS) {
    (void)cudaGetLastError();
    return false;
  }
  const auto at = reinterpret_cast<std::uintptr_t>(buffer);
  if (type != CU_MEMORYTYPE_DEVICE || ordinal != device || ipcCapable == 0 || at < start || at + bytes > start + size) {
    return false;
  }
  auto known = shared.handles.find(id);
  if (known == shared.handles.end()) {
    // Allocations freed long ago stay in the map: past this many it starts again (a handle is made again when asked).
    constexpr std::size_t kHandlesKept = 1024;
    if (shared.handles.size() >= kHandlesKept) shared.handles.clear();
    cudaIpcMemHandle_t handle;
    if (cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(start)) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    IpcHandleBytes bytesOfHandle{};
    std::memcpy(bytesOfHandle.data(), &handle, sizeof handle);
    known = shared.handles.emplace(id, bytesOfHandle).first;
  }
  card.ipcHandle = known->second;
  card.offset = at - start;
  card.bytes = bytes;
  return true;
}

CallCard callCardOf(CommState& state, const CallArgs& call, int rank) {
  const std::size_t size = dataTypeSize(call.type);
  const UsedBuffers used = usedBuffersOf(call.collective, rank, call.root);
  const int device = state.devices[static_cast<std::size_t>(rank)];
  const std::size_t sendBytes = sendElementsOf(call.collective, state.nranks, call.count, rank, call.root) * size;
  const std::size_t recvBytes = recvElementsOf(call.collective, state.nranks, call.count, rank, call.root) * size;
  CallCard card;
  bool shareable = true;
  DeviceGuard guard(device);
  if (used.send) shareable = cardOf(state.shared, call.send, sendBytes, device, card.send) && shareable;
  if (used.recv) shareable = cardOf(state.shared, call.recv, recvBytes, device, card.recv) && shareable;
  card.shareable = shareable ? 1 : 0;
  return card;
}

// Waits for `events` to complete, at most the communicator's deadline: whether they did.
bool completedInTime(const CommState& state, const std::vector<Event>& events) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(state.timeoutNs);
  IdleWait idle;
  for (const Event& event : events) {
    for (;;) {
      const cudaError_t status = cudaEventQuery(event.get());
      if (status == cudaSuccess) break;
      if (status != cudaErrorNotReady) {
        (void)cudaGetLastError();
        return false;
      }
      if (std::chrono::steady_clock::now() > deadline) return false;
      idle.idle();
    }
  }
  return true;
}

// Closes the windows of an entry the cache let go, once the kernels of its latest call have ended; where they have
// not by the deadline, they stay open (until the communicator ends) rather than be closed under a kernel.
void closeEvicted(CommState& state, const SharedCallCache::Entry& gone) {
  SharedCalls& shared = state.shared;
  const auto used = shared.lastUse.find(gone.sendWindow);
  const bool idle = used == shared.lastUse.end() || completedInTime(state, used->second);
  if (used != shared.lastUse.end()) shared.lastUse.erase(used);
  if (!idle) {
    logWarn(LogSubsys::Coll,
            "shared buffers: the kernels of a call on windows {} and {} had not ended within the deadline; those "
            "windows stay open until the communicator ends",
            gone.sendWindow, gone.recvWindow);
    return;
  }
  state.windows.remove(gone.sendWindow, WindowUse::SharedByCall);
  state.windows.remove(gone.recvWindow, WindowUse::SharedByCall);
}

// Opens every rank's buffers of `cards` as two windows here (send, recv); every process learns whether every other
// did. The entry now in the cache, or nullopt where some process could not, `failure` then saying which and why.
std::optional<SharedCallCache::Entry> openCall(CommState& state, const std::vector<CallArgs>& set,
                                               const std::vector<CallCard>& cards, std::vector<std::uint8_t> key,
                                               const WorldAllGather& allGather, std::string& failure) {
  std::vector<WindowCard> sendCards;
  std::vector<WindowCard> recvCards;
  std::vector<unsigned char*> ownSend(static_cast<std::size_t>(state.nranks), nullptr);
  std::vector<unsigned char*> ownRecv(static_cast<std::size_t>(state.nranks), nullptr);
  for (const CallCard& card : cards) {
    sendCards.push_back(card.send);
    recvCards.push_back(card.recv);
  }
  for (const int r : state.localRanks()) {
    const auto i = static_cast<std::size_t>(r);
    // A buffer no kernel touches is null here as in every other process (its card has 0 bytes).
    if (cards[i].send.bytes > 0) ownSend[i] = static_cast<unsigned char*>(const_cast<void*>(set[i].send));
    if (cards[i].recv.bytes > 0) ownRecv[i] = static_cast<unsigned char*>(set[i].recv);
  }
  const PeerAccessTable& access = state.peerAccess;
  const PeerReach reach = [&access](int device, int peer) { return access.enabled(device, peer); };
  int sendWindow = 0;
  int recvWindow = 0;
  std::string why;
  try {
    sendWindow = state.windows.add(sendCards, ownSend, state.devices, reach, WindowUse::SharedByCall);
    recvWindow = state.windows.add(recvCards, ownRecv, state.devices, reach, WindowUse::SharedByCall);
  } catch (const Error& error) {
    why = error.what();
    if (sendWindow != 0) state.windows.remove(sendWindow, WindowUse::SharedByCall);
  }
  const std::vector<int> failed = ranksThatFailed(allGather, state.localRanks().size(), state.nranks, !why.empty());
  if (!failed.empty()) {
    if (why.empty()) {
      state.windows.remove(sendWindow, WindowUse::SharedByCall);
      state.windows.remove(recvWindow, WindowUse::SharedByCall);
    }
    failure = fmt::format("rank(s) {} could not open the others' buffers{}{}{}", fmt::join(failed, ", "),
                          why.empty() ? "" : " (here: ", why, why.empty() ? "" : ")");
    return std::nullopt;
  }
  const CallArgs& shape = set[static_cast<std::size_t>(state.localRanks().front())];
  std::optional<SharedCallCache::Entry> gone = state.shared.cache.add({std::move(key), sendWindow, recvWindow});
  logInfo(LogSubsys::Coll,
          "shared buffers: {} of {} bytes on buffers none of the {} latest shared calls used: opened as windows {} "
          "and {}{}",
          collectiveName(shape.collective), shape.count * dataTypeSize(shape.type), kSharedCallsKept, sendWindow,
          recvWindow, gone ? fmt::format(", closing windows {} and {}", gone->sendWindow, gone->recvWindow) : "");
  if (gone) closeEvicted(state, *gone);
  return state.shared.cache.entries().front();
}

// openCall, and where some process could not open the buffers, once more after every rank has let its cached calls
// go (closeSharedCalls says why). A second failure ends sharing on every rank (logged).
std::optional<SharedCallCache::Entry> openCallOrRetry(CommState& state, const std::vector<CallArgs>& set,
                                                      const std::vector<CallCard>& cards,
                                                      const std::vector<std::uint8_t>& key,
                                                      const WorldAllGather& allGather) {
  std::string failure;
  if (auto entry = openCall(state, set, cards, key, allGather, failure)) return entry;
  logInfo(LogSubsys::Coll, "shared buffers: {}; every rank closes its {} cached calls and tries again", failure,
          closeSharedCalls(state));
  if (auto entry = openCall(state, set, cards, key, allGather, failure)) return entry;
  state.shared.mode = BufferSharing::Off;
  logWarn(LogSubsys::Coll,
          "shared buffers: {}, with no call cached; calls on unregistered buffers go through the staging windows "
          "from now on",
          failure);
  return std::nullopt;
}

}  // namespace

std::size_t closeSharedCalls(CommState& state) {
  std::list<SharedCallCache::Entry> gone = state.shared.cache.clear();
  for (const SharedCallCache::Entry& entry : gone) closeEvicted(state, entry);
  return gone.size();
}

std::optional<SharedSet> sharedSet(CommState& state, const std::vector<CallArgs>& set, bool capturing,
                                   const CallExchange& exchange) {
  const std::vector<int>& local = state.localRanks();
  const CallArgs& shape = set[static_cast<std::size_t>(local.front())];
  const std::size_t bytes = shape.count * dataTypeSize(shape.type);
  if (!sharesAtCall(state.shared.mode, shape.collective, bytes, capturing)) {
    return std::nullopt;
  }
  std::vector<std::vector<std::uint8_t>> mine;
  for (const int r : local) {
    const CallCard card = callCardOf(state, set[static_cast<std::size_t>(r)], r);
    const auto* raw = reinterpret_cast<const std::uint8_t*>(&card);
    mine.emplace_back(raw, raw + sizeof card);
  }
  std::optional<std::vector<std::uint8_t>> gathered;
  if (state.shared.mode == BufferSharing::Auto) {
    gathered = exchange.allGatherWithin(mine, sizeof(CallCard), sharingPatience(bytes));
    if (!gathered) {  // some rank came later than sharing would gain: every rank stages
      ++state.shared.late;
      return std::nullopt;
    }
  } else {
    gathered = exchange.allGather(mine, sizeof(CallCard));
  }
  std::vector<std::uint8_t> all = std::move(*gathered);
  std::vector<CallCard> cards(static_cast<std::size_t>(state.nranks));
  if (all.size() != cards.size() * sizeof(CallCard)) {
    throw Error(ErrorCode::Internal, "a shared call: the exchange returned another size");
  }
  std::memcpy(cards.data(), all.data(), all.size());
  std::vector<int> unshareable;
  for (int r = 0; r < state.nranks; ++r) {
    if (cards[static_cast<std::size_t>(r)].shareable == 0) unshareable.push_back(r);
  }
  if (!unshareable.empty()) {
    if (!state.shared.unshareableLogged) {
      state.shared.unshareableLogged = true;
      logInfo(LogSubsys::Coll,
              "shared buffers: rank(s) {} passed buffers that cannot be shared with other processes (not cudaMalloc "
              "memory of their GPU: cuMem virtual memory, as PyTorch's expandable segments, host or managed memory); "
              "such calls go through the staging windows",
              fmt::join(unshareable, ", "));
    }
    return std::nullopt;
  }
  std::optional<SharedCallCache::Entry> entry;
  if (const SharedCallCache::Entry* hit = state.shared.cache.find(all)) {
    entry = *hit;
  } else {
    entry = openCallOrRetry(state, set, cards, all, exchange.allGather);
    if (!entry) return std::nullopt;
  }
  const UserWindow* send = state.windows.byId(entry->sendWindow);
  const UserWindow* recv = state.windows.byId(entry->recvWindow);
  if (send == nullptr || recv == nullptr) throw Error(ErrorCode::Internal, "a shared call: its windows are gone");
  std::vector<PeerPointerTable> tables(static_cast<std::size_t>(state.nranks));
  for (const int v : local) {
    PeerPointerTable& table = tables[static_cast<std::size_t>(v)];
    for (int p = 0; p < state.nranks; ++p) {
      table.send[p] = send->base[static_cast<std::size_t>(v)][static_cast<std::size_t>(p)];
      table.recv[p] = recv->base[static_cast<std::size_t>(v)][static_cast<std::size_t>(p)];
    }
  }
  // The choice's facts from every rank's buffers as the first local rank addresses them: alike on every rank (a
  // buffer no kernel touches is null everywhere).
  std::vector<CallArgs> full = set;
  const PeerPointerTable& lead = tables[static_cast<std::size_t>(local.front())];
  for (int p = 0; p < state.nranks; ++p) {
    full[static_cast<std::size_t>(p)].send = lead.send[p];
    full[static_cast<std::size_t>(p)].recv = lead.recv[p];
  }
  return SharedSet{RegisteredSet{std::move(full), SetPointers(std::move(tables)), std::nullopt}, entry->sendWindow};
}

void launchSharedSet(CommState& state, const SharedSet& shared, bool capturing) {
  launchRegisteredSet(state, shared.set, capturing);
  ++state.shared.calls;
  std::vector<Event>& events = state.shared.lastUse[shared.entry];
  const std::vector<int>& local = state.localRanks();
  for (std::size_t i = 0; i < local.size(); ++i) {
    const auto r = static_cast<std::size_t>(local[i]);
    DeviceGuard guard(state.devices[r]);
    if (events.size() <= i) events.emplace_back(state.devices[r], cudaEventDisableTiming);
    PEERLINK_CUDA_CHECK(cudaEventRecord(events[i].get(), shared.set.set[r].stream));
  }
}

}  // namespace peerlink::coll
