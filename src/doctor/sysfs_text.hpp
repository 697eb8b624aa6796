// Reading small files and links of sysfs and procfs (real or fake trees) without throwing: nullopt for
// a file that is missing or fails to read (sysfs returns errors for some attributes, e.g. a netdev's
// `speed` while its link is down).
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace peerlink {

/// The whole content of `file`; nullopt when it cannot be opened or read, or is empty (a read error on the
/// first byte and an empty file look the same through a stream).
inline std::optional<std::string> readSysText(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad() || text.fail()) return std::nullopt;
  return text.str();
}

/// Whether `path` exists, without following a last symbolic link.
inline bool sysPathExists(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::exists(std::filesystem::symlink_status(path, error));
}

}  // namespace peerlink
