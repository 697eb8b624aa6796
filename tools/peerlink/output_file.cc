#include "output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::cli {

void writeOutputFile(const std::string& path, const std::string& content, std::ostream& stdoutStream) {
  if (path == "-") {
    stdoutStream << content;
    return;
  }
  const std::filesystem::path target(path);
  const std::filesystem::path temporary =
      target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) {
      throw Error(ErrorCode::InvalidUsage, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    file << content;
    file.flush();
    if (!file) {
      const std::string reason = std::strerror(errno);
      std::remove(temporary.c_str());
      throw Error(ErrorCode::SystemError, fmt::format("cannot write {}: {}", path, reason));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error(ErrorCode::InvalidUsage, fmt::format("cannot write {}: {}", path, error.message()));
  }
}

void checkOutputPath(const char* flag, const std::string& path) {
  if (path.empty() || path == "-") return;
  const std::filesystem::path target(path);
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} {}: folder {} does not exist", flag, path, folder.string()));
  }
  if (access(folder.c_str(), W_OK) != 0) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} {}: folder {} is not writable", flag, path, folder.string()));
  }
  if (std::filesystem::is_directory(target, error)) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} {}: is a folder, not a file", flag, path));
  }
}

}  // namespace peerlink::cli
