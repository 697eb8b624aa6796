// loopbackWorld (point_to_point.hpp): mailboxes per (sender, receiver, tag) behind one mutex.
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

#include "net/point_to_point.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

struct PendingRecv {
  int to = 0;
  int from = 0;
  int tag = 0;
  void* data = nullptr;
  std::size_t bytes = 0;
};

struct Shared {
  std::mutex mutex;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<std::byte>>> mail;  // (from, to, tag) -> messages
  std::map<PointToPoint::Request, PendingRecv> recvs;                            // by request, per receiver
  PointToPoint::Request next = 1;
};

class Loopback final : public PointToPoint {
 public:
  Loopback(std::shared_ptr<Shared> shared, int rank, int size) : shared_(std::move(shared)), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int maxTag() const override { return 32767; }

  Request isend(int peer, int tag, const void* data, std::size_t bytes) override {
    checkPeer(peer);
    const auto* begin = static_cast<const std::byte*>(data);
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->mail[{rank_, peer, tag}].emplace_back(begin, begin + bytes);
    return 0;  // complete at once
  }

  Request irecv(int peer, int tag, void* data, std::size_t bytes) override {
    checkPeer(peer);
    std::lock_guard<std::mutex> lock(shared_->mutex);
    const Request request = shared_->next++;
    shared_->recvs[request] = {rank_, peer, tag, data, bytes};
    return request;
  }

  bool test(Request request, std::size_t* received) override {
    if (request == 0) return true;
    std::lock_guard<std::mutex> lock(shared_->mutex);
    const auto pending = shared_->recvs.find(request);
    if (pending == shared_->recvs.end()) throw Error(ErrorCode::Internal, "loopback: unknown request");
    // Receives of one (sender, tag) take messages in the order they were posted.
    for (const auto& [other, recv] : shared_->recvs) {
      if (other < request && recv.to == rank_ && recv.from == pending->second.from && recv.tag == pending->second.tag) {
        return false;
      }
    }
    auto& box = shared_->mail[{pending->second.from, rank_, pending->second.tag}];
    if (box.empty()) return false;
    const std::vector<std::byte> message = std::move(box.front());
    box.pop_front();
    const PendingRecv recv = pending->second;
    shared_->recvs.erase(pending);
    if (message.size() > recv.bytes) {
      throw Error(ErrorCode::RemoteError, "loopback: a message of " + std::to_string(message.size()) +
                                              " bytes for a receive of " + std::to_string(recv.bytes));
    }
    if (!message.empty()) std::memcpy(recv.data, message.data(), message.size());
    if (received != nullptr) *received = message.size();
    return true;
  }

  void abandon(Request request) noexcept override {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->recvs.erase(request);
  }

 private:
  void checkPeer(int peer) const {
    if (peer < 0 || peer >= size_) throw Error(ErrorCode::InvalidUsage, "loopback: no rank " + std::to_string(peer));
  }

  std::shared_ptr<Shared> shared_;
  int rank_;
  int size_;
};

}  // namespace

std::vector<std::unique_ptr<PointToPoint>> loopbackWorld(int nranks) {
  auto shared = std::make_shared<Shared>();
  std::vector<std::unique_ptr<PointToPoint>> world;
  for (int r = 0; r < nranks; ++r) world.push_back(std::make_unique<Loopback>(shared, r, nranks));
  return world;
}

}  // namespace peerlink::net
