// MPI started by a program that links none, as `peerlink coll` does under mpirun across hosts: the ranks meet through
// the launch's bootstrap (the launcher's variables; PEERLINK_BOOTSTRAP_ADDR across hosts), then the world of the run
// (coll::CollWorld::launched, the CLI's own) sees the hosts differ and starts MPI (net::MpiStartup: libpeerlink_mpi.so
// loaded on every rank, MPI initialized with MPI_THREAD_MULTIPLE through it, every rank's place checked); MPI's own
// exchange on each rail (net/rail_exchange.hpp, the reference `peerlink coll` times) runs on host memory and every byte
// is checked; MPI is finalized by what initialized it. No GPU, no MPI headers: run by CTest on one machine split into
// 2 nodes by PEERLINK_HOSTID, and by scripts/net-test.sh on two network namespaces.
//
//   launch_mpi_e2e reference DIR    each rank writes DIR/rank<r>.txt: "ok ..." or "error ..."
//   launch_mpi_e2e no-library DIR   rank 1 cannot load libpeerlink_mpi.so: every rank must refuse, naming rank 1,
//                                   before any rank initializes MPI (none may wait in MPI_Init_thread for it)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "coll_bench/coll_nodes.hpp"
#include "coll_bench/coll_world.hpp"
#include "net/mpi_startup.hpp"
#include "net/rail_exchange.hpp"
#include "peerlink/error.hpp"
#include "peerlink/launch.hpp"
#include "rank_report.hpp"

namespace {

using namespace peerlink;

std::uint8_t patternByte(int rank, std::size_t i) {
  return static_cast<std::uint8_t>(rank * 29 + i * 7 + i / 251);
}

// Every rank's exchange of `bytes` on its rail, cut into messages of at most `maxMessage`: "" or what differs.
std::string checkedExchange(net::RailExchange exchange, const coll::NodeGrid& grid, int rank, std::size_t bytes,
                            std::size_t maxMessage) {
  exchange.maxMessage = maxMessage;
  std::vector<std::uint8_t> send(bytes);
  std::vector<std::uint8_t> recv(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i) send[i] = patternByte(rank, i);
  net::exchangeOnce(exchange, send.data(), recv.data(), bytes);
  const int from = net::railRingNeighbours(grid, rank).previous;
  for (std::size_t i = 0; i < bytes; ++i) {
    if (recv[i] != patternByte(from, i)) {
      return fmt::format("{} bytes in messages of {}: byte {} is {}, rank {} sent {}", bytes, maxMessage, i, recv[i],
                         from, patternByte(from, i));
    }
  }
  return "";
}

std::unique_ptr<Bootstrap> connect(const Params& params) {
  LaunchBootstrapOptions options;
  options.bootstrap = BootstrapOptions::fromParams(params);
  return connectLaunchBootstrap(detectLaunchFromEnvironment(), params, options);
}

int reference(const Params& params, const testing::RankReport& report) {
  coll::CollWorld world = coll::CollWorld::launched(connect(params), 0, params);
  if (!world.nodes() || world.mpi() == nullptr) {
    throw Error(ErrorCode::InvalidUsage, "every rank is on one host: set PEERLINK_HOSTID per rank");
  }
  if (!world.mpi()->initializedHere()) throw Error(ErrorCode::Internal, "MPI was initialized before the world");
  const coll::NodeGrid grid = *world.nodes();
  const coll::CollNodes nodes = coll::collNodesOf(world);
  Bootstrap& job = *world.job();
  std::string checked;
  double seconds = 0;
  const std::size_t timedBytes = std::size_t{4} << 20;
  {
    const std::unique_ptr<net::PointToPoint> p2p = net::openMpiPointToPoint(params);
    net::RailExchange exchange;
    exchange.p2p = p2p.get();
    exchange.neighbours = net::railRingNeighbours(grid, job.rank());
    exchange.timeout = std::chrono::milliseconds(params.getInt("PEERLINK_NET_TIMEOUT_MS"));
    exchange.describe = [&](int r) { return describePeer(job.peers()[static_cast<std::size_t>(r)]); };
    for (const std::size_t bytes : {std::size_t{1}, std::size_t{4500}, (std::size_t{1} << 20) + 3}) {
      for (const std::size_t maxMessage : {std::size_t{1} << 30, std::size_t{1000}}) {
        const std::string wrong = checkedExchange(exchange, grid, job.rank(), bytes, maxMessage);
        if (!wrong.empty()) throw Error(ErrorCode::Internal, wrong);
      }
      checked += (checked.empty() ? "" : ", ") + std::to_string(bytes);
    }
    std::vector<std::uint8_t> send(timedBytes, 1);
    std::vector<std::uint8_t> recv(timedBytes, 0);
    world.barrier();
    seconds = net::timeExchanges(exchange, send.data(), recv.data(), timedBytes, 2, 5);
  }  // the communicator is freed before MPI is finalized
  world.finishMpi();
  report(fmt::format(
      "ok MPI initialized here ({}, MPI_THREAD_MULTIPLE) and finalized; rail exchange of {} bytes right "
      "on {} nodes x {} (host {}); 4 MiB each way in {:.1f} us, {:.2f} GB/s",
      nodes.mpi, checked, nodes.nodes, nodes.ranksPerNode, job.peers()[static_cast<std::size_t>(job.rank())].hostName,
      seconds * 1e6, static_cast<double>(timedBytes) / seconds / 1e9));
  return 0;
}

// Rank 1 looks for the library where it is not: every rank must refuse, naming rank 1.
int noLibrary(Params params, const testing::RankReport& report) {
  const std::unique_ptr<Bootstrap> job = connect(params);
  if (job->rank() == 1) params.set("PEERLINK_MPI_LIBRARY", "/nonexistent/libpeerlink_mpi.so");
  std::uint8_t matched = 0;
  try {
    net::MpiStartup mpi(*job, params, "peerlink coll across 2 nodes x 2 ranks");
    report("error: MpiStartup accepted a rank without libpeerlink_mpi.so");
  } catch (const Error& error) {
    report(std::string("refused: ") + errorCodeName(error.code()) + ": " + error.what());
    const std::string text = error.what();
    matched = error.code() == ErrorCode::InvalidUsage &&
                      text.find("peerlink coll across 2 nodes x 2 ranks: rank 1 (host ") != std::string::npos &&
                      text.find("cannot use MPI") != std::string::npos &&
                      text.find("/nonexistent/libpeerlink_mpi.so") != std::string::npos
                  ? 1
                  : 0;
  }
  bool all = true;
  for (const std::uint8_t one : job->allGather(&matched, sizeof matched)) all = all && one == 1;
  if (job->rank() == 0) std::printf("no-library: %s\n", all ? "every rank refused it" : "FAILED");
  return all ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s reference|no-library DIR\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  testing::RankReport report;
  report.directory = argv[2];
  try {
    report.rank = detectLaunchFromEnvironment().rank;
    const Params params = Params::fromEnvironment();
    if (mode == "reference") return reference(params, report);
    if (mode == "no-library") return noLibrary(params, report);
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  } catch (const std::exception& error) {
    report(std::string("error ") + error.what());
    return 1;
  }
}
