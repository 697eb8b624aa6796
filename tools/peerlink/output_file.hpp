// Writing result files: no half-written regular file is ever left behind, and special files (a device, a
// FIFO, /dev/stdout) and symbolic links behave as users expect. Paths are checked before a run.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace peerlink::cli {

/// How a path is written (pure: decided from the file system's answers, without writing).
struct OutputTarget {
  enum class Kind {
    Stdout,   ///< "-": the command's output stream
    Replace,  ///< a regular file (new or existing): a temporary file in its folder, renamed over it
    Direct,   ///< a device, FIFO or /proc file descriptor: opened and written in place
  };
  Kind kind = Kind::Replace;
  std::string path;  ///< Replace: the file at the end of any symbolic links (the links stay links); else as given
};

/// Where `path` leads: a path through /dev or /proc, or to something that is neither a regular file nor a
/// folder, is written in place; a regular file or a new name (through any symbolic links) is replaced.
/// Throws Error(InvalidUsage) for a folder, a link loop, or an empty path.
OutputTarget resolveOutputTarget(const std::string& path);

/// How long writing to a special file may wait for a reader (a FIFO nobody opened) or for room (a full pipe).
inline constexpr std::chrono::seconds kSpecialFileWait{10};

/// Writes `content` to `path`: "-" to `stdoutStream`; a regular file through a temporary file in the same
/// folder and a rename (a failure leaves no partial file; a symbolic link stays one and its target is
/// written; the file's mode is kept); a special file in place, waiting at most kSpecialFileWait. Throws
/// Error(InvalidUsage) naming the path when it cannot be written there, Error(SystemError) when writing
/// fails (a full disk).
void writeOutputFile(const std::string& path, const std::string& content, std::ostream& stdoutStream);

/// Checks that writeOutputFile could write `path` (given to `flag`), before a run that takes minutes: its
/// folder exists and is writable, and the path is not a folder. "-", "" and special files pass. Throws
/// Error(InvalidUsage) naming the flag and the path.
void checkOutputPath(const char* flag, const std::string& path);

}  // namespace peerlink::cli
