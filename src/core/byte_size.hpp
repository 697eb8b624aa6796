// Sizes as nccl-tests and peerlink's flags write them: a number of bytes with an optional K, M or G suffix; and sizes
// as peerlink's messages write them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace peerlink {

/// "8" -> 8, "64K" -> 65536, "256M", "1G" (powers of 1024, case-insensitive, an optional trailing B). Nullopt for
/// anything else: no digits first, a sign, another suffix, or a value past 64 bits.
std::optional<std::uint64_t> parseByteSize(const std::string& text);

/// "8 B", "256 KiB", "1.5 MiB", "2 GiB": in the largest unit of 1024 that leaves at least 1, whole or to a tenth.
std::string formatByteSize(std::uint64_t bytes);

}  // namespace peerlink
