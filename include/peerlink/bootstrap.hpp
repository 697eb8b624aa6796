// The bootstrap: how the processes of one communicator find each other, exchange small messages and notice
// each other's death. CUDA-free. docs/bootstrap.md is the user's guide (ids, stores, launchers, deadlines,
// the trust boundary).
//
//   UniqueId id = makeUniqueId();          // on one process (any): starts the rendezvous root there
//   ... pass id to every rank (uniqueIdToString / a store / MPI_Bcast) ...
//   auto bootstrap = connectBootstrap(id, rank, nranks);
//   std::vector<std::uint8_t> all = bootstrap->allGather(&mine, sizeof mine);
//
// Every call has a deadline (PEERLINK_BOOTSTRAP_TIMEOUT_MS) and throws Error(Timeout) naming the ranks that
// did not answer, Error(RemoteError) naming a peer that left or aborted (rank, host, pid), and
// Error(InvalidUsage) naming both ranks when they disagree (world size, duplicated rank, version, sizes).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/params.hpp"

namespace peerlink {

/// Bytes of a UniqueId: NCCL's ncclUniqueId size, so one can travel where the other does.
inline constexpr std::size_t kUniqueIdBytes = 128;
/// The largest world a bootstrap connects (every pair of ranks holds a TCP connection).
inline constexpr int kMaxBootstrapRanks = 1024;
/// The largest message (send, or one rank's part of an all-gather).
inline constexpr std::size_t kMaxBootstrapMessageBytes = std::size_t{64} << 20;

/// Opaque, passed by value: magic, format version, a random 128-bit token (getrandom) and the rendezvous
/// root's address (IPv4 or IPv6 and port). Printable with uniqueIdToString for environment variables and
/// key-value stores. The token is the only secret: whoever holds the id may join the world.
struct UniqueId {
  unsigned char bytes[kUniqueIdBytes] = {};
};

/// Binds the root's listening socket now (so its port is reserved) and starts, in this process, a thread
/// that serves one rendezvous of the world and then exits: when every rank has connected and the world is
/// built, at a failure it has reported to every rank, or at its deadline (PEERLINK_BOOTSTRAP_TIMEOUT_MS after
/// the first rank arrived, or after this call when none arrives). Any process may call it (it need not be a
/// rank). Address: PEERLINK_BOOTSTRAP_ADDR (host, host:port, [v6]:port) or the host's first non-loopback
/// interface that is up (docker and virbr bridges skipped), loopback when there is none.
UniqueId makeUniqueId(const Params& params = Params::fromEnvironment());

/// The id as 256 lowercase hex digits.
std::string uniqueIdToString(const UniqueId& id);
/// The id back from uniqueIdToString's text (surrounding white space allowed); Error(InvalidUsage) naming what
/// is wrong: length, a non-hex character, or bytes that are not a peerlink unique id.
UniqueId uniqueIdFromString(const std::string& text);
/// "10.0.0.1:29500" or "[fd00::1]:29500": the root address an id carries; Error(InvalidUsage) for a malformed id.
std::string uniqueIdAddress(const UniqueId& id);

/// Who a rank is, as its hello carried it.
struct PeerIdentity {
  int rank = -1;
  std::uint64_t hostId = 0;  ///< equal for ranks on one machine (hostname + boot id, or PEERLINK_HOSTID)
  std::string hostName;      ///< gethostname(), for messages
  std::int32_t pid = 0;
  std::uint32_t uid = 0;
};
/// "rank 3 (host gpu-a, pid 4242)".
std::string describePeer(const PeerIdentity& peer);

/// Called once per peer, from the bootstrap's watchdog thread, when that peer is lost: its process exited
/// (connection closed without a goodbye, or on the same host its pidfd fired), it aborted, or it broke the
/// protocol. `why` is one line naming it ("rank 3 (host a, pid 42) exited: ..."). Keep it short and do not
/// destroy the Bootstrap from it; a peer that destroys its Bootstrap cleanly is not "lost".
using PeerLostCallback = std::function<void(int rank, const std::string& why)>;

/// What a rank can do with the others. allGather and barrier are collective: every rank calls them in the
/// same order, one thread at a time; send and recv may be called from several threads. Once a call failed
/// on a peer that is lost, every later call that needs that peer fails at once.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Every rank's `bytes` bytes, in rank order (size() * bytes bytes). Every rank must give the same size:
  /// otherwise Error(InvalidUsage) naming both ranks and both sizes.
  virtual std::vector<std::uint8_t> allGather(const void* mine, std::size_t bytes) = 0;
  /// Sends to `peer` (may be this rank) under `tag` (>= 0); messages of one (peer, tag) arrive in order.
  virtual void send(int peer, int tag, const void* data, std::size_t bytes) = 0;
  /// The next message `peer` sent this rank under `tag`.
  virtual std::vector<std::uint8_t> recv(int peer, int tag) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
  /// Tells every peer this rank gives up, with a reason they report (their onPeerLost fires, their calls fail
  /// naming this rank). Later calls on this rank throw Error(RemoteError). Never throws, never waits long.
  virtual void abort(const std::string& reason) noexcept = 0;
  /// Who each rank is, indexed by rank.
  virtual const std::vector<PeerIdentity>& peers() const = 0;
  /// Registers the callback (replacing any earlier one); peers already lost are reported at once, from the
  /// calling thread.
  virtual void onPeerLost(PeerLostCallback callback) = 0;
};

