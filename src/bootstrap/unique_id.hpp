// What a UniqueId holds, and the random token in it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bootstrap/hello.hpp"
#include "bootstrap/root.hpp"
#include "bootstrap/tcp.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::bootstrap {

inline constexpr std::uint32_t kUniqueIdMagic = 0x44494c50;  // "PLID" on the wire
/// A peerlink rendezvous only (makeUniqueId).
inline constexpr std::uint16_t kUniqueIdFormat = 1;
/// A peerlink rendezvous whose root decides who serves the world, and asks the real NCCL for an id when it says
/// the real NCCL does (the NCCL API's ncclGetUniqueId where the launcher does not say whether the job spans
/// machines; verdict.hpp).
inline constexpr std::uint16_t kUniqueIdFormatMayForward = 2;
/// Bytes of an id's contents: magic, format, root address, token; zeros after.
inline constexpr std::size_t kUniqueIdOwnBytes = 42;

struct UniqueIdContents {
  Token token{};
  WireAddress root;
  /// Format 2: the root may send the world to the real NCCL.
  bool mayForward = false;
};

/// Layout, little-endian: magic u32, format u16 (2 when `contents.mayForward`, else 1), the root's address
/// (putWireAddress: 20 bytes), token [16], then zeros to 128 bytes.
UniqueId encodeUniqueId(const UniqueIdContents& contents);
/// Strict (magic, format 1 or 2, family 4 or 6, port > 0, zero padding); Error(InvalidUsage) naming what is wrong,
/// since a bad id is the caller's.
UniqueIdContents decodeUniqueId(const UniqueId& id);

/// Where makeUniqueId's root listens: `setting` (PEERLINK_BOOTSTRAP_ADDR: host, host:port, [v6]:port; port 0
/// when it names none) or else chooseInterfaceAddress(interfaces). Error(InvalidUsage) for a wildcard address
/// (other ranks cannot connect to it), Error(SystemError) when the machine has no address at all.
SocketAddress rootBindAddress(const std::string& setting, const std::vector<InterfaceAddress>& interfaces);

/// Starts a root at `bindAddress` (root.hpp) and returns the id that names it with `token`: format 1 without
/// `forwardId`; with it, format 2 and a root that decides who serves the world and calls `forwardId` when it says
/// the real NCCL does.
UniqueId startRootForId(const SocketAddress& bindAddress, const Token& token, std::chrono::milliseconds timeout,
                        ForwardIdSource forwardId = nullptr);

/// makeUniqueId's id whose root may forward (format 2): once every rank arrived it tells every rank whether
/// peerlink serves the world (every rank on one host) or the real NCCL (several hosts), with the id `forwardId`
/// then gives, as verdict.hpp says. The NCCL API's ncclGetUniqueId where the launcher does not say whether the job
/// spans machines.
UniqueId makeForwardableUniqueId(const Params& params, ForwardIdSource forwardId);

/// 16 bytes from getrandom(2) (blocking only until the kernel's pool is initialized, at boot).
Token randomToken();

}  // namespace peerlink::bootstrap
