// choosePath, checkDirectPath, reducesOnHost, nodeGridOf (net_path.hpp).
#include "net/net_path.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

std::string mpiOf(const PathFacts& facts) {
  return facts.mpiName.empty() ? std::string("this MPI") : facts.mpiName;
}

}  // namespace

bool wantsStartupCheck(const PathFacts& facts) {
  return !facts.callerMemoryIsHost && facts.mpiCudaSupport == 1 && facts.setting != "OFF";
}

std::size_t largestReductionBytes(const coll::Plan& plan) {
  std::size_t largest = 0;
  for (const coll::Step& step : plan.steps) {
    for (const coll::Transfer& transfer : step.transfers) {
      if (transfer.kind == coll::TransferKind::Reduce) largest = std::max(largest, transfer.count);
    }
  }
  return largest * dataTypeSize(plan.type);
}

bool reducesOnHost(const coll::Plan& plan, std::size_t pieces, std::size_t gpuMinBytes) {
  if (pieces != 1) return false;
  const std::size_t largest = largestReductionBytes(plan);
  return largest > 0 && largest < gpuMinBytes;
}

PathChoice choosePath(const PathFacts& facts) {
  if (facts.callerMemoryIsHost) return {NetPath::Direct, "host memory: MPI reads the buffers themselves"};
  if (facts.setting == "OFF") return {NetPath::Staged, "PEERLINK_NET_CUDA_AWARE=OFF: through pinned host memory"};
  if (facts.mpiCudaSupport == 1 && facts.startupCheck == 1) {
    return {NetPath::Direct, mpiOf(facts) +
                                 " is CUDA-aware (MPIX_Query_cuda_support) and a device buffer sent to "
                                 "this rank arrived intact: MPI gets device pointers"};
  }
  std::string why;
  if (facts.mpiCudaSupport == 1) {
    why = mpiOf(facts) + " says it is CUDA-aware, but a device buffer sent to this rank itself " +
          (facts.startupCheck == 0 ? "arrived wrong" : "was not tried");
  } else if (facts.mpiCudaSupport == 0) {
    why = mpiOf(facts) + " is not CUDA-aware (its own query says so)";
  } else {
    why = mpiOf(facts) + " cannot say whether it is CUDA-aware (no MPIX_Query_cuda_support or MPIX_GPU_query_support)";
  }
  if (facts.setting == "ON") {
    throw Error(ErrorCode::InvalidUsage, "PEERLINK_NET_CUDA_AWARE=ON, but " + why +
                                             ": use a CUDA-aware MPI build (Open MPI with UCX and CUDA, MPICH with "
                                             "CUDA) or set PEERLINK_NET_CUDA_AWARE=AUTO");
  }
  return {NetPath::Staged, why + ": through pinned host memory"};
}

bool checkDirectPath(PointToPoint& p2p, DeviceAccess& device, void* source, void* target, std::size_t bytes,
                     std::chrono::milliseconds timeout) {
  std::vector<unsigned char> pattern(bytes);
  for (std::size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<unsigned char>((i * 131 + 7) & 0xff);
  std::vector<unsigned char> back(bytes, 0);
  auto* hostIn = static_cast<unsigned char*>(device.allocateHost(bytes));
  auto* hostOut = static_cast<unsigned char*>(device.allocateHost(bytes));
  std::memcpy(hostIn, pattern.data(), bytes);
  std::memset(hostOut, 0, bytes);
  const auto end = std::chrono::steady_clock::now() + timeout;
  const auto wait = [&](auto done) {
    while (!done()) {
      if (std::chrono::steady_clock::now() >= end) {
        throw Error(ErrorCode::Timeout,
                    "the check of MPI on device memory (a message to this rank itself) did not "
                    "finish within " +
                        std::to_string(timeout.count()) + " ms");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  };
  bool intact = false;
  try {
    device.copyAsync(source, hostIn, bytes);
    const std::uint64_t written = device.mark();
    wait([&] { return device.reached(written); });
    const PointToPoint::Request recv = p2p.irecv(p2p.rank(), 0, target, bytes);
    const PointToPoint::Request send = p2p.isend(p2p.rank(), 0, source, bytes);
    wait([&] { return p2p.test(send); });
    wait([&] { return p2p.test(recv); });
    device.copyAsync(hostOut, target, bytes);
    const std::uint64_t read = device.mark();
    wait([&] { return device.reached(read); });
    intact = std::memcmp(hostOut, pattern.data(), bytes) == 0;
  } catch (...) {
    device.freeHost(hostIn);
    device.freeHost(hostOut);
    throw;
  }
  device.freeHost(hostIn);
  device.freeHost(hostOut);
  return intact;
}

coll::NodeGrid nodeGridOf(const std::vector<PeerIdentity>& peers) {
  if (peers.empty()) throw Error(ErrorCode::InvalidUsage, "a world of no ranks has no nodes");
  std::vector<std::uint64_t> order;                 // host ids by first rank
  std::map<std::uint64_t, std::vector<int>> ranks;  // host id -> its ranks
  for (std::size_t r = 0; r < peers.size(); ++r) {
    auto& list = ranks[peers[r].hostId];
    if (list.empty()) order.push_back(peers[r].hostId);
    list.push_back(static_cast<int>(r));
  }
  const std::vector<int>& first = ranks[order.front()];
  const auto hostOf = [&](int rank) { return peers[static_cast<std::size_t>(rank)].hostName; };
  for (std::uint64_t id : order) {
    if (ranks[id].size() != first.size()) {
      throw Error(ErrorCode::InvalidUsage,
                  "host " + hostOf(ranks[id].front()) + " has " + std::to_string(ranks[id].size()) + " ranks, host " +
                      hostOf(first.front()) + " " + std::to_string(first.size()) +
                      ": collectives across nodes need the same number of ranks on every node");
    }
  }
  const coll::NodeGrid grid{static_cast<int>(order.size()), static_cast<int>(first.size())};
  for (std::size_t node = 0; node < order.size(); ++node) {
    const std::vector<int>& list = ranks[order[node]];
    for (std::size_t local = 0; local < list.size(); ++local) {
      const int want = grid.rankOf(static_cast<int>(node), static_cast<int>(local));
      if (list[local] != want) {
        const int begin = grid.rankOf(static_cast<int>(node), 0);
        throw Error(ErrorCode::InvalidUsage,
                    "rank " + std::to_string(want) + " is on host " + hostOf(want) + ", but ranks " +
                        std::to_string(begin) + "-" + std::to_string(begin + grid.ranksPerNode - 1) +
                        " should all be on host " + hostOf(list.front()) +
                        ": start ranks grouped by node (mpirun --map-by slot, srun --distribution=block)");
      }
    }
  }
  return grid;
}

}  // namespace peerlink::net
