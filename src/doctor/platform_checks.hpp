// Platform checks of peerlink doctor: pure functions from the topology and a PlatformSnapshot to findings,
// each with a stable code, a severity, a one-line summary naming the GPUs and bus ids, and a one-line fix.
// docs/doctor.md lists every code; tests/cpu/test_platform_checks.cc runs them on fixture trees.
#pragma once

#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// Every platform finding, most severe first. Findings about one pair of GPUs name both in `gpus`; findings
/// about single GPUs name those; platform-wide advice (peer limit, open-file limit) leaves `gpus` empty.
std::vector<Finding> checkPlatform(const Topology& topology, const PlatformSnapshot& snapshot);

/// The bridges at which the PCI paths of two devices part (each path from the host bridge down to the
/// device, as Gpu::pciPath): on each side, the first bridge below their last common component. ACS
/// redirection acts there: a port redirects peer traffic that enters it and would otherwise turn back down;
/// ports further down carry this pair's traffic upstream anyway. Empty when a path is empty or both devices
/// sit directly on host bridges.
std::vector<std::string> divergenceBridges(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace peerlink
