// Waiting for a stream on the host with a deadline, never blocking in cudaStreamSynchronize: a kernel that
// spins forever must become an error, not a hang.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <string>

namespace peerlink {

/// Polls `stream` until its work is done. Throws Error(Timeout) "<what> did not finish within <ms> ms" (plus
/// " (<hint>)" when `hint` is given, e.g. the knob that sets the deadline), or the CUDA error the stream hit.
void waitForStream(cudaStream_t stream, std::chrono::milliseconds timeout, const std::string& what,
                   const std::string& hint = "");

}  // namespace peerlink
