// TCP for the bootstrap: addresses (parsed, resolved, printed, carried on the wire), the choice of an
// interface, and non-blocking listen / connect / accept with deadlines.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/hello.hpp"
#include "core/deadline.hpp"
#include "core/file_descriptor.hpp"

namespace peerlink::bootstrap {

/// An IPv4 or IPv6 socket address.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  std::uint16_t port() const;
  void setPort(std::uint16_t port);
  bool isLoopback() const;
  bool isWildcard() const;
};
/// "10.0.0.1:29500", "[fd00::1]:29500".
std::string formatAddress(const SocketAddress& address);
WireAddress toWireAddress(const SocketAddress& address);
SocketAddress fromWireAddress(const WireAddress& address);

/// Host and port as written: "host", "host:port", "[v6]", "[v6]:port", or a bare IPv6 address.
struct HostPort {
  std::string host;
  std::optional<std::uint16_t> port;
};
/// Error(InvalidUsage) naming `what` (e.g. "PEERLINK_BOOTSTRAP_ADDR") for an empty host, a bad port, a stray ']'.
HostPort splitHostPort(const std::string& text, const std::string& what);
/// Resolves `text` (a numeric address or a host name; IPv4 results first) with `defaultPort` where it names
/// none. Error(InvalidUsage) naming `what` when it does not parse or resolve.
SocketAddress resolveAddress(const std::string& text, std::uint16_t defaultPort, const std::string& what);

/// One address of a network interface, as getifaddrs reports it.
struct InterfaceAddress {
  std::string name;
  bool up = false;  ///< IFF_UP and IFF_RUNNING
  bool loopback = false;
  SocketAddress address;
};
/// The machine's interface addresses (IPv4 and IPv6).
std::vector<InterfaceAddress> listInterfaceAddresses();
/// Where a root listens when PEERLINK_BOOTSTRAP_ADDR is not set: the first interface that is up and not
/// loopback, IPv4 before IPv6 (link-local IPv6 skipped: it needs a scope), docker* and virbr* bridges skipped
/// (they reach only this machine); else loopback; std::nullopt when there is not even that.
std::optional<InterfaceAddress> chooseInterfaceAddress(const std::vector<InterfaceAddress>& interfaces);

/// A non-blocking listening socket bound to `address` (port 0: any), its bound address in `*bound`.
/// Error(SystemError) naming the address (EADDRINUSE and EADDRNOTAVAIL with advice).
FileDescriptor listenTcp(const SocketAddress& address, int backlog, SocketAddress* bound);
/// A non-blocking connected socket (TCP_NODELAY), retrying refused and unreachable attempts until `deadline`;
/// std::nullopt when it passed, `*lastError` then says why the last attempt failed.
std::optional<FileDescriptor> connectTcp(const SocketAddress& to, DeadlineClock::time_point deadline,
                                         std::string* lastError);
/// An accepted non-blocking connection (TCP_NODELAY); an invalid descriptor when none is pending.
FileDescriptor acceptTcp(int listener);
/// The local address of a connected or bound socket.
SocketAddress localAddress(int fd);
/// The remote address of a connected socket ("unknown" peers get a zero address).
SocketAddress remoteAddress(int fd);

}  // namespace peerlink::bootstrap
