#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace peerlink {

SampleStats computeStats(std::vector<double> samples) {
  SampleStats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  stats.count = static_cast<int>(n);
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  stats.p99 = samples[std::max<std::size_t>(rank, 1) - 1];
  return stats;
}

}  // namespace peerlink
