// MPI's own exchange on a rail's ring (net/rail_exchange.hpp), the reference `peerlink coll` times beside a phase
// across nodes: the neighbours on every rail, messages cut where MPI's int count needs it, every byte arriving from
// the previous rank of the rail over loopbackWorld (one thread per rank), and a silent rank named at the deadline.
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "net/rail_exchange.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

// Runs body(rank, p2p) on one thread per rank of a loopback world of `grid`'s ranks; each rank's error text.
std::vector<std::string> onEveryRank(const coll::NodeGrid& grid, const std::function<void(int, PointToPoint&)>& body) {
  std::vector<std::unique_ptr<PointToPoint>> world = loopbackWorld(grid.size());
  std::vector<std::string> errors(static_cast<std::size_t>(grid.size()));
  std::vector<std::thread> threads;
  for (int r = 0; r < grid.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, *world[static_cast<std::size_t>(r)]);
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(r)] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return errors;
}

std::uint8_t patternByte(int rank, std::size_t i) {
  return static_cast<std::uint8_t>(rank * 37 + i * 11 + i / 256);
}

TEST(RailExchange, NeighboursAreTheNodesAroundAtTheSameLocalIndex) {
  const coll::NodeGrid grid{3, 2};  // ranks 0 1 | 2 3 | 4 5
  EXPECT_EQ(railRingNeighbours(grid, 0).next, 2);
  EXPECT_EQ(railRingNeighbours(grid, 0).previous, 4);
  EXPECT_EQ(railRingNeighbours(grid, 3).next, 5);
  EXPECT_EQ(railRingNeighbours(grid, 3).previous, 1);
  EXPECT_EQ(railRingNeighbours(grid, 5).next, 1);
  EXPECT_EQ(railRingNeighbours(grid, 5).previous, 3);
  const RingNeighbours pair = railRingNeighbours({2, 4}, 6);
  EXPECT_EQ(pair.next, 2);
  EXPECT_EQ(pair.previous, 2);
  const RingNeighbours alone = railRingNeighbours({1, 4}, 3);
  EXPECT_EQ(alone.next, 3);
  EXPECT_EQ(alone.previous, 3);
  EXPECT_THROW(railRingNeighbours(grid, 6), Error);
  EXPECT_THROW(railRingNeighbours(grid, -1), Error);
}

TEST(RailExchange, MessagesAreCutAtTheLimit) {
  EXPECT_EQ(messageSizes(0, 8), std::vector<std::size_t>{});
  EXPECT_EQ(messageSizes(8, 8), std::vector<std::size_t>{8});
  EXPECT_EQ(messageSizes(20, 8), (std::vector<std::size_t>{8, 8, 4}));
  EXPECT_EQ(messageSizes(std::size_t{5} << 30, std::size_t{1} << 30).size(), 5u);
  EXPECT_THROW(messageSizes(8, 0), Error);
}

// Every rank receives exactly what the previous rank of its rail sent, in one message or several.
TEST(RailExchange, EveryByteComesFromThePreviousRankOfTheRail) {
  for (const coll::NodeGrid grid : {coll::NodeGrid{2, 2}, coll::NodeGrid{3, 2}, coll::NodeGrid{4, 1}}) {
    for (const std::size_t maxMessage : {std::size_t{1} << 30, std::size_t{1000}}) {
      const std::size_t bytes = 4500;
      std::vector<std::vector<std::uint8_t>> received(static_cast<std::size_t>(grid.size()));
      const std::vector<std::string> errors = onEveryRank(grid, [&](int rank, PointToPoint& p2p) {
        std::vector<std::uint8_t> send(bytes);
        for (std::size_t i = 0; i < bytes; ++i) send[i] = patternByte(rank, i);
        std::vector<std::uint8_t>& recv = received[static_cast<std::size_t>(rank)];
        recv.assign(bytes, 0);
        RailExchange exchange;
        exchange.p2p = &p2p;
        exchange.neighbours = railRingNeighbours(grid, rank);
        exchange.timeout = std::chrono::milliseconds(10000);
        exchange.maxMessage = maxMessage;
        EXPECT_GT(timeExchanges(exchange, send.data(), recv.data(), bytes, 1, 3), 0.0);
      });
      for (int r = 0; r < grid.size(); ++r) {
        SCOPED_TRACE(std::to_string(grid.nodes) + " x " + std::to_string(grid.ranksPerNode) + ", rank " +
                     std::to_string(r) + ", messages of " + std::to_string(maxMessage));
        EXPECT_EQ(errors[static_cast<std::size_t>(r)], "");
        const int from = railRingNeighbours(grid, r).previous;
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < bytes; ++i)
          wrong += received[static_cast<std::size_t>(r)][i] != patternByte(from, i);
        EXPECT_EQ(wrong, 0u);
      }
    }
  }
}

// Rank 1 never takes part: rank 3, whose previous rank on rail 1 it is, names it at its deadline.
TEST(RailExchange, ASilentRankIsNamedAtTheDeadline) {
  const coll::NodeGrid grid{2, 2};
  const std::vector<std::string> errors = onEveryRank(grid, [&](int rank, PointToPoint& p2p) {
    if (rank == 1) return;
    std::vector<std::uint8_t> send(64, 1);
    std::vector<std::uint8_t> recv(64, 0);
    RailExchange exchange;
    exchange.p2p = &p2p;
    exchange.neighbours = railRingNeighbours(grid, rank);
    exchange.timeout = std::chrono::milliseconds(100);
    exchange.describe = [](int r) { return "rank " + std::to_string(r) + " (host h" + std::to_string(r / 2) + ")"; };
    try {
      exchangeOnce(exchange, send.data(), recv.data(), send.size());
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Timeout);
      throw;
    }
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[2], "");
  EXPECT_NE(errors[3].find("MPI's own exchange of 64 bytes on rank 3 (host h1): nothing within 100 ms from rank 1 "
                           "(host h0)"),
            std::string::npos)
      << errors[3];
}

}  // namespace
}  // namespace peerlink::net
