// Algorithm choice (algorithm_select.hpp). First rules; to be tuned from measurements.
#include "coll/algorithm_select.hpp"

#include <algorithm>

namespace peerlink::coll {

std::vector<Algorithm> algorithmsOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return {Algorithm::TwoShot, Algorithm::OneShot, Algorithm::Ring};
    default: return {Algorithm::OneShot};
  }
}

AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytesPerRank, const Topology& /*topology*/,
                                const std::vector<int>& /*devices*/, Algorithm forced) {
  const std::vector<Algorithm> available = algorithmsOf(collective);
  if (forced != Algorithm::Auto && std::find(available.begin(), available.end(), forced) != available.end()) {
    return {forced, std::string("forced by PEERLINK_ALGO=") + algorithmName(forced)};
  }
  if (collective == Collective::AllReduce) {
    if (bytesPerRank <= 256 * 1024) {
      return {Algorithm::OneShot, "small message: one-shot (latency-bound)"};
    }
    return {Algorithm::TwoShot, "large message: two-shot (bandwidth-bound)"};
  }
  return {available.front(), "the collective's only algorithm"};
}

}  // namespace peerlink::coll
