// What the doctor's platform tests share (test_platform_checks.cc, test_platform_shortages.cc): a fixture's
// topology and roots, the checks run on them, and lookups into the results.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "doctor/platform_checks.hpp"
#include "doctor/platform_snapshot.hpp"
#include "finding_test_support.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

inline const std::string kDoctor = std::string(PEERLINK_FIXTURES_DIR) + "/doctor/";
inline constexpr std::int64_t kMiB = 1 << 20;

// The topology of a fixture: its own topology.json, or the topology fixture of the same machine.
inline Topology topologyOf(const std::string& name) {
  if (std::filesystem::exists(kDoctor + name + "/topology.json"))
    return loadTopologyFile(kDoctor + name + "/topology.json");
  const std::string shared = name == "vm_flat"     ? "vm_flat_numa_unknown"
                             : name == "container" ? "h100x8_nvswitch"
                             : name == "ten_gpus"  ? "pcie_10gpu"
                                                   : "dual_socket_pcie";  // plx_acs_redirect, no_root
  return loadTopologyFile(std::string(PEERLINK_FIXTURES_DIR) + "/topologies/" + shared + ".json");
}

inline PlatformRoots rootsOf(const std::string& name, long openFiles = 1048576, std::int64_t shm = 8192 * kMiB) {
  PlatformRoots roots;
  roots.sys = kDoctor + name + "/sys";
  roots.proc = kDoctor + name + "/proc";
  roots.dev = kDoctor + name + "/dev";
  roots.openFileLimitOverride = openFiles;
  roots.devShmBytesOverride = shm;
  roots.addressSpaceLimitOverride = -1;  // none, whatever this test process has
  return roots;
}

struct Checked {
  Topology topology;
  PlatformSnapshot snapshot;
  std::vector<Finding> findings;
};

inline Checked run(const std::string& name, const PlatformRoots& roots) {
  Checked r{topologyOf(name), {}, {}};
  r.snapshot = readPlatformSnapshot(r.topology, roots);
  r.findings = checkPlatform(r.topology, r.snapshot);
  return r;
}
inline Checked run(const std::string& name) {
  return run(name, rootsOf(name));
}

inline Finding forGpus(const std::vector<Finding>& findings, const std::string& code, const Gpus& gpus) {
  for (const Finding& f : all(findings, code)) {
    if (f.gpus == gpus) return f;
  }
  ADD_FAILURE() << "no " << code << " finding for GPUs " << ::testing::PrintToString(gpus);
  return {};
}

inline const PlatformSnapshot::Bridge* bridge(const PlatformSnapshot& snapshot, const std::string& busId) {
  for (const auto& b : snapshot.bridges) {
    if (b.busId == busId) return &b;
  }
  ADD_FAILURE() << "no bridge " << busId;
  return nullptr;
}

}  // namespace peerlink
