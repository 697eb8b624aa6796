// threadBootstraps: the world's ranks inside one process, joined by socket pairs instead of TCP, served by the
// same peer links and calls as between processes (so both behave alike: deadlines, abort, goodbye).
#include <sys/socket.h>

#include <fmt/format.h>

#include "bootstrap/peer_links.hpp"
#include "bootstrap/socket_bootstrap.hpp"

namespace peerlink {

std::vector<std::unique_ptr<Bootstrap>> threadBootstraps(int nranks, const BootstrapOptions& options) {
  if (nranks < 1 || nranks > kMaxBootstrapRanks) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("threadBootstraps: a world of {} ranks (1 to {} allowed)", nranks, kMaxBootstrapRanks));
  }
  if (options.deadline <= std::chrono::milliseconds::zero()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("threadBootstraps: the deadline must be positive ({} ms given)", options.deadline.count()));
  }
  const auto count = static_cast<std::size_t>(nranks);
  std::vector<PeerIdentity> peers;
  for (int rank = 0; rank < nranks; ++rank) peers.push_back(localPeerIdentity(rank, options));
  std::vector<std::vector<bootstrap::PeerSocket>> sockets(count);
  for (auto& row : sockets) row.resize(count);
  for (std::size_t a = 0; a < count; ++a) {
    for (std::size_t b = a + 1; b < count; ++b) {
      int pair[2] = {-1, -1};
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
        throwSystemError(fmt::format("socketpair (threadBootstraps, ranks {} and {})", a, b), errno);
      }
      sockets[a][b].fd.reset(pair[0]);
      sockets[b][a].fd.reset(pair[1]);
    }
  }
  std::vector<std::unique_ptr<Bootstrap>> world;
  for (int rank = 0; rank < nranks; ++rank) {
    auto links =
        std::make_unique<bootstrap::PeerLinks>(rank, peers, std::move(sockets[static_cast<std::size_t>(rank)]));
    world.push_back(bootstrap::makeSocketBootstrap(rank, peers, std::move(links), options.deadline));
  }
  return world;
}

}  // namespace peerlink
