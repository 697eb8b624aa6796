// Writing result files without leaving half-written ones behind, and checking their paths before a run.
#pragma once

#include <ostream>
#include <string>

namespace peerlink::cli {

/// Writes `content` to `path` through a temporary file in the same folder and a rename, so a failure
/// leaves no partial file. "-" writes to `stdoutStream`. Throws Error(InvalidUsage) naming the path when
/// the folder cannot be written.
void writeOutputFile(const std::string& path, const std::string& content, std::ostream& stdoutStream);

/// Checks that writeOutputFile could write `path` (given to `flag`), before a run that takes minutes: its
/// folder exists and is writable, and the path is not a folder. "-" and "" pass. Throws Error(InvalidUsage)
/// naming the flag and the path.
void checkOutputPath(const char* flag, const std::string& path);

}  // namespace peerlink::cli
