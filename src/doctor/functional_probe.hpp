// The doctor's functional probe: what really happens when bytes move between two GPUs. Every method copies
// a pattern into a poisoned destination and the GPU that owns the destination counts the wrong bytes, so a
// write or read the platform silently drops (PCIe ACS, an IOMMU) shows as lost bytes, and a flag that never
// arrives shows as a passed deadline -- never a hang.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

class Transport;

struct ProbeOptions {
  std::size_t bytes = std::size_t{32} << 20;  ///< per method and pair
  int timedIterations = 4;                    ///< copies timed for bandwidth; 0: data only (gbps stays 0)
  std::chrono::milliseconds timeout{2000};    ///< bound of every wait of the probe
  /// The executable whose hidden `_share-export` command owns memory in a second process (the peerlink
  /// CLI); empty: the cross-process methods are not run.
  std::string helperExecutable;
  /// CUDA_VISIBLE_DEVICES of the second process (a launcher that gives each process only its own GPUs);
  /// unset: it inherits this process's.
  std::optional<std::string> helperVisibleDevices;
  std::function<void(const std::string&)> progress;  ///< one line per step; may be empty
};

using DirectedPair = std::pair<int, int>;  ///< (src, dst) CUDA ordinals

/// ce_write, ce_read, sm_write, sm_read for each pair, through `transport` with DIRECT routes forced.
std::vector<ProbeResult> probeCopies(Transport& transport, const std::vector<DirectedPair>& pairs,
                                     const ProbeOptions& options);

/// flag_handshake for every pair at once: a receiving kernel waits on each destination while the sender's
/// kernel stores data and flag (put-with-signal), so a dropped flag costs one deadline for all pairs.
std::vector<ProbeResult> probeFlagHandshakes(Transport& transport, const std::vector<DirectedPair>& pairs,
                                             const ProbeOptions& options);

/// ipc and cumem: a second process owns a buffer on dst and checks it on its own GPU after this process
/// wrote it through its mapping on src; what the owner wrote is also read back here first.
std::vector<ProbeResult> probeCrossProcess(Transport& transport, const std::vector<DirectedPair>& pairs,
                                           const ProbeOptions& options);

/// Bandwidth of `options.timedIterations` calls of `enqueueCopy` (each moving options.bytes) on `stream` of
/// `device`, timed with events and waited for within options.timeout; 0 when nothing was timed.
double timeCopies(int device, cudaStream_t stream, const ProbeOptions& options, const std::string& what,
                  const std::function<void()>& enqueueCopy);

/// The known cause of a probe that could not run, from its error message: "peer_hidden",
/// "open_file_limit", or empty.
std::string classifyProbeFailure(const std::string& error);

}  // namespace peerlink
