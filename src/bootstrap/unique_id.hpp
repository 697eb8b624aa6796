// What a UniqueId holds, and the random token in it.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/hello.hpp"
#include "bootstrap/tcp.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::bootstrap {

inline constexpr std::uint32_t kUniqueIdMagic = 0x44494c50;  // "PLID" on the wire
/// A peerlink rendezvous only (makeUniqueId).
inline constexpr std::uint16_t kUniqueIdFormat = 1;
/// A peerlink rendezvous whose root decides who serves the world, and the real NCCL's id for when it says the
/// real NCCL does (the NCCL API's ncclGetUniqueId where the launcher does not say whether the job spans machines).
inline constexpr std::uint16_t kUniqueIdFormatWithNccl = 2;
/// Bytes of peerlink's part of an id: magic, format, root address, token.
inline constexpr std::size_t kUniqueIdOwnBytes = 42;
/// The most bytes of the real NCCL's id that fit beside peerlink's part and the length byte. NCCL 2.28's id is
/// its bootstrap handle {u64 magic; sockaddr_in6-sized address} (40 bytes with padding, zeros after): it fits.
inline constexpr std::size_t kNcclIdRoom = kUniqueIdBytes - kUniqueIdOwnBytes - 1;

/// The real NCCL's ncclUniqueId, as its 128 bytes.
using NcclIdBytes = std::array<std::uint8_t, kUniqueIdBytes>;

struct UniqueIdContents {
  Token token{};
  WireAddress root;
  /// Format 2: the real NCCL's id for the world the root may send there.
  std::optional<NcclIdBytes> ncclId;
};

/// How many leading bytes of `id` hold all of its non-zero ones (0 for an id of zeros).
std::size_t ncclIdExtent(const NcclIdBytes& id);
/// Whether `id` fits beside peerlink's part of a unique id: not all zeros, and zeros past kNcclIdRoom bytes.
bool ncclIdFits(const NcclIdBytes& id);

/// Layout, little-endian: magic u32, format u16, the root's address (putWireAddress: 20 bytes), token [16]; for
/// format 2 then the length n u8 of the real NCCL's id up to its last non-zero byte and those n bytes (the rest of
/// its 128 are zeros); then zeros to 128 bytes. Format 2 when `contents.ncclId` is set. Error(InvalidUsage) for a
/// real NCCL id that does not fit (ncclIdFits): it is never cut.
UniqueId encodeUniqueId(const UniqueIdContents& contents);
/// Strict (magic, format 1 or 2, family 4 or 6, port > 0; format 2: 1 <= n <= kNcclIdRoom, the n-th byte not zero;
/// zero padding); Error(InvalidUsage) naming what is wrong, since a bad id is the caller's.
UniqueIdContents decodeUniqueId(const UniqueId& id);

/// Where makeUniqueId's root listens: `setting` (PEERLINK_BOOTSTRAP_ADDR: host, host:port, [v6]:port; port 0
/// when it names none) or else chooseInterfaceAddress(interfaces). Error(InvalidUsage) for a wildcard address
/// (other ranks cannot connect to it), Error(SystemError) when the machine has no address at all.
SocketAddress rootBindAddress(const std::string& setting, const std::vector<InterfaceAddress>& interfaces);

/// Starts a root at `bindAddress` (root.hpp) and returns the id that names it with `token`: format 1 without
/// `ncclId`; with it, format 2 and a root that decides who serves the world (RootMode::DecidesServer).
/// Error(InvalidUsage) for an `ncclId` that does not fit, before any root starts.
UniqueId startRootForId(const SocketAddress& bindAddress, const Token& token, std::chrono::milliseconds timeout,
                        const std::optional<NcclIdBytes>& ncclId = std::nullopt);

/// makeUniqueId's id with the real NCCL's beside it (format 2): its root tells every rank, once all arrived,
/// whether peerlink serves the world (every rank on one host) or the real NCCL with `ncclId` (several hosts), as
/// verdict.hpp says. The NCCL API's ncclGetUniqueId where the launcher does not say whether the job spans
/// machines. Error(InvalidUsage) for an `ncclId` that does not fit.
UniqueId makeUniqueIdWithNccl(const Params& params, const NcclIdBytes& ncclId);

/// 16 bytes from getrandom(2) (blocking only until the kernel's pool is initialized, at boot).
Token randomToken();

}  // namespace peerlink::bootstrap
