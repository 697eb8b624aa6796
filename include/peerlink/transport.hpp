// Moving bytes between two GPUs of this process by a chosen route (route.hpp): DIRECT (peer access,
// copy engine or SM kernel, read or write), RELAY (two pipelined hops through a third GPU) and STAGED
// (pinned host memory, device-to-host and host-to-device overlapped). Cross-process routes (IPC, CUMEM)
// map the other process's buffer first (shared_memory.hpp) and then copy like DIRECT.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "peerlink/params.hpp"
#include "peerlink/route.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// One side of a transfer: a device pointer and the CUDA ordinal of the GPU that owns it.
struct DeviceSpan {
  void* data = nullptr;
  int device = -1;
};
struct ConstDeviceSpan {
  const void* data = nullptr;
  int device = -1;
};

/// The GPU whose stream (and, for SM routes, whose SMs) carry out a route: the destination for READ,
/// the source for WRITE, the relay GPU for RELAY, the source for STAGED.
int executingDevice(const Route& route, int src, int dst) noexcept;

/// Copies between GPUs of this process. Holds what routes need across calls — peer access it enabled,
/// staging buffers, helper streams and events — and releases it on destruction. Not thread-safe: use one
/// per thread, or guard it.
class Transport {
 public:
  /// `topology` must describe this process's GPUs (discoverTopology(params), or a file for tests).
  Transport(Topology topology, Params params);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  const Topology& topology() const noexcept;
  const Params& params() const noexcept;

  /// The route for `bytes` from `src` to `dst` in this process (selectRoute with this transport's
  /// topology and parameters).
  Route route(int src, int dst, std::size_t bytes) const;

  /// Enqueues the copy of `bytes` from `src` to `dst` on `stream`, a stream of
  /// executingDevice(route, src.device, dst.device) (or 0 for that device's default stream); the copy
  /// is complete when the stream reaches this point. Validates first and throws Error(InvalidUsage)
  /// naming the problem: null pointers, pointers not owned by the named device (checked with
  /// cudaPointerGetAttributes), device indices out of range, overlapping ranges on one device, a route
  /// the pair cannot use. `bytes == 0` does nothing. The first copy of each pair and route logs one line
  /// under PEERLINK_DEBUG=INFO PEERLINK_DEBUG_SUBSYS=P2P (describeRoute). Peer access is enabled on first use
  /// (idempotent; only the pairs used, since the driver caps peer mappings per device at 8: error 711 becomes
  /// Error(Unsupported) with advice).
  void copy(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes, const Route& route, cudaStream_t stream);

  /// Chooses the route, copies, and waits (with PEERLINK_TIMEOUT_MS as the deadline). Returns the route.
  Route copySync(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes);

  /// Makes `device` able to access `peer`'s memory (cudaDeviceEnablePeerAccess), once; later calls are
  /// free. Throws Error(Unsupported) when the driver refuses, naming both GPUs and the reason.
  void enablePeerAccess(int device, int peer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace peerlink
