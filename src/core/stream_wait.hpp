// Waiting for a stream on the host with a deadline, never blocking in cudaStreamSynchronize: a kernel that
// spins forever must become an error, not a hang.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <string>

namespace peerlink {

/// Polls `stream` until its work is done. Throws Error(Timeout) "<what> did not finish within <ms> ms" (plus
/// " (<hint>)" when `hint` is given, e.g. the knob that sets the deadline), or the CUDA error the stream hit.
/// `check`, where given, runs about every 10 ms while the stream is busy and may throw: a communicator's health, so
/// that a kernel which gave up at its own deadline is reported then, not after the stream's whole allowance.
void waitForStream(cudaStream_t stream, std::chrono::milliseconds timeout, const std::string& what,
                   const std::string& hint = "", const std::function<void()>& check = {});

}  // namespace peerlink
