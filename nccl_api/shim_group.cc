// The Shim's groups (ncclGroupStart / End / SimulateEnd), per thread as NCCL's: what was deferred to the end of
// the outermost group happens there -- communicators created, peerlink's send/recv groups launched, the real
// NCCL's group ended -- and the first failure is the group's result.
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "nccl_api/shim.hpp"

namespace peerlink::nccl {

ncclResult_t Shim::groupStart() {
  return run("ncclGroupStart", nullptr, [&] {
    ++thread().group.depth;
    return ncclSuccess;
  });
}

ncclResult_t Shim::groupEnd() {
  return run("ncclGroupEnd", nullptr, [&] {
    GroupState& group = thread().group;
    if (group.depth == 0) throw ApiError(ncclInvalidUsage, "no group is open (ncclGroupStart first)");
    if (group.depth > 1) {
      ncclResult_t result = ncclSuccess;
      if (group.realOpen == group.depth) {
        --group.realOpen;
        result = parts_.real->groupEnd();
      }
      --group.depth;
      return forwarded(nullptr, result);
    }
    // The outermost group: the thread's next one starts clean whatever fails below.
    GroupState ended = std::move(group);
    group = GroupState{};
    std::optional<Failure> first;
    const auto note = [&](const Failure& failure) {
      if (!first) first = failure;
    };
    if (!ended.creations.empty()) {
      createPending(ended.creations);
      for (const PendingCreation& pending : ended.creations) {
        const std::lock_guard<std::mutex> lock(pending.handle->mutex);
        if (pending.handle->stage == ncclComm::Stage::Failed) note(pending.handle->failure);
      }
    }
    for (const std::shared_ptr<NativeWorld>& world : ended.p2pWorlds) {
      try {
        world->backend().groupEnd();
      } catch (const std::exception& error) {
        note(failureOf(error, "the group's send/recv"));
      }
    }
    for (const std::shared_ptr<NativeWorld>& world : ended.collWorlds) {
      const std::string abandoned = world->abandonUnmatchedBy(std::this_thread::get_id());
      if (!abandoned.empty()) note({ncclInvalidUsage, abandoned});
    }
    if (ended.realOpen > 0) {
      const ncclResult_t result = parts_.real->groupEnd();
      if (result != ncclSuccess && result != ncclInProgress) {
        const char* text = parts_.real->getLastError != nullptr ? parts_.real->getLastError(nullptr) : nullptr;
        note({result, fmt::format("the real NCCL's ncclGroupEnd failed: {}",
                                  text != nullptr && *text != '\0' ? text : resultString(result))});
      }
    }
    if (first) throw ApiError(*first);
    return ncclSuccess;
  });
}

ncclResult_t Shim::groupSimulateEnd(ncclSimInfo_t* info) {
  return run("ncclGroupSimulateEnd", nullptr, [&] {
    GroupState& group = thread().group;
    if (group.depth == 0) throw ApiError(ncclInvalidUsage, "no group is open (ncclGroupStart first)");
    if (group.native || !group.creations.empty()) {
      throw ApiError(ncclInvalidUsage,
                     "peerlink does not simulate its communicators' calls; the group stays open (end it with "
                     "ncclGroupEnd)");
    }
    if (parts_.real == nullptr || parts_.real->groupSimulateEnd == nullptr) {
      throw ApiError(ncclInvalidUsage, "nothing in this group is the real NCCL's to simulate; the group stays open");
    }
    openRealGroup();
    const ncclResult_t result = parts_.real->groupSimulateEnd(info);
    --group.realOpen;
    --group.depth;
    return forwarded(nullptr, result);
  });
}

}  // namespace peerlink::nccl
