#include "transport/peer_access.hpp"

#include <cuda_runtime_api.h>

#include <iterator>
#include <mutex>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/log.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

// The pairs this process enabled, by the id of the device's context then. Peer access belongs to the context,
// which outlives communicators: asked again, the driver answers cudaErrorPeerAccessAlreadyEnabled, which
// compute-sanitizer reports as an API error for every communicator after the first. A context id is unique for
// the process's lifetime (cuCtxGetId), so a context made again after cudaDeviceReset starts with none recorded.
struct EnabledPairs {
  std::mutex mutex;
  std::set<std::tuple<unsigned long long, int, int>> pairs;  // (context id, device, peer)
};

EnabledPairs& enabledPairs() {
  static EnabledPairs record;
  return record;
}

// The id of the current context; 0 where there is none or it cannot be told.
unsigned long long currentContextId() noexcept {
  try {
    const DriverApi& api = driverApi();
    CUcontext context = nullptr;
    unsigned long long id = 0;
    if (api.ctxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) return 0;
    if (api.ctxGetId(context, &id) != CUDA_SUCCESS) return 0;
    return id;
  } catch (...) {
    return 0;
  }
}

}  // namespace

void forgetPeerAccess(int device, int peer) {
  EnabledPairs& record = enabledPairs();
  const std::lock_guard<std::mutex> lock(record.mutex);
  for (auto it = record.pairs.begin(); it != record.pairs.end();) {
    it = std::get<1>(*it) == device && std::get<2>(*it) == peer ? record.pairs.erase(it) : std::next(it);
  }
}

void PeerAccessTable::enable(int device, int peer) {
  if (device == peer || enabled(device, peer)) return;
  DeviceGuard guard(device);
  const unsigned long long context = currentContextId();
  EnabledPairs& record = enabledPairs();
  // Held across the driver's call: ranks set up on threads of their own enable the same pairs at once.
  const std::lock_guard<std::mutex> lock(record.mutex);
  if (context != 0 && record.pairs.count({context, device, peer}) != 0) {
    enabled_.insert({device, peer});
    return;
  }
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    // Before any runtime call of the thread the primary context may not be current yet (the device a guard finds
    // current is 0 by default, so it sets none): the call has made it current.
    const unsigned long long made = context != 0 ? context : currentContextId();
    if (made != 0) record.pairs.insert({made, device, peer});
    enabled_.insert({device, peer});
    logTrace(LogSubsys::P2p, "peer access GPU {} -> GPU {} enabled", device, peer);
    return;
  }
  cudaGetLastError();
  if (status == cudaErrorTooManyPeers) {
    throw Error(ErrorCode::Unsupported,
                fmt::format("cannot enable peer access GPU {} -> GPU {}: {}; the driver maps at most {} peers into "
                            "one GPU, so use fewer peers per GPU (a ring or relay) or disable peer access to the "
                            "GPUs not in use",
                            device, peer, cudaErrorText(status), kMaxPeersPerDevice));
  }
  throw Error(ErrorCode::Unsupported,
              fmt::format("cannot enable peer access GPU {} -> GPU {}: {}", device, peer, cudaErrorText(status)));
}

}  // namespace peerlink
