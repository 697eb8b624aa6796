// The Shim's collectives and point-to-point calls: checked as NCCL checks them, then forwarded (a communicator
// of the real NCCL) or handed to the rank's NativeWorld with the plan of the shim's own passes they need
// (call_plan.hpp). Gather and scatter are send/recv groups with the root's own part copied.
#include <algorithm>

#include <fmt/format.h>

#include "core/log.hpp"
#include "nccl_api/shim.hpp"
#include "nccl_api/types.hpp"

namespace peerlink::nccl {
namespace {

TypeInfo typeOrThrow(ncclDataType_t type) {
  const std::optional<TypeInfo> info = typeInfo(type);
  if (!info) {
    throw ApiError(ncclInvalidArgument, fmt::format("data type {} is not an ncclDataType_t (0..{})",
                                                    static_cast<int>(type), static_cast<int>(ncclNumTypes) - 1));
  }
  return *info;
}

void checkBuffer(const void* buffer, std::size_t count, const char* what) {
  if (buffer == nullptr && count > 0) throw ApiError(ncclInvalidArgument, fmt::format("{} is NULL", what));
}

void checkRank(int rank, int nranks, const char* what) {
  if (rank < 0 || rank >= nranks) {
    throw ApiError(ncclInvalidArgument, fmt::format("{} {} is not a rank (0..{})", what, rank, nranks - 1));
  }
}

bool overlaps(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return bytes > 0 && x < y + bytes && y < x + bytes;
}

}  // namespace

void Shim::submit(ncclComm* handle, CollectiveCall call) {
  GroupState& group = thread().group;
  group.native = true;
  if (group.depth > 0 &&
      std::find(group.collWorlds.begin(), group.collWorlds.end(), handle->world) == group.collWorlds.end()) {
    group.collWorlds.push_back(handle->world);
  }
  call.rank = handle->rank;
  if (call.plan && logEnabled(LogLevel::Trace, LogSubsys::Coll)) {
    logTrace(LogSubsys::Coll, "NCCL API: rank {}: {}", call.rank, describePlan(call.collective, *call.plan));
  }
  handle->world->submit(call);
  ++handle->served;
}

void Shim::joinPeerGroup(const std::shared_ptr<NativeWorld>& world) {
  GroupState& group = thread().group;
  group.native = true;
  if (group.depth == 0) return;
  if (std::find(group.p2pWorlds.begin(), group.p2pWorlds.end(), world) != group.p2pWorlds.end()) return;
  world->backend().groupStart();
  group.p2pWorlds.push_back(world);
}

ncclResult_t Shim::reduction(const char* call, Collective collective, const void* send, void* recv, std::size_t count,
                             ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return run(call, comm, [&] {
    const Lease handle = require(comm, call);
    if (handle->real != nullptr) {
      RealNccl& real = realInGroup();
      switch (collective) {
        case Collective::AllReduce:
          return forwarded(handle.get(), real.allReduce(send, recv, count, type, op, handle->real, stream));
        case Collective::Reduce:
          return forwarded(handle.get(), real.reduce(send, recv, count, type, op, root, handle->real, stream));
        default: return forwarded(handle.get(), real.reduceScatter(send, recv, count, type, op, handle->real, stream));
      }
    }
    typeOrThrow(type);
    if (collective == Collective::Reduce) checkRank(root, handle->nranks, "root");
    checkBuffer(send, count, "sendbuff");
    if (collective != Collective::Reduce || handle->rank == root) checkBuffer(recv, count, "recvbuff");
    CollectiveCall args;
    const std::optional<ReduceOp> builtin = builtinOp(op);
    if (!builtin) {
      const std::lock_guard<std::mutex> lock(handle->mutex);
      const auto found = handle->ops.find(static_cast<int>(op));
      if (found == handle->ops.end()) {
        throw ApiError(ncclInvalidArgument,
                       fmt::format("op {} is neither a built-in op nor one ncclRedOpCreatePreMulSum made for this "
                                   "communicator (destroyed already?)",
                                   static_cast<int>(op)));
      }
      if (found->second.type != type) {
        throw ApiError(ncclInvalidArgument,
                       fmt::format("op {} was made for {} and is used with {}", static_cast<int>(op),
                                   typeInfo(found->second.type)->name, typeInfo(type)->name));
      }
      args.scalar = found->second.scalar;
    }
    ReductionRequest request;
    request.collective = collective;
    request.type = type;
    request.op = builtin;
    request.count = count;
    request.rank = handle->rank;
    request.nranks = handle->nranks;
    request.root = root;
    auto plan = planReduction(request);
    if (const auto* failure = std::get_if<Failure>(&plan)) throw ApiError(*failure);
    args.collective = collective;
    args.send = send;
    args.recv = recv;
    args.count = count;
    args.root = root;
    args.stream = stream;
    args.ncclType = type;
    args.plan = std::get<CallPlan>(plan);
    submit(handle.get(), args);
    return ncclSuccess;
  });
}

ncclResult_t Shim::copyCollective(const char* call, Collective collective, const void* send, void* recv,
                                  std::size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  return run(call, comm, [&] {
    const Lease handle = require(comm, call);
    if (handle->real != nullptr) {
      RealNccl& real = realInGroup();
      switch (collective) {
        case Collective::Broadcast:
          return forwarded(handle.get(), real.broadcast(send, recv, count, type, root, handle->real, stream));
        case Collective::AllGather:
          return forwarded(handle.get(), real.allGather(send, recv, count, type, handle->real, stream));
        default:
          if (real.allToAll == nullptr) throw ApiError(ncclInvalidUsage, "the real NCCL has no ncclAlltoAll");
          return forwarded(handle.get(), real.allToAll(send, recv, count, type, handle->real, stream));
      }
    }
    const TypeInfo info = typeOrThrow(type);
    const auto n = static_cast<std::size_t>(handle->nranks);
    if (collective == Collective::Broadcast) {
      checkRank(root, handle->nranks, "root");
      if (handle->rank == root) checkBuffer(send, count, "sendbuff");
      checkBuffer(recv, count, "recvbuff");
    } else {
      checkBuffer(send, count, "sendbuff");
      checkBuffer(recv, count, "recvbuff");
    }
    CollectiveCall args;
    args.collective = collective;
    args.send = send;
    args.recv = recv;
    args.count = count;
    args.type = info.carrier;
    args.root = root;
    args.stream = stream;
    args.ncclType = type;
    if (collective == Collective::AllToAll && overlaps(send, recv, n * count * info.bytes)) {
      args.plan = planInPlaceAllToAll(count, handle->nranks, info.carrier, info.bytes);
    }
    submit(handle.get(), args);
    return ncclSuccess;
  });
}

ncclResult_t Shim::rooted(const char* call, bool gathering, const void* send, void* recv, std::size_t count,
                          ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream) {
  return run(call, comm, [&] {
    const Lease handle = require(comm, call);
    if (handle->real != nullptr) {
      RealNccl& real = realInGroup();
      auto* function = gathering ? real.gather : real.scatter;
      if (function == nullptr) throw ApiError(ncclInvalidUsage, fmt::format("the real NCCL has no {}", call));
      return forwarded(handle.get(), function(send, recv, count, type, root, handle->real, stream));
    }
    const TypeInfo info = typeOrThrow(type);
    checkRank(root, handle->nranks, "root");
    const int rank = handle->rank;
    const bool isRoot = rank == root;
    // The root's whole buffer holds nranks * count; every rank's own part is count; the whole buffer is not used
    // off the root.
    if (gathering || isRoot) checkBuffer(send, count, "sendbuff");
    if (!gathering || isRoot) checkBuffer(recv, count, "recvbuff");
    if (count == 0) return ncclSuccess;
    const std::size_t bytes = count * info.bytes;
    auto* whole = static_cast<unsigned char*>(gathering ? recv : const_cast<void*>(send));
    joinPeerGroup(handle->world);
    WorldBackend& backend = handle->world->backend();
    backend.groupStart();
    try {
      if (isRoot) {
        for (int r = 0; r < handle->nranks; ++r) {
          unsigned char* part = whole + bytes * static_cast<std::size_t>(r);
          if (r != root) {
            gathering ? backend.recv(rank, part, count, info.carrier, r, stream)
                      : backend.send(rank, part, count, info.carrier, r, stream);
          } else if (gathering ? part != send : part != recv) {
            // In place when the root's own part already is where it goes.
            parts_.platform->copy(handle->device, gathering ? part : recv, gathering ? send : part, bytes, stream);
          }
        }
      } else if (gathering) {
        backend.send(rank, send, count, info.carrier, root, stream);
      } else {
        backend.recv(rank, recv, count, info.carrier, root, stream);
      }
    } catch (...) {
      try {
        backend.groupEnd();  // closes this call's group; what it launches fails or is discarded with it
      } catch (...) {
      }
      throw;
    }
    backend.groupEnd();
    ++handle->served;
    return ncclSuccess;
  });
}

ncclResult_t Shim::pointToPoint(const char* call, bool sending, void* buffer, std::size_t count, ncclDataType_t type,
                                int peer, ncclComm_t comm, cudaStream_t stream) {
  return run(call, comm, [&] {
    const Lease handle = require(comm, call);
    if (handle->real != nullptr) {
      RealNccl& real = realInGroup();
      return forwarded(handle.get(), sending ? real.send(buffer, count, type, peer, handle->real, stream)
                                             : real.recv(buffer, count, type, peer, handle->real, stream));
    }
    const TypeInfo info = typeOrThrow(type);
    checkRank(peer, handle->nranks, "peer");
    checkBuffer(buffer, count, sending ? "sendbuff" : "recvbuff");
    joinPeerGroup(handle->world);
    WorldBackend& backend = handle->world->backend();
    if (sending) {
      backend.send(handle->rank, buffer, count, info.carrier, peer, stream);
    } else {
      backend.recv(handle->rank, buffer, count, info.carrier, peer, stream);
    }
    ++handle->served;
    return ncclSuccess;
  });
}

ncclResult_t Shim::allReduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                             ncclComm_t comm, cudaStream_t stream) {
  return reduction("ncclAllReduce", Collective::AllReduce, send, recv, count, type, op, 0, comm, stream);
}

