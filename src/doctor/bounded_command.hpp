// Running a program found on PATH with a deadline and taking its standard output: how the doctor asks an
// MPI's own tools (ompi_info, mpichversion) what they were built with, without linking any MPI.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace peerlink {

/// What running a command gave.
struct CommandOutput {
  bool started = false;   ///< false: not found on PATH or could not be started (see `problem`)
  bool timedOut = false;  ///< the deadline passed: the command's process group was killed
  int exitCode = -1;      ///< its exit status when it exited normally; -1 otherwise
  std::string out;        ///< standard output, up to the byte cap
  std::string problem;    ///< why it did not start or finish, in words; empty when it did
};

/// Runs `argv` (argv[0] looked up on PATH) with standard input from /dev/null and standard error discarded,
/// in its own process group, keeping at most `maxBytes` of its output. Past `timeout` the whole group is
/// killed (SIGKILL) and reaped, so nothing it started outlives the call. Never throws.
CommandOutput runBoundedCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                std::size_t maxBytes = std::size_t{8} << 20);

}  // namespace peerlink
