// The host ring's calls (host_ring_call.hpp).
#include "coll/host_ring_call.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "coll/partition.hpp"
#include "coll/plan.hpp"
#include "coll/planned_calls.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

kernels::HostRingCollective ringCollectiveOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return kernels::kHostRingAllReduce;
    case Collective::ReduceScatter: return kernels::kHostRingReduceScatter;
    case Collective::AllGather: return kernels::kHostRingAllGather;
    case Collective::Broadcast: return kernels::kHostRingBroadcast;
    case Collective::Reduce: return kernels::kHostRingReduce;
    case Collective::AllToAll:
    case Collective::SendRecv: return kernels::kHostRingExchange;
    default: throw Error(ErrorCode::Internal, "the host ring runs no such collective");
  }
}

}  // namespace

std::size_t hostRingCallBytes(Collective collective, std::size_t count, DataType type, int nranks) {
  const std::size_t bytes = count * dataTypeSize(type);
  const bool perRank = collective == Collective::AllGather || collective == Collective::ReduceScatter ||
                       collective == Collective::AllToAll || collective == Collective::SendRecv;
  return perRank ? bytes * static_cast<std::size_t>(nranks) : bytes;
}

std::size_t hostRingLimitBytes(Collective collective, std::size_t maxBytes, int nranks) {
  switch (collective) {
    case Collective::AllToAll:
    case Collective::SendRecv: return nranks == 2 ? maxBytes : 0;
    case Collective::Broadcast:
    case Collective::Reduce: return maxBytes * kHostRingChainFactor;
    default: return maxBytes;
  }
}

std::optional<HostRingShape> ringShapeNamed(const std::string& name, std::size_t maxSlotBytes, const std::string& what,
                                            const std::string& example) {
  if (name == "AUTO") return std::nullopt;
  const std::string usage = what + " shape '" + name + "': AUTO, or blocks x slot size as " + example;
  const std::size_t x = name.find('x');
  const bool kib = !name.empty() && name.back() == 'K';
  if (x == std::string::npos || x == 0 || !kib || x + 2 >= name.size()) throw Error(ErrorCode::InvalidInput, usage);
  HostRingShape shape;
  try {
    shape.blocks = std::stoi(name.substr(0, x));
    shape.slotBytes = static_cast<std::size_t>(std::stoul(name.substr(x + 1, name.size() - x - 2))) << 10;
  } catch (const std::exception&) {
    throw Error(ErrorCode::InvalidInput, usage);
  }
  if (shape.blocks < 1 || shape.blocks > kernels::kHostRingMaxBlocks || shape.slotBytes < 1024 ||
      shape.slotBytes > maxSlotBytes) {
    throw Error(ErrorCode::InvalidInput, what + " shape '" + name + "': 1 to " +
                                             std::to_string(kernels::kHostRingMaxBlocks) + " blocks, slots of 1K to " +
                                             std::to_string(maxSlotBytes >> 10) + "K");
  }
  return shape;
}

std::optional<HostRingShape> hostRingShapeNamed(const std::string& name) {
  return ringShapeNamed(name, kernels::kHostRingMaxSlotBytes, "host ring", "64x64K");
}

HostRingShape hostRingShape(Collective collective, const std::optional<HostRingShape>& chosen, int maxBlocks) {
  const bool chain = collective == Collective::Broadcast || collective == Collective::Reduce;
  HostRingShape shape = chosen  ? *chosen
                        : chain ? HostRingShape{64, std::size_t{64} << 10}
                                : HostRingShape{32, std::size_t{64} << 10};
  shape.blocks = std::max(1, std::min(shape.blocks, maxBlocks));
  return shape;
}

bool runsAsHostRing(Collective collective, std::size_t count, DataType type, int nranks, std::size_t maxBytes) {
  return nranks > 1 && count > 0 && plannedLineBytes(collective, count, type) == 0 &&
         hostRingCallBytes(collective, count, type, nranks) <= hostRingLimitBytes(collective, maxBytes, nranks);
}

std::vector<ExchangeSide> withOtherRanks(const std::vector<ExchangeSide>& calls, int rank) {
  std::vector<ExchangeSide> others;
  for (const ExchangeSide& call : calls) {
    if (call.peer != rank) others.push_back(call);
  }
  return others;
}

