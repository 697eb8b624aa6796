// The bootstrap's messages as bytes: the hello every rank sends (to the root, and to each peer it connects
// to), the world table the root answers with, and the failure text either side sends when it gives up. Pure
// encode/decode pairs, no sockets: the decoders check every field's range before use (an enum from the wire is
// validated before it is converted) and throw Error(InvalidInput) on anything else, so a fuzzer may call them on
// arbitrary bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/wire.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/error.hpp"

namespace peerlink::bootstrap {

inline constexpr std::uint32_t kHelloMagic = 0x48424c50;  // "PLBH" on the wire
/// Raised when a message's layout or meaning changes; ranks of different protocols cannot talk. 2: the hello says
/// whether the rank can follow a root that sends the world to the real NCCL, where protocol 1's had a reserved zero.
/// The hello keeps its size (a frame of another size would be refused before its protocol is read, by peers of
/// either protocol), so that each side names the other's protocol and peerlink version.
inline constexpr std::uint16_t kBootstrapProtocolVersion = 2;
inline constexpr std::size_t kTokenBytes = 16;
inline constexpr std::size_t kVersionBytes = 32;
inline constexpr std::size_t kHostNameBytes = 64;
/// Size of an encoded hello (fixed).
inline constexpr std::size_t kHelloBytes = 172;
/// Longest failure text carried (longer ones are cut).
inline constexpr std::size_t kMaxFailureText = 4096;

using Token = std::array<std::uint8_t, kTokenBytes>;
/// Whether two tokens are equal, in a time that does not depend on where they differ: a stranger on the network
/// must not learn the token a byte at a time from how fast its guesses are refused.
bool sameToken(const Token& a, const Token& b) noexcept;

enum class AddressFamily : std::uint8_t { Ipv4 = 4, Ipv6 = 6 };

/// An IP address and port as the wire carries it (IPv4 in the first 4 bytes).
struct WireAddress {
  AddressFamily family = AddressFamily::Ipv4;
  std::array<std::uint8_t, 16> bytes{};
  std::uint16_t port = 0;

  bool operator==(const WireAddress& other) const {
    return family == other.family && bytes == other.bytes && port == other.port;
  }
};
/// "10.0.0.1:29500" or "[fd00::1]:29500".
std::string formatWireAddress(const WireAddress& address);
/// An address as 20 bytes on the wire (in a hello and in a unique id): family u8, zero u8, port u16, address [16].
void putWireAddress(WireWriter& out, const WireAddress& address);
/// Strict: family 4 or 6 (checked before it is converted), a zero reserved byte, port > 0, an IPv4 address's
/// unused 12 bytes zero.
WireAddress getWireAddress(WireReader& in);

/// What a rank says about itself.
struct Hello {
  std::string peerlinkVersion;  ///< kVersion of the rank's library
  Token token{};                ///< from the unique id: proves the rank holds it
  int nranks = 0;               ///< the world size the rank was given
  PeerIdentity identity;        ///< rank, host id, host name, pid, uid
  /// Hash of the boot id and the pid namespace: equal only where pids name the same processes (pidfd).
  std::uint64_t pidScope = 0;
  WireAddress listenAddress;  ///< where the rank accepts its peers
  /// Whether the rank can follow a rendezvous root that sends the world to the real NCCL (verdict.hpp).
  ForwardAbility forwarding = ForwardAbility::NotNcclApi;
};

/// Fixed layout, little-endian: magic u32, protocol u16, forwarding u16 (ForwardAbility's value), peerlink version
/// [32], token [16], rank i32, nranks i32, host id u64, pid scope u64, pid i32, uid u32, family u8, zero u8, port u16,
/// address [16], host name [64]. Every protocol keeps the magic, the protocol and the peerlink version where they
/// are. Error(InvalidUsage) when a field cannot be encoded (a rank out of range, a long name).
std::vector<std::uint8_t> encodeHello(const Hello& hello);
/// Strict: exactly kHelloBytes; magic; protocol version (a different one, older or newer, is named with the peer's
/// peerlink version); a known ForwardAbility (checked before it is converted); zero reserved fields; 1 <= nranks <=
/// kMaxBootstrapRanks; 0 <= rank < nranks; pid > 0; family 4 or 6 (an IPv4 address's unused bytes zero); port > 0;
/// printable NUL-terminated strings.
Hello decodeHello(const std::uint8_t* data, std::size_t size);

/// The root's answer once every rank arrived: every rank's hello, in rank order.
std::vector<std::uint8_t> encodeWorld(const std::vector<Hello>& world);
/// Strict: a count u32 then that many hellos; hello i must be rank i, and all of them of `nranks` ranks and
/// carrying `token`.
std::vector<Hello> decodeWorld(const std::uint8_t* data, std::size_t size, int nranks, const Token& token);

/// Why a side gives up: an error code and one line of text.
struct Failure {
  ErrorCode code = ErrorCode::RemoteError;
  std::string message;
};
/// The rest of `in` as one line of text: at most kMaxFailureText bytes (else Error(InvalidInput)), control
/// characters as spaces, "(no reason given)" when empty. The failure's text and the Forward frame's reason.
std::string getLineText(WireReader& in);

/// code i32 (a peerlink_status_t), then the text (cut to kMaxFailureText bytes).
std::vector<std::uint8_t> encodeFailure(const Failure& failure);
/// Strict on the code (a known, non-OK status) and the length; control characters in the text become spaces.
Failure decodeFailure(const std::uint8_t* data, std::size_t size);

}  // namespace peerlink::bootstrap
