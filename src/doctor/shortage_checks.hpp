// The doctor's root causes: what this process is short of (file descriptors, memory, the GPU device files) and
// the readings that failed because of it. A failed reading is no fact about the hardware: each becomes a
// finding that says what could not be read and why, with Finding::cause naming the shortage, while the checks
// built on the reading skip it (platform_checks.cc). docs/doctor.md lists the codes.
#pragma once

#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/topology.hpp"

namespace peerlink {

/// What a reading's failure says ran short: "files" (EMFILE, ENFILE), "memory" (ENOMEM, NVML's Insufficient
/// Memory, CUDA's out of memory), "permission" (EACCES, EPERM, NVML's No Permission), or "" for anything else.
std::string shortageOf(const std::string& failure);

/// Appends to `findings` (those of the other checks, open_file_limit among them) the shortages of this process,
/// as root causes, and a finding for each kind of failed reading (nvlink_unreadable, sysfs_unreadable,
/// platform_unreadable) with its cause; sets the cause of acs_unknown where a shortage stopped the reading.
void checkShortages(const Topology& topology, const PlatformSnapshot& snapshot, std::vector<Finding>& findings);

/// Moves each finding whose cause is among `findings` right after that cause (after the cause's earlier
/// consequences), keeping the order otherwise: the root cause first, its consequences under it.
void orderByCause(std::vector<Finding>& findings);

/// `failure` (why CUDA or discovery could not start) followed by the shortages among `findings` as its likely
/// cause, each with its fix; `failure` alone when there is none.
std::string explainStartFailure(const std::string& failure, const std::vector<Finding>& findings);

}  // namespace peerlink
