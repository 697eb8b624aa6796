#include "coll/broadcast_chains.hpp"

#include <algorithm>

namespace peerlink::coll {

int broadcastChainCount(int nranks, int requested) {
  const int most = std::max(1, nranks - 1);
  return requested <= 0 ? most : std::min(requested, most);
}

std::vector<int> broadcastChainOrder(int nranks, int root, int j) {
  std::vector<int> order;
  if (nranks <= 0) return order;
  order.reserve(static_cast<std::size_t>(nranks));
  order.push_back(root);
  const int others = nranks - 1;
  for (int i = 0; i < others; ++i) {
    const int after = (j + i) % others;  // the (after)-th rank following the root in ring order
    order.push_back((root + 1 + after) % nranks);
  }
  return order;
}

}  // namespace peerlink::coll
