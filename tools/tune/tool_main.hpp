// What every development tool's main does (tools/tune/): integer positional arguments with a default and a
// floor, and a peerlink::Error turned into "tool: message" on stderr and exit status 1.
#pragma once

#include <cstdio>
#include <cstdlib>

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

}  // namespace peerlink::tools
