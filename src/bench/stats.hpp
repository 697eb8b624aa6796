// Statistics of timing samples. Pure.
#pragma once

#include <vector>

namespace peerlink {

struct SampleStats {
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double p99 = 0;  ///< nearest-rank 99th percentile
  int count = 0;
};

/// Statistics of `samples` (any order); all zero when empty.
SampleStats computeStats(std::vector<double> samples);

}  // namespace peerlink
