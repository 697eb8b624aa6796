// What a shell command prints on stdout (for tests that read a tool's output: nm, readelf, the built CLI).
#pragma once

#include <cstdio>
#include <string>

namespace peerlink::testing {

inline std::string commandOutput(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  ::pclose(pipe);
  return output;
}

}  // namespace peerlink::testing
