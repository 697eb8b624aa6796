// What the development tools (tools/tune/) share: integer positional arguments with a default and a floor, a
// peerlink::Error turned into "tool: message" on stderr and exit status 1, the median of timed rounds, and the
// check that the process sees as many GPUs as a tool needs.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"

namespace peerlink::tools {

/// argv[index] read as an integer (atoi: anything else reads as 0), at least `least`; `fallback` when the
/// argument is absent.
inline long positionalArg(int argc, char** argv, int index, long fallback, long least) {
  if (index >= argc) return fallback;
  const long value = std::atol(argv[index]);
  return value < least ? least : value;
}

/// `run()`'s exit status, or 1 after printing "name: what" when it throws a peerlink::Error.
template <typename Run>
int runTool(const char* name, Run&& run) {
  try {
    return run();
  } catch (const Error& error) {
    std::fprintf(stderr, "%s: %s\n", name, error.what());
    return 1;
  }
}

/// Runs `round` (which returns a time) once untimed, then `iterations` times, and returns the median of those.
template <typename Round>
double medianOfRounds(int iterations, Round&& round) {
  round();  // warm-up
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) times.push_back(round());
  std::sort(times.begin(), times.end());
  return times.empty() ? 0.0 : times[times.size() / 2];
}

/// The GPUs this process sees, or 0 after printing "name: needs ... GPUs (found n)" on stderr when they are
/// fewer than `least` or more than `most` (0: no upper bound).
inline int gpusBetween(const char* name, int least, int most = 0) {
  int count = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count >= least && (most == 0 || count <= most)) return count;
  if (most == 0) {
    std::fprintf(stderr, "%s: needs %d+ GPUs (found %d)\n", name, least, count);
  } else {
    std::fprintf(stderr, "%s: needs %d-%d GPUs (found %d)\n", name, least, most, count);
  }
  return 0;
}

}  // namespace peerlink::tools
