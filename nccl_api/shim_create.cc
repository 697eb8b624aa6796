// The Shim's communicators: creation (by rank, all in one process, by split), inside a group or not, and the end
// of one (finalize, destroy, abort).
#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "bootstrap/verdict.hpp"
#include "core/log.hpp"
#include "core/parallel_each.hpp"
#include "nccl_api/config.hpp"
#include "nccl_api/shim.hpp"

namespace peerlink::nccl {
namespace {

bool isPeerlinkId(const UniqueId& id) {
  try {
    uniqueIdAddress(id);  // decodes the id, throwing for bytes that are no peerlink id
    return true;
  } catch (const Error&) {
    return false;
  }
}

CommConfig configOrThrow(const ncclConfig_t* config) {
  auto read = readCommConfig(config);
  if (const auto* failure = std::get_if<Failure>(&read)) throw ApiError(*failure);
  return std::get<CommConfig>(read);
}

bool sameId(const UniqueId& a, const UniqueId& b) {
  return std::memcmp(a.bytes, b.bytes, kUniqueIdBytes) == 0;
}

UniqueId peerlinkIdOf(const ncclUniqueId& id) {
  UniqueId peerlinkId;
  std::memcpy(peerlinkId.bytes, id.internal, kUniqueIdBytes);
  return peerlinkId;
}

}  // namespace

ncclResult_t Shim::commInitRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                                const ncclConfig_t* config, const char* call) {
  return initRank(comm, nranks, &id, 1, rank, config, call);
}

ncclResult_t Shim::initRank(ncclComm_t* comm, int nranks, const ncclUniqueId* ids, int nIds, int rank,
                            const ncclConfig_t* config, const char* call) {
  const ncclUniqueId& id = ids[0];
  return run(call, nullptr, [&] {
    if (comm == nullptr) throw ApiError(ncclInvalidArgument, "newcomm is NULL");
    *comm = nullptr;
    if (nranks < 1 || rank < 0 || rank >= nranks) {
      throw ApiError(ncclInvalidArgument, fmt::format("rank {} of {} ranks: ranks are 0..nranks-1", rank, nranks));
    }
    const CommConfig parsed = configOrThrow(config);
    const UniqueId peerlinkId = peerlinkIdOf(id);
    const auto server =
        chooseRankServer(settings().fallback, isPeerlinkId(peerlinkId), parts_.real != nullptr, parts_.realFailure);
    if (const auto* failure = std::get_if<Failure>(&server)) throw ApiError(*failure);
    ncclComm* handle = newHandle();
    handle->name = parsed.name;
    handle->rank = rank;
    handle->nranks = nranks;
    GroupState& group = thread().group;
    if (std::get<Server>(server).nccl) {
      try {
        ncclComm_t real = nullptr;
        RealNccl& api = realInGroup();
        auto* realConfig = const_cast<ncclConfig_t*>(config);
        if (nIds > 1) {
          // Every id to the real NCCL's own ncclCommInitRankScalable: every rank passes the same ones, as it requires,
          // and the roots its ncclGetUniqueId started for them are all used.
          if (api.commInitRankScalable == nullptr) {
            throw ApiError(
                ncclInvalidUsage,
                fmt::format("{} unique ids of the real NCCL need its ncclCommInitRankScalable, which NCCL {} "
                            "at {} lacks (NCCL 2.23 and later have it)",
                            nIds, versionText(api.versionCode), api.path));
          }
          forwarded(nullptr,
                    api.commInitRankScalable(&real, nranks, rank, nIds, const_cast<ncclUniqueId*>(ids), realConfig));
        } else {
          forwarded(nullptr, config != nullptr ? api.commInitRankConfig(&real, nranks, id, rank, realConfig)
                                               : api.commInitRank(&real, nranks, id, rank));
        }
        adoptReal(handle, real, std::get<Server>(server).reason);
      } catch (...) {
        dropHandle(handle);
        throw;
      }
      *comm = handle;
      return ncclSuccess;
    }
    logInfo(LogSubsys::Init, "NCCL API: {} rank {} of {}: {}", call, rank, nranks, describeConfig(parsed));
    PendingCreation pending{leaseOf(handle), peerlinkId, nranks, rank, parts_.platform->currentDevice(), {}};
    if (config != nullptr) {
      const auto* raw = reinterpret_cast<const unsigned char*>(config);
      pending.config.assign(raw, raw + parsed.size);
    }
    if (group.depth > 0) {
      group.creations.push_back(pending);
      group.native = true;
      *comm = handle;
      return ncclSuccess;
    }
    std::vector<PendingCreation> alone{pending};
    createPending(alone);
    std::optional<Failure> failure;
    {
      const std::lock_guard<std::mutex> lock(handle->mutex);
      if (handle->stage == ncclComm::Stage::Failed) failure = handle->failure;
    }
    if (failure) {
      dropHandle(handle);
      throw ApiError(*failure);
    }
    *comm = handle;
    return ncclSuccess;
  });
}

