// Reading a file given from outside (a topology, a saved run) without hanging or running out of memory:
// only regular files (or "-" for standard input), opened without blocking, read up to a size cap.
#pragma once

#include <cstddef>
#include <string>

namespace peerlink {

/// The largest JSON document peerlink reads (a topology, a saved run): 128 MiB. A topology of 512 GPUs,
/// the most a topology file may hold, is about 110 MB pretty-printed; parsing costs a few times the size
/// in memory.
inline constexpr std::size_t kMaxJsonInputBytes = std::size_t{128} << 20;

/// The whole content of `path`, at most `maxBytes` bytes; "-" reads standard input. `what` names the
/// file in messages ("topology file", "saved run"). Throws Error(InvalidInput) naming the file and what
/// is wrong: an empty name, missing or unreadable, a folder, not a regular file (a FIFO, a device such
/// as /dev/zero, a socket: none is read, and a FIFO is never waited on), or larger than `maxBytes`.
std::string readInputFile(const std::string& path, const std::string& what, std::size_t maxBytes);

}  // namespace peerlink
