// Driving the peerlink CLI in-process (cli::run) from cpu tests, with what it printed and its exit code.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace peerlink::cli {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

// `peerlink args...`, as if from the command line.
inline CliResult runCli(std::vector<std::string> args) {
  args.insert(args.begin(), "peerlink");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out;
  std::ostringstream err;
  CliResult result;
  result.code = run(static_cast<int>(argv.size()), argv.data(), out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace peerlink::cli
