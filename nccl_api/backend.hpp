// What the shim drives, as interfaces: a world of ranks (peerlink's Communicator in the library, a fake in the
// CPU tests) and the platform around it (creating worlds, unique ids, the GPU work of the shim's own: scratch
// memory, its kernels, copies, stream order). nccl_api/platform.cc implements both over peerlink and CUDA.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "bootstrap/root.hpp"
#include "nccl_api/call_plan.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink::nccl {

/// One world's calls, as peerlink::Communicator has them (communicator.hpp says what each does). Errors are
/// peerlink::Error.
class WorldBackend {
 public:
  virtual ~WorldBackend() = default;
  virtual int size() const = 0;
  /// The ranks this process drives, ascending.
  virtual std::vector<int> localRanks() const = 0;
  virtual int device(int rank) const = 0;

  virtual void allReduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                         cudaStream_t stream) = 0;
  virtual void broadcast(int rank, const void* send, void* recv, std::size_t count, DataType type, int root,
                         cudaStream_t stream) = 0;
  virtual void reduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                      cudaStream_t stream) = 0;
  virtual void allGather(int rank, const void* send, void* recv, std::size_t count, DataType type,
                         cudaStream_t stream) = 0;
  virtual void reduceScatter(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                             cudaStream_t stream) = 0;
  virtual void allToAll(int rank, const void* send, void* recv, std::size_t count, DataType type,
                        cudaStream_t stream) = 0;
  virtual void send(int rank, const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) = 0;
  virtual void recv(int rank, void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) = 0;
  virtual void groupStart() = 0;
  virtual void groupEnd() = 0;

  /// buffers[i] and bytes[i] for localRanks()[i]; collective.
  virtual int registerWindow(const std::vector<void*>& buffers, const std::vector<std::size_t>& bytes) = 0;
  virtual void deregisterWindow(int window) = 0;
  virtual std::optional<Error> asyncError() = 0;
  /// colors[i] and keys[i] for localRanks()[i]; per local rank its new world (null for a negative color).
  virtual std::vector<std::shared_ptr<WorldBackend>> split(const std::vector<int>& colors,
                                                           const std::vector<int>& keys) = 0;
  virtual void abort() noexcept = 0;
};

/// One pass of the shim's kernels (call_plan.hpp's TransformStep with its buffers resolved).
struct TransformArgs {
  TransformStep::Kind kind = TransformStep::Kind::Scale;
  ncclDataType_t type = ncclFloat32;  ///< the call's type (the FP8 type for Widen and Narrow)
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t count = 0;
  /// Scale, and Widen when `scaled`: the scalar of `type`, read by the kernel from device memory when
  /// `deviceScalar` is set (ncclScalarDevice), else the bytes of `hostScalar` (ncclScalarHostImmediate).
  bool scaled = false;
  const void* deviceScalar = nullptr;
  unsigned char hostScalar[8] = {};
  int divisor = 1;  ///< Divide
};

/// Creating worlds and the GPU work the shim does itself. Errors are peerlink::Error.
class Platform {
 public:
  virtual ~Platform() = default;
  /// A world spanning processes (makeUniqueId's id): ranks[i] on devices[i] in this process. For an id
  /// whose root may forward, bootstrap::ForwardedWorld (with the real NCCL's id) when the root sends the world there;
  /// `forwarding` is what this process's hellos tell that root, which refuses a world across hosts some rank cannot
  /// follow there: Error(InvalidUsage) naming those ranks.
  virtual std::shared_ptr<WorldBackend> createWorld(const UniqueId& id, int nranks, const std::vector<int>& ranks,
                                                    const std::vector<int>& devices, const Params& params,
                                                    ForwardAbility forwarding) = 0;
  /// Every rank in this process, rank i on devices[i] (ncclCommInitAll).
  virtual std::shared_ptr<WorldBackend> createLocalWorld(const std::vector<int>& devices, const Params& params) = 0;
  /// makeUniqueId's id; with `forwardId`, one whose root decides who serves the world and calls `forwardId` when
  /// it sends the world to the real NCCL (bootstrap::makeForwardableUniqueId).
  virtual UniqueId makeId(const Params& params, bootstrap::ForwardIdSource forwardId) = 0;
  /// Ends this process's rendezvous root of `id` if no rank has reached it (bootstrap::retireRoot); nothing for an
  /// id of another process or one that is not peerlink's.
  virtual void retireId(const UniqueId& id) noexcept = 0;

  /// The calling thread's current CUDA device, and setting it; the number of devices.
  virtual int currentDevice() = 0;
  virtual void setCurrentDevice(int device) = 0;
  virtual int deviceCount() = 0;
  /// ncclMemAlloc and ncclMemFree: cudaMalloc memory of the current device, the kind peerlink's windows share
  /// with other processes.
  virtual void* memAlloc(std::size_t bytes) = 0;
  virtual void memFree(void* pointer) = 0;
  /// Device memory on `device` that the peers of a world in this process may read (cudaMalloc).
  virtual void* allocate(int device, std::size_t bytes) = 0;
  /// Frees an allocate()d block once nothing that may use it runs, without waiting for other work on the device.
  virtual void release(int device, void* pointer) noexcept = 0;
  /// Enqueues one pass of the shim's kernels on `stream` of `device`.
  virtual void transform(int device, const TransformArgs& args, cudaStream_t stream) = 0;
  /// Enqueues a device-to-device copy on `stream`.
  virtual void copy(int device, void* destination, const void* source, std::size_t bytes, cudaStream_t stream) = 0;
  /// Makes `later` wait for the work queued so far on `earlier` (both streams of `device`).
  virtual void orderAfter(int device, cudaStream_t later, cudaStream_t earlier) = 0;
  /// Whether `stream` is being captured into a CUDA graph.
  virtual bool capturing(cudaStream_t stream) = 0;
};

}  // namespace peerlink::nccl