ncclResult_t Shim::commInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nIds, const ncclUniqueId* ids,
                                        const ncclConfig_t* config) {
  if (ids == nullptr || nIds < 1) {
    return run("ncclCommInitRankScalable", nullptr, [&]() -> ncclResult_t {
      throw ApiError(ncclInvalidArgument,
                     fmt::format("{} unique ids at {}: at least one", nIds, static_cast<const void*>(ids)));
    });
  }
  std::vector<bool> peerlinkIds;
  for (int i = 0; i < nIds; ++i) peerlinkIds.push_back(isPeerlinkId(peerlinkIdOf(ids[i])));
  if (const std::optional<Failure> mixed = checkScalableIds(peerlinkIds)) {
    return run("ncclCommInitRankScalable", nullptr, [&]() -> ncclResult_t { throw ApiError(*mixed); });
  }
  // The real NCCL's ids (a job the launcher says spans machines, or PEERLINK_NCCL_FALLBACK=ALL): all of them to its
  // own ncclCommInitRankScalable.
  if (!peerlinkIds.front()) return initRank(comm, nranks, ids, nIds, rank, config, "ncclCommInitRankScalable");
  // Every rank holds the same ids in the same order; peerlink's rendezvous needs one: the first, whose root also
  // decides alone whether the world goes to the real NCCL (with one id of the real NCCL's for every rank). The roots
  // of the others that this process made end now rather than at their deadline, where no rank reached them.
  for (int i = 1; i < nIds; ++i) {
    const UniqueId other = peerlinkIdOf(ids[i]);
    if (!sameId(other, peerlinkIdOf(ids[0]))) parts_.platform->retireId(other);
  }
  return commInitRank(comm, nranks, ids[0], rank, config, "ncclCommInitRankScalable");
}

void Shim::createPending(std::vector<PendingCreation>& creations) {
  // One world per id, created side by side: processes may create several worlds in one group in any order.
  std::vector<std::vector<PendingCreation*>> worlds;
  for (PendingCreation& pending : creations) {
    auto same = std::find_if(worlds.begin(), worlds.end(),
                             [&](const auto& members) { return sameId(members.front()->id, pending.id); });
    if (same == worlds.end()) {
      worlds.push_back({&pending});
    } else {
      same->push_back(&pending);
    }
  }
  if (worlds.size() == 1) {
    createWorld(worlds.front(), std::this_thread::get_id());
    return;
  }
  const std::thread::id owner = std::this_thread::get_id();
  try {
    forEachInParallel(worlds.size(), [&](std::size_t w) { createWorld(worlds[w], owner); });
  } catch (const std::exception& error) {
    // No thread for some world (a process limit): its handles, still being created, fail with the reason.
    const Failure failure = failureOf(error, "ncclGroupEnd");
    for (auto& members : worlds) {
      for (PendingCreation* pending : members) {
        const std::lock_guard<std::mutex> lock(pending->handle->mutex);
        if (pending->handle->stage != ncclComm::Stage::Creating) continue;
        pending->handle->stage = ncclComm::Stage::Failed;
        pending->handle->failure = failure;
      }
    }
  }
}

