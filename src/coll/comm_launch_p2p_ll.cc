// Send/recv groups in LL lines (comm_launch_p2p_ll.hpp). An eager group's host time is most of what a small
// send/recv costs (6.2 us in groupEnd on 4x H100), so nothing here allocates but the
// group's argument structs.
#include "coll/comm_launch_p2p_ll.hpp"

#include <algorithm>

#include "coll/comm_launch_support.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kSlotLines = kernels::kCollP2pLlSlotBytes / kernels::kCollLlLineBytes;

std::size_t linesOf(std::size_t bytes) {
  return (bytes + kernels::kCollLlLinePayload - 1) / kernels::kCollLlLinePayload;
}

}  // namespace

bool placeP2pLlJobs(const std::vector<SendRecvPair>& pairs, std::vector<kernels::CollP2pLlArgs>& args) {
  std::size_t used[kernels::kCollMaxRanks][kernels::kCollMaxRanks] = {};  // [sender][receiver]: slot lines so far
  for (const SendRecvPair& pair : pairs) {
    const std::size_t bytes = pair.send.count * dataTypeSize(pair.send.type);
    if (bytes == 0) continue;
    const int from = pair.send.rank;
    const int to = pair.recv.rank;
    kernels::CollP2pLlJob job;
    job.bytes = bytes;
    if (from != to) {
      std::size_t& lines = used[from][to];
      job.lineOffset = lines;
      lines += linesOf(bytes);
      if (lines > kSlotLines) return false;
      kernels::CollP2pLlArgs& sender = args[static_cast<std::size_t>(from)];
      if (sender.nsends == kernels::kCollMaxJobs) return false;
      kernels::CollP2pLlJob& send = sender.sends[sender.nsends++];
      send = job;
      send.src = pair.send.send;
      send.peer = to;
    }
    kernels::CollP2pLlArgs& receiver = args[static_cast<std::size_t>(to)];
    if (receiver.nrecvs == kernels::kCollMaxJobs) return false;
    kernels::CollP2pLlJob& recv = receiver.recvs[receiver.nrecvs++];
    recv = job;
    recv.dst = pair.recv.recv;
    recv.peer = from;
    if (from == to) recv.src = pair.send.send;
  }
  return true;
}

bool launchLlSendRecvPairs(CommState& state, const std::vector<SendRecvPair>& pairs,
                           const std::vector<cudaStream_t>& streams, const std::vector<unsigned int>& peerMasks,
                           bool capturing) {
  const int n = state.nranks;
  std::vector<kernels::CollP2pLlArgs> args(static_cast<std::size_t>(n));
  if (!placeP2pLlJobs(pairs, args)) return false;
  forEachRank(state, capturing, [&](int r) {
    const auto index = static_cast<std::size_t>(r);
    if (peerMasks[index] == 0) return;
    kernels::CollP2pLlArgs& rankArgs = args[index];
    rankArgs.sync = syncArgs(state, r, Collective::SendRecv, true, peerMasks[index]);
    for (int p = 0; p < n; ++p) rankArgs.scratch[p] = state.tableOf(r).p2pScratch[p];
    std::size_t largest = 0;
    for (int j = 0; j < rankArgs.nsends; ++j) largest = std::max(largest, rankArgs.sends[j].bytes);
    for (int j = 0; j < rankArgs.nrecvs; ++j) largest = std::max(largest, rankArgs.recvs[j].bytes);
    kernels::launchCollP2pLl(rankArgs, kernels::collLlBlocks(largest, state.maxBlocks), streams[index],
                             launchOf(state, r, capturing));
  });
  return true;
}

}  // namespace peerlink::coll
