// The connections of one rank to its peers after the rendezvous, and the watchdog thread that serves them:
// it reads every connection as data arrives (so a sender never waits on a busy receiver), files messages by
// (peer, tag), and notices a peer's end: a goodbye (clean), an abort, a connection closed without a goodbye,
// or, for a peer whose pids this process shares (same boot, same pid namespace), its pidfd reporting the exit.
// Where pidfd_open is missing (Linux < 5.3) the connection's end alone tells.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bootstrap/frame.hpp"
#include "core/file_descriptor.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::bootstrap {

/// One peer's connection as the rendezvous left it.
struct PeerSocket {
  FileDescriptor fd;
  std::unique_ptr<FrameReader> reader;  ///< what was read already (the hello)
  bool watchPid = false;                ///< its pid names a process this one sees
};

class PeerLinks {
 public:
  /// `sockets` indexed by rank (this rank's entry empty); `peers` every rank's identity. Starts the watchdog.
  PeerLinks(int self, std::vector<PeerIdentity> peers, std::vector<PeerSocket> sockets);
  /// Stops and joins the watchdog, closes every connection. Sends nothing: say goodbye first.
  ~PeerLinks();
  PeerLinks(const PeerLinks&) = delete;
  PeerLinks& operator=(const PeerLinks&) = delete;

  /// Writes one frame to `peer` (not this rank). Error(RemoteError) naming the peer when it is gone.
  void send(int peer, FrameType type, std::int32_t tag, const void* data, std::size_t size,
            DeadlineClock::time_point deadline);
  /// Best effort, never throws: a goodbye or an abort notice to `peer` unless it has said goodbye itself (a
  /// peer lost by abort still runs and should hear it; a dead one fails the write at once).
  void sendFarewell(int peer, FrameType type, const std::vector<std::uint8_t>& payload,
                    DeadlineClock::time_point deadline) noexcept;
  /// Files a message from this rank to itself.
  void deliverToSelf(std::int32_t tag, const void* data, std::size_t size);

  /// The next message of each of `from` under `tag`, in the order of `from`. Error(RemoteError) naming a peer
  /// that is gone with nothing left to read (prefixed by `operation`), or that this rank aborted;
  /// Error(Timeout) with `timeoutMessage(missing ranks)` at the deadline.
  std::vector<std::vector<std::uint8_t>> receiveFromEach(
      const std::vector<int>& from, std::int32_t tag, DeadlineClock::time_point deadline, const std::string& operation,
      const std::function<std::string(const std::vector<int>& missing)>& timeoutMessage);

  /// Marks this rank aborted (later receives throw `reason`) and wakes every waiting call.
  void markSelfAborted(const std::string& reason);
  /// Why this rank aborted; empty when it did not.
  std::string selfAborted() const;

  /// See Bootstrap::onPeerLost.
  void onPeerLost(PeerLostCallback callback);

 private:
  enum class State { Live, Departed, Lost };
  struct Link {
    FileDescriptor fd;  // closed only by the destructor: senders may hold its number
    std::unique_ptr<FrameReader> reader;
    FileDescriptor pidfd;
    bool reading = true;  // false after EOF or a protocol error
    State state = State::Live;
    std::string why;
    std::timed_mutex sendMutex;  ///< one frame at a time; a farewell waits for it no longer than its own deadline
  };

  void watch() noexcept;
  // Reads what `peer` sent; may mark it gone. Called by the watchdog only.
  void readPeer(int peer, std::vector<std::pair<int, std::string>>& lost);
  void markGone(int peer, State state, const std::string& why, std::vector<std::pair<int, std::string>>& lost);
  void report(const std::vector<std::pair<int, std::string>>& lost);

  const int self_;
  const std::vector<PeerIdentity> peers_;
  std::vector<std::unique_ptr<Link>> links_;
  FileDescriptor wake_;

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::pair<int, std::int32_t>, std::deque<std::vector<std::uint8_t>>> mailboxes_;
  std::string selfAborted_;
  PeerLostCallback callback_;
  std::mutex callbackMutex_;  // serializes callbacks: one at a time, never two for one peer at once

  pid_t owner_;
  std::thread thread_;
};

}  // namespace peerlink::bootstrap
