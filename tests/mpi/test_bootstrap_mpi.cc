// MpiBootstrap under mpirun (-np 3): the header-only adapter compiled against Open MPI, every call, the size
// mismatch, a deadline, an abort. Every rank runs every test in the same order; each test makes its own
// bootstrap (a collective MPI_Comm_dup), so a failure in one does not leave the next out of step.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "error_text.hpp"
#include "peerlink/bootstrap_mpi.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;
using ::peerlink::testing::contains;
using ::peerlink::testing::errorOf;

BootstrapOptions withDeadline(std::chrono::milliseconds deadline) {
  BootstrapOptions options;
  options.deadline = deadline;
  return options;
}

TEST(MpiBootstrap, RanksAndIdentitiesAreMpis) {
  MpiBootstrap bootstrap(MPI_COMM_WORLD, withDeadline(10s));
  int rank = -1;
  int size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_EQ(size, 3) << "run under mpirun -np 3";
  EXPECT_EQ(bootstrap.rank(), rank);
  EXPECT_EQ(bootstrap.size(), size);
  ASSERT_EQ(bootstrap.peers().size(), 3u);
  EXPECT_EQ(bootstrap.peers()[static_cast<std::size_t>(rank)].pid, ::getpid());
  std::set<int> pids;
  for (const PeerIdentity& peer : bootstrap.peers()) {
    pids.insert(peer.pid);
    EXPECT_EQ(peer.hostId, bootstrap.peers()[0].hostId);  // one machine
    EXPECT_FALSE(peer.hostName.empty());
  }
  EXPECT_EQ(pids.size(), 3u);
}

TEST(MpiBootstrap, AllGatherSendRecvBarrier) {
  MpiBootstrap bootstrap(MPI_COMM_WORLD, withDeadline(10s));
  const int rank = bootstrap.rank();
  const int size = bootstrap.size();
  const std::uint64_t mine = 1000 + static_cast<std::uint64_t>(rank);
  const std::vector<std::uint8_t> all = bootstrap.allGather(&mine, sizeof(mine));
  ASSERT_EQ(all.size(), sizeof(mine) * static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::uint64_t value = 0;
    std::memcpy(&value, all.data() + static_cast<std::size_t>(r) * sizeof(value), sizeof(value));
    EXPECT_EQ(value, 1000u + static_cast<std::uint64_t>(r));
  }
  EXPECT_TRUE(bootstrap.allGather(nullptr, 0).empty());
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  const std::string first = "first from " + std::to_string(rank);
  const std::string second = "second from " + std::to_string(rank);
  bootstrap.send(next, 4, first.data(), first.size());
  bootstrap.send(next, 4, second.data(), second.size());
  bootstrap.send(next, 8, "eight", 5);
  bootstrap.send(rank, 2, "self", 4);
  auto text = [](const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); };
  EXPECT_EQ(text(bootstrap.recv(previous, 8)), "eight");
  EXPECT_EQ(text(bootstrap.recv(previous, 4)), "first from " + std::to_string(previous));
  EXPECT_EQ(text(bootstrap.recv(previous, 4)), "second from " + std::to_string(previous));
  EXPECT_EQ(text(bootstrap.recv(rank, 2)), "self");
  bootstrap.barrier();
  EXPECT_THROW(bootstrap.send(3, 0, "x", 1), Error);
  EXPECT_THROW(bootstrap.send(0, -1, "x", 1), Error);
}

TEST(MpiBootstrap, AllGatherOfAnotherSizeNamesTheRank) {
  MpiBootstrap bootstrap(MPI_COMM_WORLD, withDeadline(10s));
  const std::uint64_t value = 5;
  const std::size_t bytes = bootstrap.rank() == 1 ? 8 : 4;
  const std::string message = errorOf(ErrorCode::InvalidUsage, [&] { bootstrap.allGather(&value, bytes); });
  if (bootstrap.rank() == 1) {
    EXPECT_TRUE(contains(message, "this rank gave 8 bytes, rank 0 (host"));
  } else {
    EXPECT_TRUE(contains(message, "this rank gave 4 bytes, rank 1 (host"));
    EXPECT_TRUE(contains(message, "gave 8: every rank must give the same size"));
  }
  bootstrap.barrier();  // the sizes were gathered whole: the bootstrap is still in step
}

TEST(MpiBootstrap, RecvNobodyAnswersTimesOutNamingThePeer) {
  MpiBootstrap bootstrap(MPI_COMM_WORLD, withDeadline(300ms));
  if (bootstrap.rank() == 0) {
    const std::string message = errorOf(ErrorCode::Timeout, [&] { bootstrap.recv(1, 77); });
    EXPECT_TRUE(
        contains(message, "bootstrap recv from rank 1 (tag 77) on rank 0 (MPI) timed out after 300 ms: rank 1 (host"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MpiBootstrap, AbortIsSeenByThePeersWithItsReason) {
  MpiBootstrap bootstrap(MPI_COMM_WORLD, withDeadline(5s));
  std::atomic<int> heard{0};
  std::string why;
  bootstrap.onPeerLost([&](int rank, const std::string& reason) {
    if (rank == 2) why = reason;
    ++heard;
  });
  if (bootstrap.rank() == 2) {
    bootstrap.abort("the loss diverged");
    EXPECT_TRUE(contains(errorOf(ErrorCode::RemoteError, [&] { bootstrap.barrier(); }), "this rank aborted"));
  } else {
    const std::string message = errorOf(ErrorCode::RemoteError, [&] { bootstrap.recv(2, 1); });
    EXPECT_TRUE(contains(message, "rank 2 (host"));
    EXPECT_TRUE(contains(message, "aborted: the loss diverged"));
    EXPECT_EQ(heard.load(), 1);
    EXPECT_TRUE(contains(why, "aborted: the loss diverged"));
    // A collective needs rank 2: it fails at once.
    EXPECT_TRUE(contains(errorOf(ErrorCode::RemoteError, [&] { bootstrap.barrier(); }), "rank 2 (host"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  // Every rank's verdict, so that mpirun fails when any rank failed.
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
