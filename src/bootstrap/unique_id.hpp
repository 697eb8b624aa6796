// What a UniqueId holds, and the random token in it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bootstrap/hello.hpp"
#include "bootstrap/tcp.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::bootstrap {

inline constexpr std::uint32_t kUniqueIdMagic = 0x44494c50;  // "PLID" on the wire
inline constexpr std::uint16_t kUniqueIdFormat = 1;

struct UniqueIdContents {
  Token token{};
  WireAddress root;
};

/// Layout, little-endian: magic u32, format u16, the root's address (putWireAddress: 20 bytes), token [16],
/// then zeros to 128 bytes.
UniqueId encodeUniqueId(const UniqueIdContents& contents);
/// Strict (magic, format, family 4 or 6, port > 0, zero padding); Error(InvalidUsage) naming what is wrong,
/// since a bad id is the caller's.
UniqueIdContents decodeUniqueId(const UniqueId& id);

/// Where makeUniqueId's root listens: `setting` (PEERLINK_BOOTSTRAP_ADDR: host, host:port, [v6]:port; port 0
/// when it names none) or else chooseInterfaceAddress(interfaces). Error(InvalidUsage) for a wildcard address
/// (other ranks cannot connect to it), Error(SystemError) when the machine has no address at all.
SocketAddress rootBindAddress(const std::string& setting, const std::vector<InterfaceAddress>& interfaces);

/// Starts a root at `bindAddress` (root.hpp) and returns the id that names it with `token`.
UniqueId startRootForId(const SocketAddress& bindAddress, const Token& token, std::chrono::milliseconds timeout);

/// 16 bytes from getrandom(2) (blocking only until the kernel's pool is initialized, at boot).
Token randomToken();

}  // namespace peerlink::bootstrap
