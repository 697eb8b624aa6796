#include "transport/peer_access.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/log.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

void PeerAccessTable::enable(int device, int peer) {
  if (device == peer || enabled(device, peer)) return;
  DeviceGuard guard(device);
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  if (status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
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
