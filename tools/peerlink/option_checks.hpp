// CLI11 checks shared by the commands' options: file names that must be given, this process's standard
// output spelled as a path, numbers that must be finite.
#pragma once

#include <CLI/CLI.hpp>

namespace peerlink::cli {

/// Input-file options: rejects an empty name (a file name given empty is an error, never "no file").
CLI::Validator inputPathOption();

/// Output-file options: rejects an empty name, and spells this process's standard output ("/dev/stdout",
/// "/dev/fd/1", "/proc/self/fd/1") as "-", so that it is written, and the text gives way, as for "-".
CLI::Validator outputPathOption();

/// Numeric options that must be a finite number >= 0 (CLI11's own ranges let nan through).
CLI::Validator finiteNonNegative();

}  // namespace peerlink::cli