void Shim::createWorld(std::vector<PendingCreation*>& members, std::thread::id owner) {
  const UniqueId& id = members.front()->id;
  const auto failAll = [&](const Failure& failure) {
    for (PendingCreation* pending : members) {
      const std::lock_guard<std::mutex> lock(pending->handle->mutex);
      pending->handle->stage = ncclComm::Stage::Failed;
      pending->handle->failure = failure;
    }
  };
  // The ranks this process creates of one world must agree on its size and not repeat.
  std::vector<bool> seen(static_cast<std::size_t>(members.front()->nranks), false);
  for (const PendingCreation* pending : members) {
    if (pending->nranks != members.front()->nranks || seen[static_cast<std::size_t>(pending->rank)]) {
      failAll({ncclInvalidArgument,
               fmt::format("ranks of one unique id created in this group disagree: rank {} of {} ranks beside rank "
                           "{} of {} (each rank once, every one with the same nranks)",
                           pending->rank, pending->nranks, members.front()->rank, members.front()->nranks)});
      return;
    }
    seen[static_cast<std::size_t>(pending->rank)] = true;
  }
  {
    // Ranks of one world from several threads of a process, each creating its own: peerlink's communicator
    // serves a process's ranks of a world together, so this cannot be served.
    const std::lock_guard<std::mutex> lock(idsMutex_);
    if (std::any_of(idsCreating_.begin(), idsCreating_.end(),
                    [&](const UniqueId& other) { return sameId(other, id); })) {
      failAll({ncclInvalidUsage,
               "another thread of this process is creating a rank of this world: peerlink serves a process's ranks "
               "of one world together; create them from one thread inside ncclGroupStart/End (or ncclCommInitAll), "
               "or run one process per GPU"});
      return;
    }
    idsCreating_.push_back(id);
  }
  try {
    CreatedWorld created = createWithFallback(members);
    if (created.backend != nullptr) {
      auto world = std::make_shared<NativeWorld>(std::move(created.backend), *parts_.platform, owner);
      for (PendingCreation* pending : members)
        adopt(pending->handle.get(), world, pending->rank, "a peerlink unique id");
    } else {
      for (PendingCreation* pending : members) {
        adoptReal(pending->handle.get(), created.real[static_cast<std::size_t>(pending->rank)], created.why);
      }
    }
  } catch (const std::exception& error) {
    failAll(failureOf(error, "creating the communicator"));
  } catch (...) {
    failAll(failureOf(std::runtime_error("an unknown exception"), "creating the communicator"));
  }
  const std::lock_guard<std::mutex> lock(idsMutex_);
  idsCreating_.erase(
      std::find_if(idsCreating_.begin(), idsCreating_.end(), [&](const UniqueId& other) { return sameId(other, id); }));
}

Shim::CreatedWorld Shim::createWithFallback(std::vector<PendingCreation*>& members) {
  std::vector<int> ranks;
  std::vector<int> devices;
  for (const PendingCreation* pending : members) {
    ranks.push_back(pending->rank);
    devices.push_back(pending->device);
  }
  const int nranks = members.front()->nranks;
  try {
    return {parts_.platform->createWorld(members.front()->id, nranks, ranks, devices, settings().params,
                                         forwardAbility(settings().fallback, parts_.real != nullptr)),
            {},
            {}};
  } catch (const bootstrap::ForwardedWorld& verdict) {
    return forwardWorld(members, verdict);
  } catch (const Error& error) {
    // A world entirely in this process that peerlink cannot serve (GPUs without peer access) can still be the
    // real NCCL's: every rank is here, so no other process needs to agree.
    const bool whole = static_cast<int>(members.size()) == nranks;
    if (error.code() != ErrorCode::Unsupported || !whole || settings().fallback != Fallback::Auto ||
        parts_.real == nullptr) {
      throw;
    }
    logWarn(LogSubsys::Init, "NCCL API: {}; the real NCCL serves this world (PEERLINK_NCCL_FALLBACK=AUTO)",
            error.what());
    std::vector<int> byRank(static_cast<std::size_t>(nranks));
    for (const PendingCreation* pending : members) byRank[static_cast<std::size_t>(pending->rank)] = pending->device;
    CreatedWorld created{nullptr, std::vector<ncclComm_t>(static_cast<std::size_t>(nranks)),
                         "peerlink's communicator cannot serve these GPUs (PEERLINK_NCCL_FALLBACK=AUTO)"};
    forwarded(nullptr, parts_.real->commInitAll(created.real.data(), nranks, byRank.data()));
    return created;
  }
}

