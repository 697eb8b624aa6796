// Where each local rank finds every rank's registered window (window_mappings.hpp).
#include "coll/window_mappings.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// The distinct GPUs of this process's ranks, ascending.
std::vector<int> localDevices(const std::vector<int>& devices) {
  std::vector<int> gpus;
  for (const int device : devices) {
    if (device >= 0) gpus.push_back(device);
  }
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  return gpus;
}

void checkSizes(const std::vector<WindowCard>& cards, std::size_t others, const char* what) {
  if (others != cards.size() || cards.size() > static_cast<std::size_t>(kernels::kCollMaxRanks)) {
    throw Error(ErrorCode::Internal, fmt::format("window of {} ranks: {} {} (one per rank, at most {} ranks)",
                                                 cards.size(), others, what, kernels::kCollMaxRanks));
  }
}

}  // namespace

std::vector<WindowMapping> windowMappings(const std::vector<WindowCard>& cards, const std::vector<int>& devices) {
  checkSizes(cards, devices.size(), "devices");
  std::vector<WindowMapping> mappings;
  const std::vector<int> gpus = localDevices(devices);
  for (std::size_t p = 0; p < cards.size(); ++p) {
    if (devices[p] >= 0 || cards[p].bytes == 0) continue;  // a rank of this process, or no buffer
    for (const int gpu : gpus) mappings.push_back({cards[p].ipcHandle, gpu});
  }
  std::sort(mappings.begin(), mappings.end());
  mappings.erase(std::unique(mappings.begin(), mappings.end()), mappings.end());
  return mappings;
}

WindowBases windowBases(const std::vector<WindowCard>& cards, const std::vector<unsigned char*>& own,
                        const std::vector<int>& devices, const std::map<WindowMapping, unsigned char*>& opened,
                        const PeerReach& reach) {
  checkSizes(cards, devices.size(), "devices");
  checkSizes(cards, own.size(), "buffers");
  WindowBases bases{};
  for (std::size_t v = 0; v < cards.size(); ++v) {
    const int device = devices[v];
    if (device < 0) continue;  // another process's rank: no row here
    for (std::size_t p = 0; p < cards.size(); ++p) {
      if (devices[p] >= 0) {
        if (devices[p] != device && !reach(device, devices[p])) {
          throw Error(ErrorCode::Unsupported,
                      fmt::format("registerWindow: rank {} (GPU {}) cannot reach rank {}'s window on GPU {} (no peer "
                                  "access between them); see `peerlink doctor`",
                                  v, device, p, devices[p]));
        }
        bases[v][p] = own[p];
        continue;
      }
      if (cards[p].bytes == 0) continue;  // rank p passes no buffer here: null
      const auto mapping = opened.find({cards[p].ipcHandle, device});
      if (mapping == opened.end() || mapping->second == nullptr) {
        throw Error(ErrorCode::Internal,
                    fmt::format("registerWindow: rank {}'s window was not opened on GPU {} (rank {})", p, device, v));
      }
      bases[v][p] = mapping->second + cards[p].offset;
    }
  }
  return bases;
}

}  // namespace peerlink::coll