bool isTwoRankExchange(const std::vector<ExchangeSide>& calls, int rank, int nranks) {
  const std::vector<ExchangeSide> others = withOtherRanks(calls, rank);
  if (nranks != 2 || others.size() != 2 || others[0].isSend == others[1].isSend) return false;
  const int other = 1 - rank;
  return others[0].peer == other && others[1].peer == other && others[0].count == others[1].count &&
         others[0].type == others[1].type;
}

bool runsAsHostRingExchange(const std::vector<ExchangeSide>& calls, int rank, int nranks, std::size_t maxBytes) {
  if (!isTwoRankExchange(calls, rank, nranks)) return false;
  const ExchangeSide message = withOtherRanks(calls, rank).front();
  return runsAsHostRing(Collective::SendRecv, message.count, message.type, nranks, maxBytes);
}

HostRingOwnCopy hostRingOwnCopy(Collective collective, std::size_t count, int rank) {
  if (collective != Collective::AllToAll) return {};
  const std::size_t own = static_cast<std::size_t>(rank) * count;
  return {own, own, count};
}

kernels::HostRingArgs hostRingCallArgs(Collective collective, std::size_t count, DataType type,
                                       const std::vector<int>& order, int rank, int root, const HostRingShape& shape) {
  const int n = static_cast<int>(order.size());
  const bool exchange = collective == Collective::AllToAll || collective == Collective::SendRecv;
  if (n < 2 || n > kernels::kCollMaxRanks || (exchange && n != 2)) {
    throw Error(ErrorCode::Internal,
                "a host ring of " + std::to_string(n) + " ranks for " + std::string(collectiveName(collective)));
  }
  kernels::HostRingArgs args;
  args.collective = ringCollectiveOf(collective);
  args.recordedCollective = static_cast<int>(collective);
  args.nranks = n;
  args.alignElements = alignElementsOf(type);
  args.blocks = shape.blocks;
  args.slotBytes = shape.slotBytes;
  args.position = -1;
  args.rootPosition = -1;
  for (int p = 0; p < n; ++p) {
    if (order[static_cast<std::size_t>(p)] == rank) args.position = p;
    if (order[static_cast<std::size_t>(p)] == root) args.rootPosition = p;
  }
  if (args.position < 0) throw Error(ErrorCode::Internal, "rank " + std::to_string(rank) + " is not in the ring");
  if (kernels::hostRingIsChain(args.collective) && args.rootPosition < 0) {
    throw Error(ErrorCode::Internal, "root " + std::to_string(root) + " is not in the ring");
  }
  args.prev = order[static_cast<std::size_t>((args.position + n - 1) % n)];
  args.next = order[static_cast<std::size_t>((args.position + 1) % n)];
  for (int c = 0; c < n; ++c) {
    const auto i = static_cast<std::size_t>(c);
    const auto owner = static_cast<unsigned long long>(order[i]);
    switch (collective) {
      case Collective::AllReduce: {
        const ElementRange shard = partitionRange(count, n, c, args.alignElements);
        args.inBegin[i] = shard.begin;
        args.outBegin[i] = shard.begin;
        args.chunkCount[i] = shard.count;
        break;
      }
      case Collective::Broadcast:
      case Collective::Reduce:  // one chunk, the whole buffer
        args.chunkCount[i] = c == 0 ? count : 0;
        break;
      case Collective::ReduceScatter:
        args.inBegin[i] = owner * count;
        args.chunkCount[i] = count;
        break;
      case Collective::AllToAll:  // two ranks: this rank sends its chunk, stores the other's
        if (c == args.position) {
          args.inBegin[i] = static_cast<unsigned long long>(order[static_cast<std::size_t>(1 - c)]) * count;
        } else {
          args.outBegin[i] = owner * count;
        }
        args.chunkCount[i] = count;
        break;
      case Collective::SendRecv:  // two ranks: this rank's message from its send buffer, the other's into its recv
        args.chunkCount[i] = count;
        break;
      default:  // all-gather
        args.outBegin[i] = owner * count;
        args.chunkCount[i] = count;
        break;
    }
  }
  return args;
}

}  // namespace peerlink::coll
