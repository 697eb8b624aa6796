// Who serves a world whose unique id says its root may forward (format 2, made by the NCCL API where the launcher
// does not say whether the job spans machines): decided once, by the rendezvous root, from every rank's hello, and
// sent to every rank in the root's answer -- the world table (peerlink serves it), a Forward frame carrying the
// real NCCL's id, which the root asks the real NCCL for only then (the real NCCL serves it), or a Failure where some
// rank could not follow it there -- so that every rank does the same and none decides alone.
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

/// Who serves a world of a format-2 id.
enum class WorldServer {
  Peerlink,  ///< every rank on one host: the world table follows
  RealNccl,  ///< ranks on several hosts, each able to follow the root there: a Forward frame with the real NCCL's id
  Refused,   ///< ranks on several hosts, some unable to follow (their hellos say why): every rank fails
};

/// The root's decision for a world of a format-2 id.
struct ServerVerdict {
  WorldServer server = WorldServer::Peerlink;
  /// One line: the hosts and their ranks; when Refused, also the ranks that cannot follow and why.
  std::string reason;
};

/// Pure, over every rank's hello. Peerlink when every rank has one host id (hostname + boot id, or
/// PEERLINK_HOSTID), whatever the ranks could follow; else the real NCCL (across machines peerlink's communicator
/// runs over MPI, which an application of NCCL's API has not started) -- but only where every rank can follow the
/// root there (Hello::forwarding Able): a rank that cannot would fail its creation alone, leaving the others
/// waiting in the real NCCL's, which has no deadline. Refused then, naming up to four such ranks and why.
ServerVerdict chooseWorldServer(const std::vector<Hello>& world);
/// Why a rank whose hello says `forwarding` cannot follow the root to the real NCCL: one line ("(it can)" for Able).
const char* whyUnableToForward(ForwardAbility forwarding);

/// What every rank hears when the root at `root` refuses the world (`verdict` is Refused): InvalidUsage -- the job's
/// processes disagree in what they may use, as they would in world size or version -- and the verdict's reason.
Failure refusedWorldFailure(const std::string& root, const ServerVerdict& verdict);

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