Shim::CreatedWorld Shim::forwardWorld(std::vector<PendingCreation*>& members,
                                      const bootstrap::ForwardedWorld& verdict) {
  // Every rank of the world heard the same verdict, which the root gives only where every rank's hello said it can
  // follow (a rank that cannot would leave the others waiting in the real NCCL's creation, which has no deadline).
  const ForwardAbility ability = forwardAbility(settings().fallback, parts_.real != nullptr);
  if (ability != ForwardAbility::Able) {
    throw ApiError(ncclInternalError,
                   fmt::format("{}; but this process's hello told the root it cannot follow there: {}", verdict.what(),
                               bootstrap::whyUnableToForward(ability)));
  }
  // The root's id, up to its last non-zero byte (decodeForward checked its length); zeros after, as it was made.
  ncclUniqueId realId{};
  static_assert(sizeof realId.internal == bootstrap::kMaxForwardIdBytes, "ncclUniqueId is 128 bytes");
  std::memcpy(realId.internal, verdict.ncclId().data(), std::min(verdict.ncclId().size(), sizeof realId.internal));
  const int nranks = members.front()->nranks;
  CreatedWorld created{nullptr, std::vector<ncclComm_t>(static_cast<std::size_t>(nranks)),
                       fmt::format("the bootstrap root sent every rank there: {} (PEERLINK_NCCL_FALLBACK={})",
                                   verdict.reason(), fallbackName(settings().fallback))};
  RealNccl& api = *parts_.real;
  // This process's ranks of the world wait for each other in the real NCCL's creation: one group makes it wait once.
  const bool together = members.size() > 1;
  std::exception_ptr first;
  const auto note = [&](ncclResult_t result) {
    try {
      forwarded(nullptr, result);
    } catch (const ApiError& error) {
      if (!first) {
        first = std::make_exception_ptr(
            ApiError(error.result(), fmt::format("{} (the bootstrap root sent every rank to the real NCCL: {})",
                                                 error.what(), verdict.reason())));
      }
    }
  };
  // The real NCCL takes each rank's GPU from the current device when its creation is called: this runs at
  // ncclGroupEnd, or on a thread of its own, after the caller's cudaSetDevice of each rank.
  const int callersDevice = parts_.platform->currentDevice();
  if (together) forwarded(nullptr, api.groupStart());
  for (PendingCreation* pending : members) {
    ncclComm_t* slot = &created.real[static_cast<std::size_t>(pending->rank)];
    // The bytes of a config as the caller passed it; the real NCCL reads them by their own size and version.
    auto* config = pending->config.empty() ? nullptr : reinterpret_cast<ncclConfig_t*>(pending->config.data());
    parts_.platform->setCurrentDevice(pending->device);
    note(config != nullptr ? api.commInitRankConfig(slot, nranks, realId, pending->rank, config)
                           : api.commInitRank(slot, nranks, realId, pending->rank));
  }
  if (together) note(api.groupEnd());
  parts_.platform->setCurrentDevice(callersDevice);
  if (first) {
    // The handles fail together: none keeps a communicator of the real NCCL's that the others did not get.
    for (ncclComm_t made : created.real) {
      if (made != nullptr && api.commAbort != nullptr) api.commAbort(made);
    }
    std::rethrow_exception(first);
  }
  return created;
}

