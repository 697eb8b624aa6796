// Send/recv groups in LL lines (comm_launch_p2p_ll.hpp).
#include "coll/comm_launch_p2p_ll.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "coll/comm_launch_support.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kLineBytes = 16;  // an LL line: 8 payload bytes with their flag (ll_line.cuh)
constexpr std::size_t kSlotLines = kernels::kCollP2pLlSlotBytes / kLineBytes;

std::size_t linesOf(std::size_t bytes) {
  return (bytes + 7) / 8;
}

}  // namespace

std::optional<P2pLlJobs> p2pLlJobs(const std::vector<Transfer>& transfers, int rank) {
  P2pLlJobs jobs;
  std::map<std::pair<int, int>, std::size_t> used;  // (sender, receiver): lines of the pair's slot so far
  for (const Transfer& transfer : transfers) {
    const std::size_t bytes = transfer.send.count * dataTypeSize(transfer.send.type);
    if (bytes == 0) continue;
    const int from = transfer.send.rank;
    const int to = transfer.recv.rank;
    kernels::CollP2pLlJob job;
    job.bytes = bytes;
    if (from != to) {
      std::size_t& lines = used[{from, to}];
      job.lineOffset = lines;
      lines += linesOf(bytes);
      if (lines > kSlotLines) return std::nullopt;
    }
    if (from == rank && to != rank) {
      job.src = transfer.send.send;
      job.peer = to;
      jobs.sends.push_back(job);
    }
    if (to == rank) {
      job.dst = transfer.recv.recv;
      job.peer = from;
      if (from == rank) job.src = transfer.send.send;
      jobs.recvs.push_back(job);
    }
  }
  const auto cap = static_cast<std::size_t>(kernels::kCollMaxJobs);
  if (jobs.sends.size() > cap || jobs.recvs.size() > cap) return std::nullopt;
  return jobs;
}

bool launchLlTransfers(CommState& state, const std::vector<Transfer>& transfers,
                       const std::vector<cudaStream_t>& streams, const std::vector<unsigned int>& peerMasks,
                       bool capturing) {
  const int n = state.nranks;
  std::vector<kernels::CollP2pLlArgs> args(static_cast<std::size_t>(n));
  std::vector<int> blocks(static_cast<std::size_t>(n), 1);
  for (int r = 0; r < n; ++r) {
    const auto index = static_cast<std::size_t>(r);
    if (peerMasks[index] == 0) continue;
    const std::optional<P2pLlJobs> jobs = p2pLlJobs(transfers, r);
    if (!jobs) return false;
    kernels::CollP2pLlArgs& rankArgs = args[index];
    rankArgs.sync = syncArgs(state, r, Collective::SendRecv, true, peerMasks[index]);
    for (int p = 0; p < n; ++p) rankArgs.scratch[p] = state.symmetric.p2pScratch[p];
    std::size_t largest = 0;
    for (const kernels::CollP2pLlJob& job : jobs->sends) {
      rankArgs.sends[rankArgs.nsends++] = job;
      largest = std::max(largest, job.bytes);
    }
    for (const kernels::CollP2pLlJob& job : jobs->recvs) {
      rankArgs.recvs[rankArgs.nrecvs++] = job;
      largest = std::max(largest, job.bytes);
    }
    blocks[index] = kernels::collLlBlocks(largest, state.maxBlocks);
  }
  forEachRank(state, capturing, [&](int r) {
    const auto index = static_cast<std::size_t>(r);
    if (peerMasks[index] == 0) return;
    kernels::launchCollP2pLl(args[index], blocks[index], streams[index], launchOf(state, r, capturing));
  });
  return true;
}

}  // namespace peerlink::coll
