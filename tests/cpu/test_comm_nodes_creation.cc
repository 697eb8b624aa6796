// Creating a Communicator whose ranks are on several hosts (PEERLINK_HOSTID per rank, one thread per rank), up to
// the point where it would need a GPU: the refusals every rank must make alike, naming what is wrong -- nodes of
// different sizes, ranks not grouped by node, and an MPI the transport cannot use (no libpeerlink_mpi.so here). Each
// fails before any GPU is touched, so it runs without one.
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "peerlink/bootstrap.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

struct Outcome {
  ErrorCode code = ErrorCode::Internal;
  std::string what;  // empty: created
};

// Every rank of a world whose rank r says it is on host hosts[r], each creating the communicator on its thread.
std::vector<Outcome> createOn(const std::vector<std::string>& hosts) {
  const int n = static_cast<int>(hosts.size());
  Params base = Params::fromMap({});
  base.set("PEERLINK_BOOTSTRAP_TIMEOUT_MS", "20000");
  base.set("PEERLINK_MPI_LIBRARY", "/nonexistent/libpeerlink_mpi.so");
  const UniqueId id = makeUniqueId(base);
  std::vector<Outcome> outcomes(hosts.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      Params params = base;
      params.set("PEERLINK_HOSTID", hosts[static_cast<std::size_t>(r)]);
      try {
        Communicator comm(id, n, r, 0, params);
      } catch (const Error& error) {
        outcomes[static_cast<std::size_t>(r)] = {error.code(), error.what()};
        return;
      }
      outcomes[static_cast<std::size_t>(r)].what = "";
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

TEST(CommNodesCreation, AnMpiThatCannotBeLoadedIsNamedOnEveryRank) {
  const std::vector<Outcome> outcomes = createOn({"a", "a", "b", "b"});
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_EQ(outcomes[r].code, ErrorCode::InvalidUsage) << outcomes[r].what;
    // Every rank names the first rank at fault (rank 0: none of them can load it) and the library's own reason.
    EXPECT_NE(outcomes[r].what.find("Communicator across 2 nodes x 2 ranks: rank 0 (host "), std::string::npos)
        << "rank " << r << ": " << outcomes[r].what;
    EXPECT_NE(outcomes[r].what.find("cannot use MPI for the transport between nodes"), std::string::npos)
        << outcomes[r].what;
    EXPECT_NE(outcomes[r].what.find("/nonexistent/libpeerlink_mpi.so"), std::string::npos) << outcomes[r].what;
  }
}

TEST(CommNodesCreation, UnevenNodesAreRefused) {
  for (const Outcome& outcome : createOn({"a", "a", "b"})) {
    EXPECT_EQ(outcome.code, ErrorCode::InvalidUsage) << outcome.what;
    EXPECT_FALSE(outcome.what.empty());
  }
}

TEST(CommNodesCreation, RanksNotGroupedByNodeAreRefused) {
  for (const Outcome& outcome : createOn({"a", "b", "a", "b"})) {
    EXPECT_EQ(outcome.code, ErrorCode::InvalidUsage) << outcome.what;
    EXPECT_NE(outcome.what.find("grouped by node"), std::string::npos) << outcome.what;
  }
}

}  // namespace
}  // namespace peerlink
