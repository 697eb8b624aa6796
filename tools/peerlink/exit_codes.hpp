// The CLI's exit codes (documented in docs/cli.md and README). Stable: scripts depend on them.
#pragma once

#include "peerlink/error.hpp"

namespace peerlink::cli {

enum ExitCode : int {
  kExitOk = 0,            ///< success; for doctor: every pair OK
  kExitRuntimeError = 1,  ///< a CUDA/NVML/OS call failed, or another runtime failure
  kExitUsage = 2,         ///< bad command line, PEERLINK_* value or input file
  kExitNoGpu = 3,         ///< no usable CUDA GPU
  kExitDegraded = 4,      ///< doctor/bench: something works, but worse than it should
  kExitBroken = 5,        ///< doctor/bench: something is broken (wrong data, hang, no P2P where promised)
};

/// The exit code for an Error that reached main.
int exitCodeFor(ErrorCode code) noexcept;

}  // namespace peerlink::cli
