// Checks on the arguments of a copy, before anything is enqueued.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "peerlink/topology.hpp"

namespace peerlink {

/// Whether [a, a+bytes) and [b, b+bytes) share a byte. Pure.
bool rangesOverlap(std::uintptr_t a, std::uintptr_t b, std::size_t bytes) noexcept;

/// Throws Error(InvalidUsage) naming `what` ("source", "destination") when `device` is not a GPU of the
/// topology, `pointer` is null, or CUDA says the memory is not device memory of `device` (host memory,
/// another GPU's memory, not CUDA memory at all).
/// `mappedBy` (or -1): memory of another process mapped here (IPC, CUMEM) may be reported by CUDA as the
/// importing GPU's rather than its owner's (legacy IPC mappings are), so that GPU is accepted too.
void validateDevicePointer(const Topology& topology, const void* pointer, int device, const char* what,
                           int mappedBy = -1);

}  // namespace peerlink
