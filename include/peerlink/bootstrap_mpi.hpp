// MpiBootstrap: the Bootstrap over an MPI communicator, for applications that run under MPI already.
//
// Header-only and compiled by the application's own MPI (include <mpi.h> first, or let this header do it):
// libpeerlink never links an MPI library, so one peerlink build serves Open MPI, MPICH and their ABIs.
//
//   MPI_Init(&argc, &argv);
//   peerlink::MpiBootstrap bootstrap(MPI_COMM_WORLD);      // collective: duplicates the communicator
//   auto all = bootstrap.allGather(&mine, sizeof mine);
//   ... destroy it before MPI_Finalize ...
//
// Every call keeps its deadline (PEERLINK_BOOTSTRAP_TIMEOUT_MS) by polling non-blocking MPI operations. MPI
// cannot cancel a collective, so after a timed-out allGather or barrier this bootstrap refuses further calls.
// MPI does not tell which rank is missing from a collective; the messages say so. There is no watchdog: an
// abort by a peer is seen (and onPeerLost called) during this rank's next call, and a dead process is for
// the MPI runtime to report (most abort the whole job).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "peerlink/bootstrap.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

class MpiBootstrap final : public Bootstrap {
 public:
  /// Duplicates `comm` (collective over it) and gathers every rank's identity. Error(InvalidUsage) when MPI is
  /// not initialized; Error(Timeout) when the others do not join within the deadline.
  explicit MpiBootstrap(MPI_Comm comm,
                        const BootstrapOptions& options = BootstrapOptions::fromParams(Params::fromEnvironment()))
      : deadline_(options.deadline) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
      throw Error(ErrorCode::InvalidUsage, "MpiBootstrap: MPI is not initialized (call MPI_Init first)");
    check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    int* tagUpperBound = nullptr;
    int found = 0;
    check(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tagUpperBound, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
    maxUserTag_ = (found && tagUpperBound != nullptr ? *tagUpperBound : 32767) - kFirstUserTag;
    gatherIdentities(options);
  }

