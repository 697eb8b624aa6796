#include "bootstrap/socket_bootstrap.hpp"

#include <unistd.h>

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "bootstrap/error_context.hpp"
#include "bootstrap/hello.hpp"
#include "bootstrap/identity.hpp"

namespace peerlink::bootstrap {
namespace {

using std::chrono::milliseconds;

// Goodbyes and aborts go out even when a peer is slow; the kernel's buffer takes them at once unless it is full.
constexpr milliseconds kFarewellTimeout{500};

class SocketBootstrap final : public Bootstrap {
 public:
  SocketBootstrap(int rank, std::vector<PeerIdentity> peers, std::unique_ptr<PeerLinks> links, milliseconds deadline)
      : rank_(rank), peers_(std::move(peers)), links_(std::move(links)), deadline_(deadline), owner_(::getpid()) {
    for (int peer = 0; peer < size(); ++peer) {
      if (peer != rank_) others_.push_back(peer);
    }
  }

  ~SocketBootstrap() override {
    // A forked child must not speak for its parent: only the process that built the bootstrap says goodbye.
    if (::getpid() != owner_ || !links_->selfAborted().empty()) return;
    farewell(FrameType::Bye, {});
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(peers_.size()); }
  const std::vector<PeerIdentity>& peers() const override { return peers_; }
  void onPeerLost(PeerLostCallback callback) override { links_->onPeerLost(std::move(callback)); }

  std::vector<std::uint8_t> allGather(const void* mine, std::size_t bytes) override {
    checkBootstrapData("allGather", mine, bytes);
    const std::string operation = fmt::format("bootstrap allGather on rank {}", rank_);
    const std::vector<std::vector<std::uint8_t>> parts = exchange(kAllGatherTag, mine, bytes, operation, "allGather");
    std::vector<std::uint8_t> all(bytes * peers_.size());
    for (std::size_t i = 0; i < others_.size(); ++i) {
      const int peer = others_[i];
      if (parts[i].size() != bytes) {
        throw Error(
            ErrorCode::InvalidUsage,
            fmt::format("{}: this rank gave {} bytes, {} gave {}: every rank must give the same size", operation, bytes,
                        describePeer(peers_[static_cast<std::size_t>(peer)]), parts[i].size()));
      }
      if (bytes > 0) std::memcpy(all.data() + static_cast<std::size_t>(peer) * bytes, parts[i].data(), bytes);
    }
    if (bytes > 0) std::memcpy(all.data() + static_cast<std::size_t>(rank_) * bytes, mine, bytes);
    return all;
  }

  void barrier() override {
    exchange(kBarrierTag, nullptr, 0, fmt::format("bootstrap barrier on rank {}", rank_), "barrier");
  }

  void send(int peer, int tag, const void* data, std::size_t bytes) override {
    checkBootstrapPeer("send", rank_, size(), peer, tag);
    checkBootstrapData("send", data, bytes);
    checkNotAborted();
    if (peer == rank_) {
      links_->deliverToSelf(tag, data, bytes);
      return;
    }
    prefixErrors(fmt::format("bootstrap send to rank {} (tag {}) on rank {}: ", peer, tag, rank_),
                 [&] { links_->send(peer, FrameType::Data, tag, data, bytes, deadlineAfter(deadline_)); });
  }

  std::vector<std::uint8_t> recv(int peer, int tag) override {
    checkBootstrapPeer("recv", rank_, size(), peer, tag);
    const std::string operation = fmt::format("bootstrap recv from rank {} (tag {}) on rank {}", peer, tag, rank_);
    auto messages = links_->receiveFromEach({peer}, tag, deadlineAfter(deadline_), operation, [&](const auto&) {
      return fmt::format("{} timed out after {}: {} sent nothing under that tag", operation, formatSeconds(deadline_),
                         describePeer(peers_[static_cast<std::size_t>(peer)]));
    });
    return std::move(messages.front());
  }

  void abort(const std::string& reason) noexcept override {
    try {
      if (!links_->selfAborted().empty()) return;
      links_->markSelfAborted(reason);
      farewell(FrameType::Abort, encodeFailure({ErrorCode::RemoteError, reason}));
    } catch (...) {
    }
  }

 private:
  void checkNotAborted() const {
    const std::string reason = links_->selfAborted();
    if (!reason.empty()) {
      throw Error(ErrorCode::RemoteError, fmt::format("bootstrap rank {} aborted ({})", rank_, reason));
    }
  }

  // Sends to every peer under `tag`, then waits for every peer's message under it.
  std::vector<std::vector<std::uint8_t>> exchange(std::int32_t tag, const void* data, std::size_t bytes,
                                                  const std::string& operation, const char* call) {
    checkNotAborted();
    const auto deadline = deadlineAfter(deadline_);
    prefixErrors(operation + ": ", [&] {
      for (const int peer : others_) links_->send(peer, FrameType::Data, tag, data, bytes, deadline);
    });
    return links_->receiveFromEach(others_, tag, deadline, operation, [&](const std::vector<int>& missing) {
      return fmt::format("{} timed out after {}: {} of {} sent nothing (they have not called {}, or are stuck)",
                         operation, formatSeconds(deadline_), describeRanks(missing), size(), call);
    });
  }

  // Best effort to every peer that has not left, within one short deadline for all.
  void farewell(FrameType type, const std::vector<std::uint8_t>& payload) noexcept {
    const auto deadline = deadlineAfter(kFarewellTimeout);
    for (const int peer : others_) links_->sendFarewell(peer, type, payload, deadline);
  }

  const int rank_;
  const std::vector<PeerIdentity> peers_;
  std::unique_ptr<PeerLinks> links_;
  const milliseconds deadline_;
  const pid_t owner_;
  std::vector<int> others_;
};

}  // namespace

std::unique_ptr<Bootstrap> makeSocketBootstrap(int rank, std::vector<PeerIdentity> peers,
                                               std::unique_ptr<PeerLinks> links, milliseconds deadline) {
  return std::make_unique<SocketBootstrap>(rank, std::move(peers), std::move(links), deadline);
}

}  // namespace peerlink::bootstrap
