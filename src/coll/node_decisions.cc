// The decisions of a communicator across nodes (node_decisions.hpp).
#include "coll/node_decisions.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "net/net_path.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {

std::optional<NodeGrid> multiNodeGrid(const std::vector<PeerIdentity>& peers) {
  const bool oneHost = std::all_of(peers.begin(), peers.end(),
                                   [&](const PeerIdentity& peer) { return peer.hostId == peers.front().hostId; });
  if (peers.empty() || oneHost) return std::nullopt;
  return net::nodeGridOf(peers);
}

void checkOneRankPerProcess(const std::vector<int>& localRanks, const NodeGrid& grid) {
  if (localRanks.size() == 1) return;
  throw Error(ErrorCode::Unsupported,
              fmt::format("a communicator across {} nodes drives one rank per process, and this process drives ranks "
                          "{}: start one process per GPU (mpirun, srun) with one rank each",
                          grid.nodes, fmt::join(localRanks, ", ")));
}

MpiPlace mpiPlaceOf(int mpiRank, int mpiSize, const std::string& problem) {
  MpiPlace place;
  place.mpiRank = mpiRank;
  place.mpiSize = mpiSize;
  std::strncpy(place.problem, problem.c_str(), sizeof place.problem - 1);
  return place;
}

std::string mpiUsabilityProblem(const std::vector<MpiPlace>& places, const std::vector<PeerIdentity>& peers) {
  for (std::size_t r = 0; r < places.size(); ++r) {
    const MpiPlace& place = places[r];
    const std::string problem(place.problem, strnlen(place.problem, sizeof place.problem));
    if (!problem.empty()) {
      const std::string who = r < peers.size() ? describePeer(peers[r]) : "rank " + std::to_string(r);
      return fmt::format("{} cannot use MPI for the transport between nodes: {}", who, problem);
    }
  }
  return "";
}

std::string mpiPlacementProblem(const std::vector<MpiPlace>& places, const std::vector<PeerIdentity>& peers) {
  const auto describe = [&](std::size_t r) {
    return r < peers.size() ? describePeer(peers[r]) : "rank " + std::to_string(r);
  };
  const int n = static_cast<int>(places.size());
  if (std::string unusable = mpiUsabilityProblem(places, peers); !unusable.empty()) return unusable;
  for (std::size_t r = 0; r < places.size(); ++r) {
    const MpiPlace& place = places[r];
    if (place.mpiSize != n) {
      return fmt::format(
          "{} is in an MPI_COMM_WORLD of {} ranks, the communicator has {}: a communicator across "
          "nodes is MPI_COMM_WORLD, every MPI rank a rank of it",
          describe(r), place.mpiSize, n);
    }
    if (place.mpiRank != static_cast<int>(r)) {
      return fmt::format(
          "{} is MPI rank {}: a communicator across nodes needs communicator rank r to be "
          "MPI_COMM_WORLD's rank r (create it with rank = the MPI rank)",
          describe(r), place.mpiRank);
    }
  }
  return "";
}

net::PathChoice communicatorNetPath(const net::PathChoice& choice, const std::string& setting) {
  if (choice.path == net::NetPath::Staged) return choice;
  if (setting == "ON") {
    throw Error(ErrorCode::Unsupported,
                "PEERLINK_NET_CUDA_AWARE=ON: the communicator does not pass GPU memory to MPI between nodes yet (its "
                "reductions between nodes run on the host); set PEERLINK_NET_CUDA_AWARE=AUTO or OFF (" +
                    choice.reason + ")");
  }
  return {net::NetPath::Staged,
          "staged: the communicator's calls between nodes go through pinned host memory even "
          "where MPI could take GPU memory (" +
              choice.reason + ")"};
}

bool callInPlace(Collective collective, int rank, const void* send, const void* recv, std::size_t count,
                 std::size_t elementSize) {
  if (send == nullptr || recv == nullptr) return false;
  const auto* s = static_cast<const std::byte*>(send);
  const auto* r = static_cast<const std::byte*>(recv);
  const std::size_t block = count * elementSize * static_cast<std::size_t>(rank);
  switch (collective) {
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce: return s == r;
    case Collective::AllGather: return s == r + block;
    case Collective::ReduceScatter: return r == s + block;
    case Collective::AllToAll:
    case Collective::SendRecv: return false;
  }
  return false;
}

