// Who serves a world whose unique id says its root may forward (format 2, made by the NCCL API where the launcher
// does not say whether the job spans machines): decided once, by the rendezvous root, from every rank's hello, and
// sent to every rank in the root's answer -- the world table (peerlink serves it) or a Forward frame carrying the
// real NCCL's id, which the root asks the real NCCL for only then (the real NCCL serves it) -- so that every rank
// does the same and none decides alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "bootstrap/hello.hpp"
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

/// The most bytes of the real NCCL's id a Forward frame carries: NCCL's ncclUniqueId is 128 bytes.
inline constexpr std::size_t kMaxForwardIdBytes = 128;

/// A Forward frame's contents: the verdict's reason and the real NCCL's id for the world.
struct Forward {
  std::string reason;
  /// The real NCCL's id up to its last non-zero byte (1 to kMaxForwardIdBytes; the rest of its 128 are zeros).
  std::vector<std::uint8_t> ncclId;
};

/// Layout: the id's length n u8, its n bytes, then the reason (cut to kMaxFailureText bytes). `ncclId`'s zeros
/// after its last non-zero byte are left out. Error(InvalidUsage) for an id that is empty or all zeros, or whose
/// non-zero bytes run past kMaxForwardIdBytes: the root has no id to give.
std::vector<std::uint8_t> encodeForward(const std::string& reason, const std::vector<std::uint8_t>& ncclId);
/// Strict: 1 <= n <= kMaxForwardIdBytes, the id's last byte not zero (one encoding per id), the reason at most
/// kMaxFailureText bytes (control characters become spaces); Error(InvalidInput).
Forward decodeForward(const std::uint8_t* data, std::size_t size);

/// What every rank hears when the root sent the world to the real NCCL (`reason`) but could not get its id from
/// the ForwardIdSource (`why`): the code of `why` when it is a peerlink::Error, else Internal.
Failure forwardIdFailure(const std::string& root, const std::string& reason, const std::exception& why);

/// What connectBootstrap throws (code Unsupported) on every rank of a format-2 id whose root sent the world to the
/// real NCCL; nothing of the rendezvous is left open or waiting. The NCCL API catches it and creates the rank with
/// the real NCCL and the id the root sent; to any other caller it says why the world cannot be peerlink's.
class ForwardedWorld : public Error {
 public:
  ForwardedWorld(const std::string& root, Forward forward);
  /// The root's reason, as chooseWorldServer gave it.
  const std::string& reason() const noexcept { return forward_.reason; }
  /// The real NCCL's id for the world, up to its last non-zero byte.
  const std::vector<std::uint8_t>& ncclId() const noexcept { return forward_.ncclId; }

 private:
  Forward forward_;
};

}  // namespace peerlink::bootstrap
