#include "bootstrap/hello.hpp"

#include <arpa/inet.h>

#include <algorithm>

#include <fmt/format.h>

#include "bootstrap/wire.hpp"

namespace peerlink::bootstrap {
namespace {

constexpr const char* kHelloWhat = "bootstrap hello";
constexpr std::size_t kVersionOffset = 8;  // where every protocol version keeps the peerlink version

void checkEncodable(const Hello& hello) {
  if (hello.nranks < 1 || hello.nranks > kMaxBootstrapRanks || hello.identity.rank < 0 ||
      hello.identity.rank >= hello.nranks) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("bootstrap hello: rank {} of {} ranks is out of range (1 to {} "
                                                     "ranks, rank from 0 to nranks - 1)",
                                                     hello.identity.rank, hello.nranks, kMaxBootstrapRanks));
  }
}

}  // namespace

bool sameToken(const Token& a, const Token& b) noexcept {
  unsigned difference = 0;
  for (std::size_t i = 0; i < kTokenBytes; ++i) difference |= static_cast<unsigned>(a[i] ^ b[i]);
  return difference == 0;
}

std::string formatWireAddress(const WireAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  const int family = address.family == AddressFamily::Ipv4 ? AF_INET : AF_INET6;
  if (::inet_ntop(family, address.bytes.data(), text, sizeof(text)) == nullptr) return "(unprintable address)";
  if (address.family == AddressFamily::Ipv4) return fmt::format("{}:{}", text, address.port);
  return fmt::format("[{}]:{}", text, address.port);
}

void putWireAddress(WireWriter& out, const WireAddress& address) {
  out.put(static_cast<std::uint8_t>(address.family));
  out.put(std::uint8_t{0});
  out.put(address.port);
  out.putBytes(address.bytes.data(), address.bytes.size());
}

WireAddress getWireAddress(WireReader& in) {
  WireAddress address;
  const auto family = in.get<std::uint8_t>("address family");
  if (family != static_cast<std::uint8_t>(AddressFamily::Ipv4) &&
      family != static_cast<std::uint8_t>(AddressFamily::Ipv6)) {
    in.fail(fmt::format("address family {} (4 or 6)", family));
  }
  address.family = static_cast<AddressFamily>(family);
  if (in.get<std::uint8_t>("reserved field") != 0) in.fail("reserved field after the address family is not 0");
  address.port = in.get<std::uint16_t>("port");
  if (address.port == 0) in.fail("port 0");
  in.getBytes(address.bytes.data(), address.bytes.size(), "address");
  if (address.family == AddressFamily::Ipv4 &&
      std::any_of(address.bytes.begin() + 4, address.bytes.end(), [](auto byte) { return byte != 0; })) {
    in.fail("an IPv4 address with bytes beyond its 4");
  }
  return address;
}

std::vector<std::uint8_t> encodeHello(const Hello& hello) {
  checkEncodable(hello);
  WireWriter out;
  out.put(kHelloMagic);
  out.put(kBootstrapProtocolVersion);
  out.put(static_cast<std::uint16_t>(hello.forwarding));
  out.putString(hello.peerlinkVersion, kVersionBytes, "peerlink version");
  out.putBytes(hello.token.data(), hello.token.size());
  out.put(static_cast<std::int32_t>(hello.identity.rank));
  out.put(static_cast<std::int32_t>(hello.nranks));
  out.put(hello.identity.hostId);
  out.put(hello.pidScope);
  out.put(hello.identity.pid);
  out.put(hello.identity.uid);
  putWireAddress(out, hello.listenAddress);
  out.putString(hello.identity.hostName, kHostNameBytes, "host name");
  return std::move(out.bytes());
}