ncclResult_t Shim::reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                          int root, ncclComm_t comm, cudaStream_t stream) {
  return reduction("ncclReduce", Collective::Reduce, send, recv, count, type, op, root, comm, stream);
}

ncclResult_t Shim::reduceScatter(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                                 ncclComm_t comm, cudaStream_t stream) {
  return reduction("ncclReduceScatter", Collective::ReduceScatter, send, recv, count, type, op, 0, comm, stream);
}

ncclResult_t Shim::broadcast(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                             ncclComm_t comm, cudaStream_t stream, const char* call) {
  return copyCollective(call, Collective::Broadcast, send, recv, count, type, root, comm, stream);
}

ncclResult_t Shim::allGather(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclComm_t comm,
                             cudaStream_t stream) {
  return copyCollective("ncclAllGather", Collective::AllGather, send, recv, count, type, 0, comm, stream);
}

ncclResult_t Shim::allToAll(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclComm_t comm,
                            cudaStream_t stream) {
  return copyCollective("ncclAlltoAll", Collective::AllToAll, send, recv, count, type, 0, comm, stream);
}

ncclResult_t Shim::gather(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                          ncclComm_t comm, cudaStream_t stream) {
  return rooted("ncclGather", true, send, recv, count, type, root, comm, stream);
}

ncclResult_t Shim::scatter(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return rooted("ncclScatter", false, send, recv, count, type, root, comm, stream);
}

ncclResult_t Shim::send(const void* buffer, std::size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                        cudaStream_t stream) {
  return pointToPoint("ncclSend", true, const_cast<void*>(buffer), count, type, peer, comm, stream);
}

ncclResult_t Shim::recv(void* buffer, std::size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                        cudaStream_t stream) {
  return pointToPoint("ncclRecv", false, buffer, count, type, peer, comm, stream);
}

}  // namespace peerlink::nccl