ncclResult_t Shim::commInitAll(ncclComm_t* comms, int ndev, const int* devices) {
  return run("ncclCommInitAll", nullptr, [&] {
    if (comms == nullptr) throw ApiError(ncclInvalidArgument, "comms is NULL");
    if (ndev < 1) throw ApiError(ncclInvalidArgument, fmt::format("ndev is {}: at least 1", ndev));
    std::vector<int> list(static_cast<std::size_t>(ndev));
    const int count = parts_.platform->deviceCount();
    for (int i = 0; i < ndev; ++i) {
      list[static_cast<std::size_t>(i)] = devices != nullptr ? devices[i] : i;
      if (list[static_cast<std::size_t>(i)] < 0 || list[static_cast<std::size_t>(i)] >= count) {
        throw ApiError(ncclInvalidArgument, fmt::format("device {} (entry {}): this process sees {} CUDA devices",
                                                        list[static_cast<std::size_t>(i)], i, count));
      }
    }
    std::vector<ncclComm*> handles;
    for (int i = 0; i < ndev; ++i) handles.push_back(newHandle());
    const auto forward = [&](const std::string& why) {
      std::vector<ncclComm_t> real(static_cast<std::size_t>(ndev));
      forwarded(nullptr, parts_.real->commInitAll(real.data(), ndev, list.data()));
      for (int i = 0; i < ndev; ++i)
        adoptReal(handles[static_cast<std::size_t>(i)], real[static_cast<std::size_t>(i)], why);
    };
    try {
      if (settings().fallback == Fallback::All) {
        realOrThrow("ncclCommInitAll under PEERLINK_NCCL_FALLBACK=ALL");
        forward("PEERLINK_NCCL_FALLBACK=ALL");
      } else {
        std::shared_ptr<WorldBackend> backend;
        try {
          backend = parts_.platform->createLocalWorld(list, settings().params);
        } catch (const Error& error) {
          if (error.code() != ErrorCode::Unsupported || settings().fallback != Fallback::Auto || !parts_.real) throw;
          logWarn(LogSubsys::Init, "NCCL API: {}; the real NCCL serves these GPUs (PEERLINK_NCCL_FALLBACK=AUTO)",
                  error.what());
          forward(std::string("peerlink cannot serve these GPUs: ") + error.what());
        }
        if (backend != nullptr) {
          auto world = std::make_shared<NativeWorld>(std::move(backend), *parts_.platform, std::this_thread::get_id());
          for (int i = 0; i < ndev; ++i) adopt(handles[static_cast<std::size_t>(i)], world, i, "ncclCommInitAll");
        }
      }
    } catch (...) {
      for (ncclComm* handle : handles) dropHandle(handle);
      throw;
    }
    for (int i = 0; i < ndev; ++i) comms[i] = handles[static_cast<std::size_t>(i)];
    return ncclSuccess;
  });
}

ncclResult_t Shim::commSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, const ncclConfig_t* config) {
  return run("ncclCommSplit", comm, [&] {
    const Lease parent = require(comm, "ncclCommSplit");
    if (newcomm == nullptr) throw ApiError(ncclInvalidArgument, "newcomm is NULL");
    *newcomm = nullptr;
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
      throw ApiError(ncclInvalidArgument, fmt::format("color {}: a color is >= 0, or NCCL_SPLIT_NOCOLOR", color));
    }
    const CommConfig parsed = configOrThrow(config);
    if (parent->real != nullptr) {
      ncclComm_t real = nullptr;
      forwarded(parent.get(),
                realInGroup().commSplit(parent->real, color, key, &real, const_cast<ncclConfig_t*>(config)));
      if (real != nullptr) {
        ncclComm* handle = newHandle();
        handle->name = parsed.name;
        adoptReal(handle, real, "split from a communicator the real NCCL serves");
        *newcomm = handle;
      }
      return ncclSuccess;
    }
    std::shared_ptr<SplitSlot> slot = color >= 0 ? std::make_shared<SplitSlot>() : nullptr;
    ncclComm* handle = nullptr;
    if (slot != nullptr) {
      handle = newHandle();
      handle->name = parsed.name.empty() ? parent->name : parsed.name;
      handle->split = slot;
    }
    thread().group.native = true;
    try {
      parent->world->requestSplit(parent->rank, color, key, slot);
    } catch (...) {
      if (handle != nullptr) dropHandle(handle);
      throw;
    }
    ++parent->served;
    if (handle != nullptr) settle(handle);
    *newcomm = handle;
    return ncclSuccess;
  });
}

