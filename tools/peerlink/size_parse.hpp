// Sizes as nccl-tests writes them: a number with an optional K, M or G suffix (powers of 1024).
#pragma once

#include <cstddef>
#include <string>

namespace peerlink::cli {

/// "8" -> 8, "64K" -> 65536, "256M", "1G" (case-insensitive, an optional trailing B). Throws
/// Error(InvalidUsage) naming `flag` and the text for anything else (bad suffix, negative, overflow).
std::size_t parseSize(const std::string& text, const std::string& flag);

/// The inverse for display: 8 -> "8 B", 65536 -> "64 KiB", 1.5 MiB -> "1572864 B" when not whole.
std::string formatSize(std::size_t bytes);

}  // namespace peerlink::cli
