// Peer access between GPUs of this process, enabled once per ordered pair and only for pairs used.
#pragma once

#include <set>
#include <utility>

namespace peerlink {

/// The driver maps at most this many peers into one device's address space (error 711,
/// cudaErrorTooManyPeers, beyond it), which matters on machines with more than 8 GPUs.
inline constexpr int kMaxPeersPerDevice = 8;

class PeerAccessTable {
 public:
  /// Lets `device` access `peer`'s memory. Idempotent: a pair enabled before (by us or by someone else in
  /// this process — cudaErrorPeerAccessAlreadyEnabled) is fine; one this process enabled in the device's current
  /// context is not asked of the driver again. Throws Error(Unsupported) naming both GPUs when the driver refuses,
  /// with advice for the 8-peer limit.
  void enable(int device, int peer);
  bool enabled(int device, int peer) const { return enabled_.count({device, peer}) != 0; }

 private:
  std::set<std::pair<int, int>> enabled_;
};

/// What the process-wide record of enabled pairs must hear after `device`'s peer access to `peer` was disabled
/// (cudaDeviceDisablePeerAccess with `device` current), so the next enable asks the driver again.
void forgetPeerAccess(int device, int peer);

}  // namespace peerlink
