// Who serves a world whose unique id carries the real NCCL's id beside peerlink's rendezvous (format 2, made by the
// NCCL API where the launcher does not say whether the job spans machines): decided once, by the rendezvous root,
// from every rank's hello, and sent to every rank in the root's answer -- the world table (peerlink serves it) or a
// Forward frame (the real NCCL does) -- so that every rank does the same and none decides alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "peerlink/bootstrap.hpp"
#include "peerlink/error.hpp"

namespace peerlink::bootstrap {

/// The root's decision for a world of a format-2 id.
struct ServerVerdict {
  bool forward = false;  ///< true: every rank creates its rank with the real NCCL; false: peerlink serves the world
  std::string reason;    ///< one line: the hosts and their ranks
};

/// Pure. Peerlink when every rank has one host id (hostname + boot id, or PEERLINK_HOSTID), else the real NCCL:
/// across machines peerlink's communicator runs over MPI, which an application of NCCL's API has not started.
ServerVerdict chooseWorldServer(const std::vector<PeerIdentity>& ranks);

/// A Forward frame's payload: the verdict's reason (cut to kMaxFailureText bytes).
std::vector<std::uint8_t> encodeForward(const std::string& reason);
/// Strict on the length (at most kMaxFailureText bytes); control characters become spaces; Error(InvalidInput).
std::string decodeForward(const std::uint8_t* data, std::size_t size);

/// What connectBootstrap throws (code Unsupported) on every rank of a format-2 id whose root sent the world to the
/// real NCCL; nothing of the rendezvous is left open or waiting. The NCCL API catches it and creates the rank with
/// the real NCCL and the id's NCCL part; to any other caller it says why the world cannot be peerlink's.
class ForwardedWorld : public Error {
 public:
  ForwardedWorld(const std::string& root, std::string reason);
  /// The root's reason, as chooseWorldServer gave it.
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

}  // namespace peerlink::bootstrap