namespace {

// Sets `base` (of buffer kind `kind`) so that `pointer` is at element `offset` of it; a second setting must agree.
void placeBase(PlanBuffers& buffers, const BufferRef& ref, const void* pointer, std::size_t elementSize) {
  if (pointer == nullptr || ref.buffer == BufferKind::Scratch) return;
  std::byte* base = const_cast<std::byte*>(static_cast<const std::byte*>(pointer)) - ref.offset * elementSize;
  std::byte*& slot = ref.buffer == BufferKind::Input ? buffers.input : buffers.output;
  if (slot != nullptr && slot != base) {
    throw Error(ErrorCode::Internal,
                fmt::format("a rank's send and recv imply two bases of its {} buffer", bufferKindName(ref.buffer)));
  }
  slot = base;
}

std::byte* addressOf(const PlanBuffers& buffers, const BufferRef& ref, std::size_t elementSize) {
  std::byte* base = ref.buffer == BufferKind::Input    ? buffers.input
                    : ref.buffer == BufferKind::Output ? buffers.output
                                                       : buffers.scratch;
  return base == nullptr ? nullptr : base + ref.offset * elementSize;
}

}  // namespace

PlanBuffers planBuffersOf(const RankLayout& layout, const void* send, const void* recv, std::size_t elementSize) {
  PlanBuffers buffers;
  if (layout.sendElements > 0) placeBase(buffers, layout.send, send, elementSize);
  if (layout.recvElements > 0) placeBase(buffers, layout.recv, recv, elementSize);
  return buffers;
}

std::vector<MemberCall> memberCallsOf(const HierarchicalPlan& plan, int rank, ReduceOp op, const PlanBuffers& buffers) {
  const std::size_t size = dataTypeSize(plan.plan.type);
  std::vector<MemberCall> calls;
  for (std::size_t p = 0; p < plan.phases.size(); ++p) {
    for (const GroupCall& call : plan.phases[p].calls) {
      if (call.collective == Collective::SendRecv) {
        throw Error(ErrorCode::Unsupported,
                    "a send/recv plan: the communicator's send/recv goes through splitPeerCalls");
      }
      const auto at = std::find(call.members.begin(), call.members.end(), rank);
      if (at == call.members.end()) continue;
      const auto m = static_cast<std::size_t>(at - call.members.begin());
      if (call.scope == Scope::InNode && call.finishes && op == ReduceOp::Avg) {
        throw Error(ErrorCode::Internal,
                    "an in-node call of " + plan.phases[p].name +
                        " finishes an average: the node's communicator cannot divide by the world");
      }
      MemberCall member;
      member.scope = call.scope;
      member.phase = p;
      member.call = &call;
      member.member = static_cast<int>(m);
      member.collective = call.collective;
      member.send = addressOf(buffers, call.sends[m], size);
      member.recv = addressOf(buffers, call.recvs[m], size);
      member.count = call.count;
      member.root = call.root;
      member.op = groupReduceOp(call, op);
      member.avgDivisor = groupAvgDivisor(call, plan.grid);
      calls.push_back(member);
    }
  }
  return calls;
}

PeerSplit splitPeerCalls(const std::vector<PeerCall>& calls, const NodeGrid& grid, int rank) {
  PeerSplit split;
  for (const PeerCall& call : calls) {
    if (grid.nodeOf(call.peer) == grid.nodeOf(rank)) {
      PeerCall local = call;
      local.peer = grid.localOf(call.peer);
      split.inNode.push_back(local);
      continue;
    }
    auto pair = std::find_if(split.acrossNodes.begin(), split.acrossNodes.end(),
                             [&](const PeerSplit::Pair& p) { return p.peer == call.peer; });
    if (pair == split.acrossNodes.end()) {
      split.acrossNodes.push_back({call.peer, {}});
      pair = split.acrossNodes.end() - 1;
    }
    pair->calls.push_back(call);
  }
  const auto key = [rank](const PeerSplit::Pair& p) {
    return std::make_pair(std::min(rank, p.peer), std::max(rank, p.peer));
  };
  std::sort(split.acrossNodes.begin(), split.acrossNodes.end(),
            [&](const PeerSplit::Pair& a, const PeerSplit::Pair& b) { return key(a) < key(b); });
  return split;
}

}  // namespace peerlink::coll
