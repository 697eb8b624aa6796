// The Bootstrap between processes, once the rendezvous (rendezvous.cc) connected every pair of ranks:
// all-gather, barrier, send/recv by tag and abort over the peer links, each call with its deadline.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "bootstrap/peer_links.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::bootstrap {

/// A Bootstrap over `links` (which this takes), rank `rank` of peers.size(), every call waiting `deadline`.
std::unique_ptr<Bootstrap> makeSocketBootstrap(int rank, std::vector<PeerIdentity> peers,
                                               std::unique_ptr<PeerLinks> links, std::chrono::milliseconds deadline);

}  // namespace peerlink::bootstrap