ncclResult_t Shim::commShrink(ncclComm_t comm, int* exclude, int excludeCount, ncclComm_t* newcomm,
                              const ncclConfig_t* config, int flags) {
  return run("ncclCommShrink", comm, [&] {
    const Lease parent = require(comm, "ncclCommShrink");
    if (newcomm == nullptr) throw ApiError(ncclInvalidArgument, "newcomm is NULL");
    if (parent->real == nullptr) {
      throw ApiError(ncclInvalidUsage,
                     "peerlink's communicator cannot shrink (its split needs every rank, and the excluded ones do "
                     "not call); use ncclCommSplit, or PEERLINK_NCCL_FALLBACK=ALL");
    }
    if (parts_.real->commShrink == nullptr) throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclCommShrink");
    ncclComm_t real = nullptr;
    forwarded(parent.get(), realInGroup().commShrink(parent->real, exclude, excludeCount, &real,
                                                     const_cast<ncclConfig_t*>(config), flags));
    *newcomm = nullptr;
    if (real != nullptr) {
      ncclComm* handle = newHandle();
      adoptReal(handle, real, "shrunk from a communicator the real NCCL serves");
      *newcomm = handle;
    }
    return ncclSuccess;
  });
}

ncclResult_t Shim::commRevoke(ncclComm_t comm, int flags) {
  return run("ncclCommRevoke", comm, [&] {
    const Lease handle = require(comm, "ncclCommRevoke");
    if (handle->real == nullptr) {
      throw ApiError(ncclInvalidUsage, "peerlink's communicator has no revoke: ncclCommAbort stops its calls at once");
    }
    if (parts_.real->commRevoke == nullptr) throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclCommRevoke");
    return forwarded(handle.get(), parts_.real->commRevoke(handle->real, flags));
  });
}

ncclResult_t Shim::commFinalize(ncclComm_t comm) {
  return run("ncclCommFinalize", comm, [&] {
    const Lease handle = require(comm, "ncclCommFinalize");
    if (handle->real != nullptr) return forwarded(handle.get(), parts_.real->commFinalize(handle->real));
    // Every call of peerlink's is on the caller's streams already: nothing is held back to flush.
    const std::lock_guard<std::mutex> lock(handle->mutex);
    handle->finalized = true;
    return ncclSuccess;
  });
}

namespace {

// Of two threads destroying or aborting one handle at once, the one that came second.
constexpr const char* kTakenByAnotherThread =
    "the communicator was destroyed or aborted by another thread while this call began";

}  // namespace

ncclResult_t Shim::commDestroy(ncclComm_t comm) {
  return run("ncclCommDestroy", comm, [&] {
    const Lease handle = require(comm, "ncclCommDestroy", false);
    // The world ends with its last handle; this one's part ends here without waiting for the others.
    if (!dropHandle(handle.get())) throw ApiError(ncclInvalidArgument, kTakenByAnotherThread);
    return handle->real != nullptr ? parts_.real->commDestroy(handle->real) : ncclSuccess;
  });
}

ncclResult_t Shim::commAbort(ncclComm_t comm) {
  return run("ncclCommAbort", comm, [&] {
    const Lease handle = require(comm, "ncclCommAbort", false);
    if (handle->real != nullptr) {
      if (!dropHandle(handle.get())) throw ApiError(ncclInvalidArgument, kTakenByAnotherThread);
      return parts_.real->commAbort(handle->real);
    }
    std::shared_ptr<NativeWorld> world;
    {
      const std::lock_guard<std::mutex> lock(handle->mutex);
      world = handle->world;
    }
    // Stops every kernel of the world and tells the others (again where two threads abort: harmless), before the
    // drop, which waits for the world's lock that a call stuck in it may hold until it sees the abort.
    if (world != nullptr) world->abort(handle->rank);
    dropHandle(handle.get());  // or another thread's destroy or abort did: the world is aborted either way
    return ncclSuccess;
  });
}

}  // namespace peerlink::nccl