Hello decodeHello(const std::uint8_t* data, std::size_t size) {
  WireReader in(data, size, kHelloWhat);
  // The magic first: a stranger's bytes are reported as such, whatever their length.
  const auto magic = in.get<std::uint32_t>("magic");
  if (magic != kHelloMagic) in.fail(fmt::format("magic 0x{:08x}, expected 0x{:08x}", magic, kHelloMagic));
  const auto protocol = in.get<std::uint16_t>("protocol version");
  if (protocol != kBootstrapProtocolVersion) {
    std::string theirs = "an unknown peerlink version";
    if (size >= kVersionOffset + kVersionBytes) {
      try {
        WireReader version(data + kVersionOffset, kVersionBytes, kHelloWhat);
        theirs = "peerlink " + version.getString(kVersionBytes, "peerlink version", false);
      } catch (const Error&) {
      }
    }
    in.fail(
        fmt::format("bootstrap protocol {} (from {}); this peerlink speaks protocol {}: run one peerlink version "
                    "on every rank",
                    protocol, theirs, kBootstrapProtocolVersion));
  }
  if (size != kHelloBytes) in.fail(fmt::format("{} bytes, expected {}", size, kHelloBytes));
  const auto forwarding = in.get<std::uint16_t>("forwarding");
  if (forwarding < static_cast<std::uint16_t>(ForwardAbility::NotNcclApi) ||
      forwarding > static_cast<std::uint16_t>(ForwardAbility::NoRealNccl)) {
    in.fail(fmt::format("forwarding {} (1 to 4)", forwarding));
  }

  Hello hello;
  hello.forwarding = static_cast<ForwardAbility>(forwarding);
  hello.peerlinkVersion = in.getString(kVersionBytes, "peerlink version", false);
  in.getBytes(hello.token.data(), hello.token.size(), "token");
  hello.identity.rank = in.get<std::int32_t>("rank");
  hello.nranks = in.get<std::int32_t>("nranks");
  if (hello.nranks < 1 || hello.nranks > kMaxBootstrapRanks) {
    in.fail(fmt::format("world of {} ranks (1 to {} allowed)", hello.nranks, kMaxBootstrapRanks));
  }
  if (hello.identity.rank < 0 || hello.identity.rank >= hello.nranks) {
    in.fail(fmt::format("rank {} outside a world of {} ranks", hello.identity.rank, hello.nranks));
  }
  hello.identity.hostId = in.get<std::uint64_t>("host id");
  hello.pidScope = in.get<std::uint64_t>("pid scope");
  hello.identity.pid = in.get<std::int32_t>("pid");
  if (hello.identity.pid <= 0) in.fail(fmt::format("pid {}", hello.identity.pid));
  hello.identity.uid = in.get<std::uint32_t>("uid");
  hello.listenAddress = getWireAddress(in);
  hello.identity.hostName = in.getString(kHostNameBytes, "host name", false);
  in.expectEnd();
  return hello;
}

std::vector<std::uint8_t> encodeWorld(const std::vector<Hello>& world) {
  WireWriter out;
  out.put(static_cast<std::uint32_t>(world.size()));
  for (const Hello& hello : world) {
    const std::vector<std::uint8_t> bytes = encodeHello(hello);
    out.putBytes(bytes.data(), bytes.size());
  }
  return std::move(out.bytes());
}

std::vector<Hello> decodeWorld(const std::uint8_t* data, std::size_t size, int nranks, const Token& token) {
  WireReader in(data, size, "bootstrap world table");
  const auto count = in.get<std::uint32_t>("rank count");
  if (nranks < 1 || count != static_cast<std::uint32_t>(nranks)) {
    in.fail(fmt::format("{} ranks, this rank expects {}", count, nranks));
  }
  if (in.left() != std::size_t{count} * kHelloBytes) {
    in.fail(fmt::format("{} bytes, {} ranks need {}", size, count, 4 + std::size_t{count} * kHelloBytes));
  }
  std::vector<Hello> world;
  world.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    Hello hello = decodeHello(data + in.offset() + std::size_t{i} * kHelloBytes, kHelloBytes);
    const bool tokenMatches = sameToken(hello.token, token);
    if (hello.identity.rank != static_cast<int>(i) || hello.nranks != nranks || !tokenMatches) {
      in.fail(fmt::format("entry {} is rank {} of {} ranks{}", i, hello.identity.rank, hello.nranks,
                          tokenMatches ? "" : " with another token"));
    }
    world.push_back(std::move(hello));
  }
  return world;
}

std::vector<std::uint8_t> encodeFailure(const Failure& failure) {
  WireWriter out;
  out.put(static_cast<std::int32_t>(toStatus(failure.code)));
  const std::size_t length = std::min(failure.message.size(), kMaxFailureText);
  out.putBytes(failure.message.data(), length);
  return std::move(out.bytes());
}

std::string getLineText(WireReader& in) {
  if (in.left() > kMaxFailureText) in.fail(fmt::format("text of {} bytes, more than {}", in.left(), kMaxFailureText));
  std::string text(in.left(), ' ');
  in.getBytes(text.data(), text.size(), "text");
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) c = ' ';
  }
  return text.empty() ? "(no reason given)" : text;
}

Failure decodeFailure(const std::uint8_t* data, std::size_t size) {
  WireReader in(data, size, "bootstrap failure message");
  const auto status = in.get<std::int32_t>("error code");
  if (status <= PEERLINK_STATUS_OK || status > PEERLINK_STATUS_INTERNAL) {
    in.fail(fmt::format("error code {} is not a peerlink status", status));
  }
  Failure failure;
  failure.code = toErrorCode(static_cast<peerlink_status_t>(status));
  failure.message = getLineText(in);
  return failure;
}

}  // namespace peerlink::bootstrap