  /// Frees the duplicated communicator; call before MPI_Finalize.
  ~MpiBootstrap() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    // Give the abort notices a moment to leave, then let MPI finish them on its own.
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    for (MPI_Request& request : abortRequests_) {
      int done = 0;
      while (request != MPI_REQUEST_NULL && !done && std::chrono::steady_clock::now() < end) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      }
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
    MPI_Comm_free(&comm_);
  }
  MpiBootstrap(const MpiBootstrap&) = delete;
  MpiBootstrap& operator=(const MpiBootstrap&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<PeerIdentity>& peers() const override { return peers_; }
  void onPeerLost(PeerLostCallback callback) override {
    callback_ = std::move(callback);
    for (int peer = 0; peer < size_; ++peer) {
      if (!lost_[static_cast<std::size_t>(peer)].empty() && callback_)
        callback_(peer, lost_[static_cast<std::size_t>(peer)]);
    }
  }

  std::vector<std::uint8_t> allGather(const void* mine, std::size_t bytes) override {
    checkBootstrapData("allGather", mine, bytes);
    const std::string operation = "bootstrap allGather on rank " + std::to_string(rank_) + " (MPI)";
    usable(operation);
    failIfAnyLost(operation);
    // The sizes first, so that a rank giving another size is named instead of corrupting the gather.
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_));
    const std::uint64_t mySize = bytes;
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgather(&mySize, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_, &request), "MPI_Iallgather");
    await(request, operation, "allGather");
    for (int peer = 0; peer < size_; ++peer) {
      if (sizes[static_cast<std::size_t>(peer)] != bytes) {
        throw Error(ErrorCode::InvalidUsage, operation + ": this rank gave " + std::to_string(bytes) + " bytes, " +
                                                 describePeer(peers_[static_cast<std::size_t>(peer)]) + " gave " +
                                                 std::to_string(sizes[static_cast<std::size_t>(peer)]) +
                                                 ": every rank must give the same size");
      }
    }
    std::vector<std::uint8_t> all(bytes * static_cast<std::size_t>(size_));
    if (bytes == 0) return all;
    check(MPI_Iallgather(mine, static_cast<int>(bytes), MPI_BYTE, all.data(), static_cast<int>(bytes), MPI_BYTE, comm_,
                         &request),
          "MPI_Iallgather");
    await(request, operation, "allGather");
    return all;
  }

  void send(int peer, int tag, const void* data, std::size_t bytes) override {
    checkBootstrapPeer("send", rank_, size_, peer, tag);
    checkBootstrapData("send", data, bytes);
    checkTag(tag);
    const std::string operation = "bootstrap send to rank " + std::to_string(peer) + " (tag " + std::to_string(tag) +
                                  ") on rank " + std::to_string(rank_) + " (MPI)";
    usable(operation);
    failIfLost(peer, operation);
    // A copy MPI may read for as long as it needs: a send that times out is left to MPI, its copy with it.
    auto copy = std::make_unique<std::vector<std::uint8_t>>(static_cast<const std::uint8_t*>(data),
                                                            static_cast<const std::uint8_t*>(data) + bytes);
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Isend(copy->data(), static_cast<int>(bytes), MPI_BYTE, peer, tag + kFirstUserTag, comm_, &request),
          "MPI_Isend");
    try {
      await(request, operation, nullptr);
    } catch (const Error&) {
      (void)copy.release();
      throw;
    }
  }

  std::vector<std::uint8_t> recv(int peer, int tag) override {
    checkBootstrapPeer("recv", rank_, size_, peer, tag);
    checkTag(tag);
    const std::string operation = "bootstrap recv from rank " + std::to_string(peer) + " (tag " + std::to_string(tag) +
                                  ") on rank " + std::to_string(rank_) + " (MPI)";
    usable(operation);
    const auto end = std::chrono::steady_clock::now() + deadline_;
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      check(MPI_Iprobe(peer, tag + kFirstUserTag, comm_, &arrived, &status), "MPI_Iprobe");
      if (arrived) {
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        std::vector<std::uint8_t> message(static_cast<std::size_t>(count));
        check(MPI_Recv(message.data(), count, MPI_BYTE, peer, tag + kFirstUserTag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
        return message;
      }
      pollAborts(std::string());  // records aborts; only this peer's fails this call
      failIfLost(peer, operation);
      if (std::chrono::steady_clock::now() >= end) {
        throw Error(ErrorCode::Timeout, operation + " timed out after " + std::to_string(deadline_.count()) +
                                            " ms: " + describePeer(peers_[static_cast<std::size_t>(peer)]) +
                                            " sent nothing under that tag");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void barrier() override {
    const std::string operation = "bootstrap barrier on rank " + std::to_string(rank_) + " (MPI)";
    usable(operation);
    failIfAnyLost(operation);
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    await(request, operation, "barrier");
  }

  void abort(const std::string& reason) noexcept override {
    if (!aborted_.empty()) return;
    aborted_ = reason.empty() ? "no reason given" : reason;
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      MPI_Request request = MPI_REQUEST_NULL;
      if (MPI_Isend(aborted_.data(), static_cast<int>(aborted_.size()), MPI_CHAR, peer, kAbortTag, comm_, &request) ==
          MPI_SUCCESS) {
        abortRequests_.push_back(request);
      }
    }
  }

 private:
  static constexpr int kAbortTag = 0;
  static constexpr int kFirstUserTag = 1;

  // What gatherIdentities exchanges: fixed size, so one MPI_Iallgather of bytes carries it.
  struct WireIdentity {
    std::uint64_t hostId;
    std::int32_t pid;
    std::uint32_t uid;
    char hostName[64];
  };

  void gatherIdentities(const BootstrapOptions& options) {
    const PeerIdentity me = localPeerIdentity(rank_, options);
    WireIdentity mine{};
    mine.hostId = me.hostId;
    mine.pid = me.pid;
    mine.uid = me.uid;
    std::strncpy(mine.hostName, me.hostName.c_str(), sizeof(mine.hostName) - 1);
    std::vector<WireIdentity> all(static_cast<std::size_t>(size_));
    MPI_Request request = MPI_REQUEST_NULL;
    const int bytes = static_cast<int>(sizeof(mine));
    check(MPI_Iallgather(&mine, bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, comm_, &request), "MPI_Iallgather");
    peers_.resize(static_cast<std::size_t>(size_));
    lost_.assign(static_cast<std::size_t>(size_), std::string());
    await(request, "MpiBootstrap on rank " + std::to_string(rank_), "the MpiBootstrap constructor");
    for (int peer = 0; peer < size_; ++peer) {
      const WireIdentity& wire = all[static_cast<std::size_t>(peer)];
      PeerIdentity& identity = peers_[static_cast<std::size_t>(peer)];
      identity.rank = peer;
      identity.hostId = wire.hostId;
      identity.pid = wire.pid;
      identity.uid = wire.uid;
      identity.hostName.assign(wire.hostName, strnlen(wire.hostName, sizeof(wire.hostName)));
    }
  }

  void check(int result, const char* call) const {
    if (result == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(result, text, &length);
    throw Error(ErrorCode::RemoteError, std::string("MpiBootstrap: ") + call + " failed: " + text);
  }

  void checkTag(int tag) const {
    if (tag > maxUserTag_) {
      throw Error(ErrorCode::InvalidUsage, "bootstrap tag " + std::to_string(tag) + " is above this MPI's limit of " +
                                               std::to_string(maxUserTag_) + " (MPI_TAG_UB)");
    }
  }

  void usable(const std::string& operation) const {
    if (!aborted_.empty()) throw Error(ErrorCode::RemoteError, operation + ": this rank aborted (" + aborted_ + ")");
    if (broken_) {
      throw Error(ErrorCode::RemoteError, operation +
                                              ": an earlier collective of this bootstrap timed out and MPI "
                                              "cannot cancel it; make a new MpiBootstrap");
    }
  }

  // A collective needs every rank: one that aborted makes it fail at once.
  void failIfAnyLost(const std::string& operation) const {
    for (int peer = 0; peer < size_; ++peer) failIfLost(peer, operation);
  }

  void failIfLost(int peer, const std::string& operation) const {
    const std::string& why = lost_[static_cast<std::size_t>(peer)];
    if (!why.empty()) throw Error(ErrorCode::RemoteError, operation + ": " + why);
  }

  // Receives every abort notice that arrived; throws for the first (a collective needs every rank).
  void pollAborts(const std::string& operation) {
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      check(MPI_Iprobe(MPI_ANY_SOURCE, kAbortTag, comm_, &arrived, &status), "MPI_Iprobe");
      if (!arrived) return;
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string reason(static_cast<std::size_t>(count), '\0');
      check(MPI_Recv(reason.data(), count, MPI_CHAR, status.MPI_SOURCE, kAbortTag, comm_, MPI_STATUS_IGNORE),
            "MPI_Recv");
      const int peer = status.MPI_SOURCE;
      std::string& why = lost_[static_cast<std::size_t>(peer)];
      if (why.empty()) {
        why = describePeer(peers_[static_cast<std::size_t>(peer)]) + " aborted: " + reason;
        if (callback_) callback_(peer, why);
      }
      if (operation.empty()) continue;
      throw Error(ErrorCode::RemoteError, operation + ": " + why);
    }
  }

  // A collective still in flight that will not complete: MPI forbids freeing or cancelling it, so it is kept
  // (never waited for again) and this bootstrap refuses further calls.
  void abandon(MPI_Request& request) {
    broken_ = true;
    abandoned_.push_back(request);
    request = MPI_REQUEST_NULL;
  }

  // Polls `request` until it completes, a peer aborts, or the deadline passes. `collective` names a
  // collective call (nullptr for a send), whose timeout leaves this bootstrap unusable.
  void await(MPI_Request& request, const std::string& operation, const char* collective) {
    const auto end = std::chrono::steady_clock::now() + deadline_;
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      try {
        pollAborts(collective != nullptr ? operation : std::string());
      } catch (const Error&) {
        abandon(request);
        throw;
      }
      if (std::chrono::steady_clock::now() >= end) {
        if (collective != nullptr) {
          abandon(request);
          throw Error(ErrorCode::Timeout, operation + " timed out after " + std::to_string(deadline_.count()) +
                                              " ms: some rank has not called " + collective +
                                              " (MPI does not say which)");
        }
        MPI_Request_free(&request);  // MPI completes it on its own; send() leaves it its copy
        throw Error(ErrorCode::Timeout, operation + " timed out after " + std::to_string(deadline_.count()) +
                                            " ms: the receiver is not receiving");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  std::chrono::milliseconds deadline_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  int maxUserTag_ = 0;
  std::vector<PeerIdentity> peers_;
  std::vector<std::string> lost_;  ///< why a peer is gone, empty while it is not
  PeerLostCallback callback_;
  std::string aborted_;
  std::vector<MPI_Request> abortRequests_;
  std::vector<MPI_Request> abandoned_;
  bool broken_ = false;
};

}  // namespace peerlink
