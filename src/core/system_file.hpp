// Reading the small files the kernel publishes (/sys, /proc) with the reason when one cannot be read: a file
// that is not there (ENOENT: a VM or container hides it) says something about the machine, one that cannot be
// opened for lack of descriptors or memory says something about this process only, and callers must tell the
// two apart (FailedReadings, the doctor's root causes).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace peerlink {

/// The whole file (at most `limit` bytes); nullopt with errno in `*error` when it cannot be opened or read.
std::optional<std::string> readSystemFile(const std::string& path, int* error,
                                          std::size_t limit = std::size_t{1} << 20);

/// "cannot read <path>: <errno text>" with core/deadline.hpp's shortageHint: a reading's failure as messages
/// and FailedReadings carry it.
std::string systemFileFailure(const std::string& path, int error);

}  // namespace peerlink