/// Whether a process can follow a rendezvous root that sends the world to the real NCCL, as its hello tells the root
/// (the values are the hello's on the wire).
enum class ForwardAbility : std::uint16_t {
  NotNcclApi = 1,    ///< it joined through peerlink's own API (connectBootstrap, Communicator): no NCCL to go to
  Able = 2,          ///< NCCL's API over peerlink, with a real NCCL it may use
  FallbackNone = 3,  ///< NCCL's API under PEERLINK_NCCL_FALLBACK=NONE
  NoRealNccl = 4,    ///< NCCL's API where no real NCCL could be loaded
};

/// How a bootstrap waits and who this process says it is.
struct BootstrapOptions {
  /// Every wait: the rendezvous (and again the connections between ranks), each call.
  std::chrono::milliseconds deadline{30000};
  /// Empty: the host id is a hash of the hostname and /proc/sys/kernel/random/boot_id; else a hash of this
  /// text, so one machine can act as several nodes (PEERLINK_HOSTID).
  std::string hostId;
  /// Whether this process can follow a rendezvous root that sends the world to the real NCCL (only the root of an
  /// id made by NCCL's API over peerlink does, for ranks on several hosts). Where some rank cannot, such a root
  /// refuses the world and every rank's connectBootstrap fails with Error(InvalidUsage) naming those ranks and why.
  ForwardAbility forwarding = ForwardAbility::NotNcclApi;

  /// PEERLINK_BOOTSTRAP_TIMEOUT_MS and PEERLINK_HOSTID.
  static BootstrapOptions fromParams(const Params& params);
};

/// Joins the world of `nranks` ranks as `rank` through the root `id` names: connects to the root, says hello,
/// receives everyone's address and identity, then connects to every other rank (one TCP connection per pair)
/// and returns once every rank has done so. Error(InvalidUsage) at once for a rank outside [0, nranks) or a
/// malformed id; the errors of the rendezvous name the ranks and the address (docs/bootstrap.md lists them). An id
/// made by NCCL's API over peerlink whose root may forward is decided by its root once every rank arrived: ranks
/// on several hosts all get Error(Unsupported) saying the real NCCL serves that world, or, where some rank cannot
/// follow it there (options.forwarding), Error(InvalidUsage) naming those ranks.
std::unique_ptr<Bootstrap> connectBootstrap(
    const UniqueId& id, int rank, int nranks,
    const BootstrapOptions& options = BootstrapOptions::fromParams(Params::fromEnvironment()));

/// `nranks` bootstraps of one world inside this process, to be used from one thread each (tests, and a
/// communicator whose ranks share a process). Destroying one is its goodbye.
std::vector<std::unique_ptr<Bootstrap>> threadBootstraps(int nranks, const BootstrapOptions& options = {});

/// This process's identity as rank `rank` (host id per `options`), as the hello carries it.
PeerIdentity localPeerIdentity(int rank, const BootstrapOptions& options);

/// For implementations of Bootstrap (the MPI adapter uses them): Error(InvalidUsage) naming `call` for a peer
/// outside [0, size) or a negative tag, and for null data of a non-zero size or more than
/// kMaxBootstrapMessageBytes.
void checkBootstrapPeer(const char* call, int rank, int size, int peer, int tag);
void checkBootstrapData(const char* call, const void* data, std::size_t bytes);

/// torch's way: the application's key-value store carries only the id. Rank 0 makes the id (makeUniqueId with
/// `params`) and sets `key` to its text; the other ranks poll `get` until it returns a value or `deadline`
/// passes (Error(Timeout) naming the key). A value that is not an id is Error(InvalidInput) naming the key.
/// Errors `set` or `get` throw pass through.
UniqueId exchangeUniqueId(int rank, const std::string& key,
                          const std::function<void(const std::string& key, const std::string& value)>& set,
                          const std::function<std::optional<std::string>(const std::string& key)>& get,
                          std::chrono::milliseconds deadline, const Params& params = Params::fromEnvironment());

}  // namespace peerlink
