// What the MPI end-to-end programs share: each rank's one line of outcome, to stdout and to DIR/rank<r>.txt (a rank
// cut off from mpirun still leaves its file).
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "peerlink/error.hpp"

namespace peerlink::testing {

struct RankReport {
  std::string directory;
  int rank = 0;

  void operator()(const std::string& line) const {
    std::printf("rank %d: %s\n", rank, line.c_str());
    std::fflush(stdout);
    std::ofstream(directory + "/rank" + std::to_string(rank) + ".txt") << line << '\n';
  }

  /// "fault <code> after <seconds> s: <message>": how a fault-injection run reports the error a rank got.
  void fault(const Error& error, std::chrono::steady_clock::time_point start) const {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.2f", seconds);
    (*this)(std::string("fault ") + errorCodeName(error.code()) + " after " + elapsed + " s: " + error.what());
  }
};

/// The GPUs this process sees; 0 once "SKIPPED: no CUDA GPU (...)" is reported (the program then ends, passing).
inline int gpusOrSkip(const RankReport& report) {
  int gpus = 0;
  const cudaError_t found = cudaGetDeviceCount(&gpus);
  if (found == cudaSuccess && gpus > 0) return gpus;
  report(std::string("SKIPPED: no CUDA GPU (cudaGetDeviceCount: ") +
         (found != cudaSuccess ? cudaGetErrorName(found) : "0 GPUs") + ")");
  return 0;
}

}  // namespace peerlink::testing
