// The rail's ring exchange of MPI's own (rail_exchange.hpp).
#include "net/rail_exchange.hpp"

#include <set>
#include <thread>

#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

struct Pending {
  PointToPoint::Request request;
  int peer;
  std::size_t bytes;
  bool receive;
};

std::string describeRank(const RailExchange& exchange, int rank) {
  return exchange.describe ? exchange.describe(rank) : "rank " + std::to_string(rank);
}

std::string ranksText(const RailExchange& exchange, const std::set<int>& ranks) {
  std::string text;
  for (const int rank : ranks) text += (text.empty() ? "" : ", ") + describeRank(exchange, rank);
  return text;
}

}  // namespace

RingNeighbours railRingNeighbours(const coll::NodeGrid& grid, int rank) {
  if (grid.nodes < 1 || grid.ranksPerNode < 1 || rank < 0 || rank >= grid.size()) {
    throw Error(ErrorCode::InvalidUsage, "rank " + std::to_string(rank) + " is not a rank of " +
                                             std::to_string(grid.nodes) + " nodes x " +
                                             std::to_string(grid.ranksPerNode) + " ranks");
  }
  const int node = grid.nodeOf(rank);
  const int local = grid.localOf(rank);
  return {grid.rankOf((node + 1) % grid.nodes, local), grid.rankOf((node + grid.nodes - 1) % grid.nodes, local)};
}

std::vector<std::size_t> messageSizes(std::size_t bytes, std::size_t maxMessage) {
  if (maxMessage == 0) throw Error(ErrorCode::InvalidUsage, "messages of at most 0 bytes");
  std::vector<std::size_t> sizes;
  for (std::size_t at = 0; at < bytes; at += maxMessage) sizes.push_back(std::min(maxMessage, bytes - at));
  return sizes;
}

void exchangeOnce(const RailExchange& exchange, const void* send, void* recv, std::size_t bytes) {
  PointToPoint& p2p = *exchange.p2p;
  const RingNeighbours& peers = exchange.neighbours;
  std::vector<Pending> pending;
  std::size_t offset = 0;
  try {
    for (const std::size_t size : messageSizes(bytes, exchange.maxMessage)) {
      pending.push_back({p2p.irecv(peers.previous, exchange.tag, static_cast<char*>(recv) + offset, size),
                         peers.previous, size, true});
      pending.push_back({p2p.isend(peers.next, exchange.tag, static_cast<const char*>(send) + offset, size), peers.next,
                         size, false});
      offset += size;
    }
    const std::string where =
        "MPI's own exchange of " + std::to_string(bytes) + " bytes on " + describeRank(exchange, p2p.rank()) + ": ";
    const auto end = std::chrono::steady_clock::now() + exchange.timeout;
    while (!pending.empty()) {
      for (std::size_t i = 0; i < pending.size();) {
        std::size_t received = 0;
        const Pending request = pending[i];
        bool done = false;
        try {
          done = p2p.test(request.request, &received);
        } catch (const Error& error) {
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
          throw Error(ErrorCode::RemoteError,
                      where + "a message with " + describeRank(exchange, request.peer) + " failed: " + error.what());
        }
        if (!done) {
          ++i;
          continue;
        }
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
        if (request.receive && received != request.bytes) {
          throw Error(ErrorCode::Internal, where + describeRank(exchange, request.peer) + " sent " +
                                               std::to_string(received) + " bytes where " +
                                               std::to_string(request.bytes) + " were expected");
        }
      }
      if (pending.empty()) break;
      if (std::chrono::steady_clock::now() >= end) {
        std::set<int> silent;
        std::set<int> unread;
        for (const Pending& p : pending) (p.receive ? silent : unread).insert(p.peer);
        std::string text = where + "nothing within " + std::to_string(exchange.timeout.count()) + " ms";
        if (!silent.empty()) text += " from " + ranksText(exchange, silent);
        if (!unread.empty())
          text += std::string(silent.empty() ? "" : ";") + " sends not taken by " + ranksText(exchange, unread);
        throw Error(ErrorCode::Timeout, text + " (is every rank running the same sweep?)");
      }
      std::this_thread::yield();  // MPI progresses inside test; oversubscribed ranks need the core now and then
    }
  } catch (...) {
    for (const Pending& p : pending) p2p.abandon(p.request);
    throw;
  }
}

double timeExchanges(const RailExchange& exchange, const void* send, void* recv, std::size_t bytes, int warmup,
                     int iterations) {
  if (iterations < 1) throw Error(ErrorCode::InvalidUsage, "timeExchanges: at least 1 iteration");
  for (int i = 0; i < warmup; ++i) exchangeOnce(exchange, send, recv, bytes);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) exchangeOnce(exchange, send, recv, bytes);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
}

}  // namespace peerlink::net
