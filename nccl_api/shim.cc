// The Shim's core: failures into NCCL's codes and ncclGetLastError, the registry of live handles, per-thread
// state, and the calls about versions, ids, errors and a communicator's facts.
#include "nccl_api/shim.hpp"

#include <atomic>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "core/log.hpp"
#include "nccl_api/config.hpp"

namespace peerlink::nccl {
namespace {

std::atomic<std::uint64_t> nextShimId{1};

}  // namespace

Shim::Shim(ShimParts parts) : id_(nextShimId++), parts_(std::move(parts)) {}

Shim::~Shim() {
  std::vector<ncclComm*> left;
  for (const auto& entry : live_) left.push_back(entry.first);
  for (ncclComm* handle : left) dropHandle(handle);
}

std::size_t Shim::liveHandles() const {
  const std::shared_lock<std::shared_mutex> lock(registryMutex_);
  return live_.size();
}

Shim::ThreadState& Shim::thread() {
  thread_local std::unordered_map<std::uint64_t, ThreadState> states;
  return states[id_];
}

const ApiSettings& Shim::settings() const {
  if (const auto* failure = std::get_if<Failure>(&parts_.settings)) throw ApiError(*failure);
  return std::get<ApiSettings>(parts_.settings);
}

RealNccl& Shim::realOrThrow(const char* call) const {
  if (parts_.real == nullptr) {
    throw ApiError(ncclInternalError,
                   fmt::format("{} needs the real NCCL, which is not loaded ({})", call, parts_.realFailure));
  }
  return *parts_.real;
}

ncclResult_t Shim::fail(ncclComm_t comm, const Failure& failure) noexcept {
  try {
    thread().lastError = failure.message;
    {
      const std::shared_lock<std::shared_mutex> lock(registryMutex_);
      if (comm != nullptr && live_.count(comm) != 0) {
        const std::lock_guard<std::mutex> handleLock(comm->mutex);
        comm->lastError = failure.message;
      }
    }
    logWarn(LogSubsys::Coll, "NCCL API: {} ({})", failure.message, resultName(failure.result));
  } catch (...) {  // out of memory for the text: the code still tells the caller
  }
  return failure.result;
}

ncclComm* Shim::newHandle() {
  Lease handle(new ncclComm, &Shim::releaseHandle);
  ncclComm* raw = handle.get();
  const std::unique_lock<std::shared_mutex> lock(registryMutex_);
  live_.emplace(raw, std::move(handle));
  return raw;
}

Shim::Lease Shim::leaseOf(ncclComm* handle) const {
  const std::shared_lock<std::shared_mutex> lock(registryMutex_);
  const auto found = live_.find(handle);
  return found == live_.end() ? nullptr : found->second;
}

Shim::Lease Shim::require(ncclComm_t comm, const char* call, bool ready) {
  if (comm == nullptr) throw ApiError(ncclInvalidArgument, "the communicator is NULL");
  Lease lease = leaseOf(comm);
  if (lease == nullptr) {
    throw ApiError(ncclInvalidArgument,
                   fmt::format("{} is not a communicator: never created, or already destroyed or aborted",
                               static_cast<const void*>(comm)));
  }
  settle(comm);
  if (!ready) return lease;
  const std::lock_guard<std::mutex> lock(comm->mutex);
  switch (comm->stage) {
    case ncclComm::Stage::Creating:
      throw ApiError(ncclInvalidUsage,
                     "the communicator is still being created (ncclGroupEnd has not run, or other ranks of this "
                     "process have not called ncclCommSplit yet)");
    case ncclComm::Stage::Failed: throw ApiError(comm->failure.result, "its creation failed: " + comm->failure.message);
    case ncclComm::Stage::Ready: break;
  }
  if (comm->finalized) {
    throw ApiError(ncclInvalidUsage, fmt::format("{} after ncclCommFinalize: only ncclCommDestroy may follow", call));
  }
  return lease;
}

void Shim::settle(ncclComm* handle) {
  std::shared_ptr<SplitSlot> slot;
  {
    const std::lock_guard<std::mutex> lock(handle->mutex);
    if (handle->stage != ncclComm::Stage::Creating || handle->split == nullptr || !handle->split->done) return;
    slot = std::move(handle->split);
  }
  if (slot->failure) {
    const std::lock_guard<std::mutex> lock(handle->mutex);
    handle->stage = ncclComm::Stage::Failed;
    handle->failure = *slot->failure;
    return;
  }
  adopt(handle, slot->world, slot->rank, "split from a communicator peerlink serves");
}

void Shim::adopt(ncclComm* handle, const std::shared_ptr<NativeWorld>& world, int rank, const std::string& why) {
  {
    const std::lock_guard<std::mutex> lock(handle->mutex);
    handle->world = world;
    handle->rank = rank;
    handle->nranks = world->size();
    handle->device = world->device(rank);
    handle->stage = ncclComm::Stage::Ready;
  }
  logInfo(LogSubsys::Init, "NCCL API: communicator {} '{}' rank {} of {} on GPU {}: served by peerlink ({})",
          static_cast<const void*>(handle), handle->name, rank, handle->nranks, handle->device, why);
}

void Shim::adoptReal(ncclComm* handle, ncclComm_t real, const std::string& why) {
  {
    const std::lock_guard<std::mutex> lock(handle->mutex);
    handle->real = real;
    handle->stage = ncclComm::Stage::Ready;
  }
  logInfo(LogSubsys::Init, "NCCL API: communicator {} '{}': served by NCCL {} at {} ({})",
          static_cast<const void*>(handle), handle->name, versionText(parts_.real->versionCode), parts_.real->path,
          why);
}

bool Shim::dropHandle(ncclComm* handle) {
  Lease held;  // let go last, after the registry's lock
  {
    const std::unique_lock<std::shared_mutex> lock(registryMutex_);
    const auto found = live_.find(handle);
    if (found == live_.end()) return false;
    held = std::move(found->second);
    live_.erase(found);
  }
  GroupState& group = thread().group;
  group.creations.erase(std::remove_if(group.creations.begin(), group.creations.end(),
                                       [&](const PendingCreation& pending) { return pending.handle.get() == handle; }),
                        group.creations.end());
  std::shared_ptr<NativeWorld> world;  // a split's handle may be adopted by another thread's call meanwhile
  int rank = -1;
  {
    const std::lock_guard<std::mutex> lock(handle->mutex);
    world = handle->world;
    rank = handle->rank;
  }
  if (world != nullptr && world->localRanks().size() > 1) {
    try {
      world->forget(rank);
    } catch (...) {  // the handle goes anyway; the world only fails the others' calls sooner
    }
  }
  return true;
}

void Shim::releaseHandle(ncclComm* handle) noexcept {
  for (void* registration : handle->registrations) delete static_cast<LocalRegistration*>(registration);
  for (Window* window : handle->windows) delete window;
  try {
    logInfo(LogSubsys::Coll, "NCCL API: communicator {} rank {}: {} calls served by peerlink, {} by the real NCCL",
            static_cast<const void*>(handle), handle->rank, handle->served.load(), handle->forwarded.load());
  } catch (...) {  // out of memory for the line: nothing to report it to
  }
  delete handle;
}

void Shim::openRealGroup() {
  GroupState& group = thread().group;
  RealNccl& real = realOrThrow("a group");
  while (group.realOpen < group.depth) {
    const ncclResult_t result = real.groupStart();
    if (result != ncclSuccess) throw ApiError(result, "the real NCCL's ncclGroupStart failed");
    ++group.realOpen;
  }
}

RealNccl& Shim::realInGroup() {
  if (thread().group.depth > 0) openRealGroup();
  return realOrThrow("a forwarded call");
}

ncclResult_t Shim::forwarded(ncclComm* handle, ncclResult_t result) {
  if (handle != nullptr) ++handle->forwarded;
  if (result == ncclSuccess || result == ncclInProgress) return result;
  const char* text =
      parts_.real->getLastError != nullptr ? parts_.real->getLastError(handle ? handle->real : nullptr) : nullptr;
  throw ApiError(result, fmt::format("the real NCCL failed it: {}",
                                     text != nullptr && *text != '\0' ? text : resultString(result)));
}

// ---- versions, ids, errors ----------------------------------------------------------------------------------

ncclResult_t Shim::getVersion(int* version) {
  return run("ncclGetVersion", nullptr, [&] {
    if (version == nullptr) throw ApiError(ncclInvalidArgument, "version is NULL");
    *version = settings().versionCode;
    return ncclSuccess;
  });
}

ncclResult_t Shim::getUniqueId(ncclUniqueId* id) {
  return run("ncclGetUniqueId", nullptr, [&] {
    if (id == nullptr) throw ApiError(ncclInvalidArgument, "uniqueId is NULL");
    const auto choice = chooseIdServer(settings().fallback, parts_.launch, parts_.real != nullptr, parts_.realFailure);
    if (const auto* failure = std::get_if<Failure>(&choice)) throw ApiError(*failure);
    const IdChoice& chosen = std::get<IdChoice>(choice);
    logInfo(LogSubsys::Init, "NCCL API: ncclGetUniqueId: an id of {} ({})",
            chosen.kind == IdKind::Nccl         ? "the real NCCL"
            : chosen.kind == IdKind::Rendezvous ? "peerlink whose root may forward"
                                                : "peerlink",
            chosen.reason);
    if (chosen.kind == IdKind::Nccl) return forwarded(nullptr, parts_.real->getUniqueId(id));
    static_assert(sizeof(ncclUniqueId) == kUniqueIdBytes, "ncclUniqueId and peerlink's UniqueId are both 128 bytes");
    // The real NCCL is asked for its id only by the root, and only once it sends the world there: an id of the
    // real NCCL starts its bootstrap root (a thread blocked in accept, a listening socket) until the process
    // exits, which a world peerlink serves would never use.
    const UniqueId made = parts_.platform->makeId(
        settings().params, chosen.kind == IdKind::Rendezvous ? realUniqueIdSource(*parts_.real) : nullptr);
    std::memcpy(id->internal, made.bytes, kUniqueIdBytes);
    return ncclSuccess;
  });
}

const char* Shim::getErrorString(ncclResult_t result) noexcept {
  return resultString(result);
}

const char* Shim::getLastError(ncclComm_t comm) {
  ThreadState* state = nullptr;
  try {
    state = &thread();  // the thread's state is made on first use: memory may run out there
  } catch (...) {
    return "peerlink: no memory to keep this thread's last error";
  }
  try {
    const std::shared_lock<std::shared_mutex> lock(registryMutex_);
    if (comm != nullptr && live_.count(comm) != 0) {
      const std::lock_guard<std::mutex> handleLock(comm->mutex);
      if (!comm->lastError.empty()) {
        state->lastError = comm->lastError;
      } else if (comm->real != nullptr && parts_.real->getLastError != nullptr) {
        return parts_.real->getLastError(comm->real);
      }
    }
  } catch (...) {  // the last error stays as it was
  }
  return state->lastError.c_str();
}

void Shim::resetDebugInit() {
  try {
    configureLogging(Params::fromEnvironment());
  } catch (const std::exception& error) {
    fail(nullptr, failureOf(error, "ncclResetDebugInit"));
  }
  if (parts_.real != nullptr && parts_.real->resetDebugInit != nullptr) parts_.real->resetDebugInit();
}

// ---- a communicator's facts ---------------------------------------------------------------------------------

ncclResult_t Shim::commGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  return run("ncclCommGetAsyncError", comm, [&] {
    const Lease handle = require(comm, "ncclCommGetAsyncError", false);
    if (error == nullptr) throw ApiError(ncclInvalidArgument, "asyncError is NULL");
    std::shared_ptr<NativeWorld> world;
    {
      const std::lock_guard<std::mutex> lock(handle->mutex);
      if (handle->stage == ncclComm::Stage::Creating) {
        *error = ncclInProgress;
        return ncclSuccess;
      }
      if (handle->stage == ncclComm::Stage::Failed) {
        *error = handle->failure.result;
        return ncclSuccess;
      }
      world = handle->world;
    }
    if (handle->real != nullptr) {
      return forwarded(handle.get(), parts_.real->commGetAsyncError(handle->real, error));
    }
    const std::optional<Error> failure = world->backend().asyncError();
    *error = failure ? resultOf(failure->code()) : ncclSuccess;
    if (failure) {
      const std::lock_guard<std::mutex> lock(handle->mutex);
      handle->lastError = fmt::format("ncclCommGetAsyncError: {}", failure->what());
    }
    return ncclSuccess;
  });
}

