// The peerlink command line: parses arguments, runs a subcommand, formats its output, and turns every
// failure into one line on stderr and a documented exit code (exit_codes.hpp). main() only calls run().
#pragma once

#include <ostream>

namespace peerlink::cli {

/// Runs the CLI as `peerlink argv[1..]`, writing results to `out` and messages to `err`.
/// Returns the exit code; never throws and never calls exit().
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace peerlink::cli
