// What the MPI end-to-end programs share: each rank's one line of outcome, to stdout and to DIR/rank<r>.txt (a rank
// cut off from mpirun still leaves its file).
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

namespace peerlink::testing {

struct RankReport {
  std::string directory;
  int rank = 0;

  void operator()(const std::string& line) const {
    std::printf("rank %d: %s\n", rank, line.c_str());
    std::fflush(stdout);
    std::ofstream(directory + "/rank" + std::to_string(rank) + ".txt") << line << '\n';
  }
};

}  // namespace peerlink::testing