ncclResult_t Shim::commCount(ncclComm_t comm, int* count) {
  return run("ncclCommCount", comm, [&] {
    const Lease handle = require(comm, "ncclCommCount");
    if (count == nullptr) throw ApiError(ncclInvalidArgument, "count is NULL");
    if (handle->real != nullptr) return forwarded(handle.get(), parts_.real->commCount(handle->real, count));
    *count = handle->nranks;
    return ncclSuccess;
  });
}

ncclResult_t Shim::commCuDevice(ncclComm_t comm, int* device) {
  return run("ncclCommCuDevice", comm, [&] {
    const Lease handle = require(comm, "ncclCommCuDevice");
    if (device == nullptr) throw ApiError(ncclInvalidArgument, "device is NULL");
    if (handle->real != nullptr) {
      return forwarded(handle.get(), parts_.real->commCuDevice(handle->real, device));
    }
    *device = handle->device;
    return ncclSuccess;
  });
}

ncclResult_t Shim::commUserRank(ncclComm_t comm, int* rank) {
  return run("ncclCommUserRank", comm, [&] {
    const Lease handle = require(comm, "ncclCommUserRank");
    if (rank == nullptr) throw ApiError(ncclInvalidArgument, "rank is NULL");
    if (handle->real != nullptr) {
      return forwarded(handle.get(), parts_.real->commUserRank(handle->real, rank));
    }
    *rank = handle->rank;
    return ncclSuccess;
  });
}

}  // namespace peerlink::nccl
