// The Shim's memory calls: ncclMemAlloc / Free, local registration (recorded: peerlink needs none), symmetric
// windows (peerlink's registerWindow, collective over the world), and pre-multiplied-sum ops.
#include <cstring>

#include <fmt/format.h>

#include "core/log.hpp"
#include "nccl_api/shim.hpp"
#include "nccl_api/types.hpp"

namespace peerlink::nccl {

ncclResult_t Shim::memAlloc(void** pointer, std::size_t bytes) {
  return run("ncclMemAlloc", nullptr, [&] {
    if (pointer == nullptr) throw ApiError(ncclInvalidArgument, "ptr is NULL");
    *pointer = nullptr;
    // Memory the real NCCL's communicators register must be its own (cuMem); peerlink's windows take cudaMalloc.
    if (settings().fallback == Fallback::All) {
      RealNccl& real = realOrThrow("ncclMemAlloc under PEERLINK_NCCL_FALLBACK=ALL");
      if (real.memAlloc == nullptr) throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclMemAlloc");
      forwarded(nullptr, real.memAlloc(pointer, bytes));
      const std::lock_guard<std::mutex> lock(allocationsMutex_);
      realAllocations_.insert(*pointer);
      return ncclSuccess;
    }
    *pointer = parts_.platform->memAlloc(bytes);
    return ncclSuccess;
  });
}

ncclResult_t Shim::memFree(void* pointer) {
  return run("ncclMemFree", nullptr, [&] {
    if (pointer == nullptr) return ncclSuccess;
    {
      const std::lock_guard<std::mutex> lock(allocationsMutex_);
      if (realAllocations_.erase(pointer) != 0) return forwarded(nullptr, parts_.real->memFree(pointer));
    }
    parts_.platform->memFree(pointer);
    return ncclSuccess;
  });
}

ncclResult_t Shim::commRegister(ncclComm_t comm, void* buffer, std::size_t bytes, void** handle) {
  return run("ncclCommRegister", comm, [&] {
    const Lease owner = require(comm, "ncclCommRegister");
    if (handle == nullptr) throw ApiError(ncclInvalidArgument, "handle is NULL");
    if (owner->real != nullptr) {
      if (parts_.real->commRegister == nullptr)
        throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclCommRegister");
      return forwarded(owner.get(), parts_.real->commRegister(owner->real, buffer, bytes, handle));
    }
    if (buffer == nullptr || bytes == 0) {
      throw ApiError(ncclInvalidArgument, fmt::format("buffer {} of {} bytes", buffer, bytes));
    }
    // peerlink reaches a peer's buffer through windows (ncclCommWindowRegister) or its staging; a local
    // registration has nothing to do but be remembered, so that deregistration can be checked.
    auto* registration = new LocalRegistration{buffer, bytes};
    const std::lock_guard<std::mutex> lock(owner->mutex);
    owner->registrations.insert(registration);
    *handle = registration;
    return ncclSuccess;
  });
}

ncclResult_t Shim::commDeregister(ncclComm_t comm, void* handle) {
  return run("ncclCommDeregister", comm, [&] {
    const Lease owner = require(comm, "ncclCommDeregister", false);
    if (owner->real != nullptr) {
      if (parts_.real->commDeregister == nullptr) {
        throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclCommDeregister");
      }
      return forwarded(owner.get(), parts_.real->commDeregister(owner->real, handle));
    }
    const std::lock_guard<std::mutex> lock(owner->mutex);
    if (owner->registrations.erase(handle) == 0) {
      throw ApiError(ncclInvalidArgument,
                     fmt::format("handle {} is not a registration of this communicator", static_cast<void*>(handle)));
    }
    delete static_cast<LocalRegistration*>(handle);
    return ncclSuccess;
  });
}

ncclResult_t Shim::commWindowRegister(ncclComm_t comm, void* buffer, std::size_t bytes, ncclWindow_t* window,
                                      int flags) {
  return run("ncclCommWindowRegister", comm, [&] {
    const Lease owner = require(comm, "ncclCommWindowRegister");
    if (window == nullptr) throw ApiError(ncclInvalidArgument, "win is NULL");
    *window = nullptr;
    if (owner->real != nullptr && parts_.real->commWindowRegister == nullptr) {
      throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclCommWindowRegister");
    }
    if (owner->real == nullptr && (buffer == nullptr || bytes == 0)) {
      throw ApiError(ncclInvalidArgument, fmt::format("buffer {} of {} bytes", buffer, bytes));
    }
    auto made = std::make_unique<Window>();
    made->buffer = buffer;
    made->bytes = bytes;
    made->symmetric = (flags & NCCL_WIN_COLL_SYMMETRIC) != 0;
    if (owner->real != nullptr) {
      forwarded(owner.get(), realInGroup().commWindowRegister(owner->real, buffer, bytes, &made->real, flags));
    } else if (made->symmetric) {
      // Collective: completes when every local rank asked (at once with one rank per process).
      made->slot = std::make_shared<WindowSlot>();
      thread().group.native = true;
      owner->world->requestWindow(owner->rank, buffer, bytes, made->slot);
      ++owner->served;
    }
    const std::lock_guard<std::mutex> lock(owner->mutex);
    owner->windows.insert(made.get());
    *window = reinterpret_cast<ncclWindow_t>(made.release());
    return ncclSuccess;
  });
}

ncclResult_t Shim::commWindowDeregister(ncclComm_t comm, ncclWindow_t handle) {
  return run("ncclCommWindowDeregister", comm, [&] {
    const Lease owner = require(comm, "ncclCommWindowDeregister", false);
    auto* window = reinterpret_cast<Window*>(handle);
    {
      const std::lock_guard<std::mutex> lock(owner->mutex);
      if (window == nullptr || owner->windows.count(window) == 0) {
        throw ApiError(ncclInvalidArgument,
                       fmt::format("window {} is not a window of this communicator", static_cast<void*>(handle)));
      }
    }
    std::unique_ptr<Window> held(window);
    const auto forget = [&] {
      const std::lock_guard<std::mutex> lock(owner->mutex);
      owner->windows.erase(window);
    };
    if (owner->real != nullptr) {
      forget();
      return forwarded(owner.get(), parts_.real->commWindowDeregister(owner->real, window->real));
    }
    if (window->slot != nullptr) {
      if (!window->slot->done) {
        held.release();  // still the communicator's
        throw ApiError(ncclInvalidUsage,
                       "the window's registration has not completed: other ranks of this process have not "
                       "registered theirs yet");
      }
      if (!window->slot->failure) owner->world->requestWindowRemoval(owner->rank, window->slot->id);
    }
    forget();
    return ncclSuccess;
  });
}

ncclResult_t Shim::redOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                        ncclScalarResidence_t residence, ncclComm_t comm) {
  return run("ncclRedOpCreatePreMulSum", comm, [&] {
    const Lease owner = require(comm, "ncclRedOpCreatePreMulSum");
    if (owner->real != nullptr) {
      return forwarded(owner.get(), parts_.real->redOpCreatePreMulSum(op, scalar, type, residence, owner->real));
    }
    if (op == nullptr || scalar == nullptr) throw ApiError(ncclInvalidArgument, "op or scalar is NULL");
    const std::optional<TypeInfo> info = typeInfo(type);
    if (!info) throw ApiError(ncclInvalidArgument, fmt::format("data type {} is not an ncclDataType_t", type));
    if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate) {
      throw ApiError(ncclInvalidArgument, fmt::format("residence {} is neither ncclScalarDevice nor "
                                                      "ncclScalarHostImmediate",
                                                      static_cast<int>(residence)));
    }
    ncclComm::PreMulOp made{type, {}};
    made.scalar.type = type;
    if (residence == ncclScalarDevice) {
      made.scalar.device = scalar;
    } else {
      std::memcpy(made.scalar.value, scalar, info->bytes);
    }
    const std::lock_guard<std::mutex> lock(owner->mutex);
    if (owner->nextOp == ncclMaxRedOp) throw ApiError(ncclInvalidUsage, "every dynamic op number is taken");
    const int id = owner->nextOp++;
    owner->ops[id] = made;
    *op = static_cast<ncclRedOp_t>(id);
    return ncclSuccess;
  });
}

ncclResult_t Shim::redOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return run("ncclRedOpDestroy", comm, [&] {
    const Lease owner = require(comm, "ncclRedOpDestroy", false);
    if (owner->real != nullptr) return forwarded(owner.get(), parts_.real->redOpDestroy(op, owner->real));
    const std::lock_guard<std::mutex> lock(owner->mutex);
    if (owner->ops.erase(static_cast<int>(op)) == 0) {
      throw ApiError(ncclInvalidArgument,
                     fmt::format("op {} is {}", static_cast<int>(op),
                                 static_cast<int>(op) < ncclNumOps ? "a built-in op: only ops ncclRedOpCreatePreMulSum "
                                                                     "made are destroyed"
                                                                   : "not an op of this communicator"));
    }
    return ncclSuccess;
  });
}

}  // namespace peerlink::nccl
