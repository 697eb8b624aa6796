// Writing result files without leaving half-written ones behind.
#pragma once

#include <ostream>
#include <string>

namespace peerlink::cli {

/// Writes `content` to `path` through a temporary file in the same folder and a rename, so a failure
/// leaves no partial file. "-" writes to `stdoutStream`. Throws Error(InvalidUsage) naming the path when
/// the folder cannot be written.
void writeOutputFile(const std::string& path, const std::string& content, std::ostream& stdoutStream);

}  // namespace peerlink::cli
