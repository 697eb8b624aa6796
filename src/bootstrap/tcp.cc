#include "bootstrap/tcp.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/text.hpp"

namespace peerlink::bootstrap {
namespace {

constexpr std::chrono::milliseconds kConnectRetryInterval{20};

void setNoDelay(int fd) {
  const int one = 1;
  // Bootstrap messages are small and waited for: Nagle's delay would only add latency.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool skippedBridge(const std::string& name) {
  return name.rfind("docker", 0) == 0 || name.rfind("virbr", 0) == 0;
}

bool isLinkLocalV6(const SocketAddress& address) {
  if (address.family() != AF_INET6) return false;
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address.storage);
  return IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr);
}

// Errors after which another attempt may succeed: nobody listens yet, or the network is not there yet.
bool retryable(int error) {
  return error == ECONNREFUSED || error == ETIMEDOUT || error == ENETUNREACH || error == EHOSTUNREACH ||
         error == ECONNRESET || error == ECONNABORTED || error == EAGAIN || error == EINTR;
}

}  // namespace

std::uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SocketAddress::setPort(std::uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr) >> 24) == 127;
  }
  return family() == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr);
}

bool SocketAddress::isWildcard() const {
  if (family() == AF_INET) return reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr == INADDR_ANY;
  return family() == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr);
}

WireAddress toWireAddress(const SocketAddress& address) {
  WireAddress wire;
  wire.port = address.port();
  if (address.family() == AF_INET) {
    wire.family = AddressFamily::Ipv4;
    std::memcpy(wire.bytes.data(), &reinterpret_cast<const sockaddr_in*>(&address.storage)->sin_addr, 4);
  } else {
    wire.family = AddressFamily::Ipv6;
    std::memcpy(wire.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(&address.storage)->sin6_addr, 16);
  }
  return wire;
}

SocketAddress fromWireAddress(const WireAddress& wire) {
  SocketAddress address;
  if (wire.family == AddressFamily::Ipv4) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
    v4->sin_family = AF_INET;
    std::memcpy(&v4->sin_addr, wire.bytes.data(), 4);
    address.length = sizeof(sockaddr_in);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
    v6->sin6_family = AF_INET6;
    std::memcpy(&v6->sin6_addr, wire.bytes.data(), 16);
    address.length = sizeof(sockaddr_in6);
  }
  address.setPort(wire.port);
  return address;
}

std::string formatAddress(const SocketAddress& address) {
  if (address.family() != AF_INET && address.family() != AF_INET6) return "(no address)";
  return formatWireAddress(toWireAddress(address));
}

HostPort splitHostPort(const std::string& raw, const std::string& what) {
  const std::string text = trimSpace(raw);
  auto invalid = [&](const std::string& problem) {
    return Error(ErrorCode::InvalidUsage, fmt::format("{}='{}' is not valid: {} (expected host, host:port or "
                                                      "[IPv6]:port)",
                                                      what, raw, problem));
  };
  HostPort result;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string::npos) throw invalid("'[' without ']'");
    result.host = text.substr(1, close - 1);
    const std::string rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') throw invalid("text after ']' that is not ':port'");
      port = rest.substr(1);
      if (port.empty()) throw invalid("':' without a port");
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    const std::size_t colon = text.find(':');
    result.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty()) throw invalid("':' without a port");
  } else {
    result.host = text;  // a name, an IPv4 address, or a bare IPv6 address
  }
  if (result.host.empty()) throw invalid("no host");
  if (result.host.find(']') != std::string::npos) throw invalid("a stray ']'");
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); })) {
      throw invalid(fmt::format("port '{}' is not a number", port));
    }
    const int value = std::stoi(port);
    if (value < 1 || value > 65535) throw invalid(fmt::format("port {} is outside 1..65535", value));
    result.port = static_cast<std::uint16_t>(value);
  }
  return result;
}

SocketAddress resolveAddress(const std::string& text, std::uint16_t defaultPort, const std::string& what) {
  const HostPort parts = splitHostPort(text, what);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = ::getaddrinfo(parts.host.c_str(), nullptr, &hints, &found);
  if (status != 0 || found == nullptr) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}='{}': cannot resolve '{}': {}", what, text, parts.host, ::gai_strerror(status)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(found, ::freeaddrinfo);
  const addrinfo* chosen = nullptr;
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family == AF_INET) {
      chosen = entry;
      break;
    }
    if (entry->ai_family == AF_INET6 && chosen == nullptr) chosen = entry;
  }
  if (chosen == nullptr) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("{}='{}': '{}' has no IPv4 or IPv6 address", what, text, parts.host));
  }
  SocketAddress address;
  std::memcpy(&address.storage, chosen->ai_addr, chosen->ai_addrlen);
  address.length = chosen->ai_addrlen;
  address.setPort(parts.port.value_or(defaultPort));
  return address;
}

std::vector<InterfaceAddress> listInterfaceAddresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) throwSystemError("getifaddrs", errno);
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, ::freeifaddrs);
  std::vector<InterfaceAddress> result;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    const int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    InterfaceAddress item;
    item.name = entry->ifa_name != nullptr ? entry->ifa_name : "";
    item.up = (entry->ifa_flags & IFF_UP) != 0 && (entry->ifa_flags & IFF_RUNNING) != 0;
    item.loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
    item.address.length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&item.address.storage, entry->ifa_addr, item.address.length);
    item.address.setPort(0);
    result.push_back(std::move(item));
  }
  return result;
}

std::optional<InterfaceAddress> chooseInterfaceAddress(const std::vector<InterfaceAddress>& interfaces) {
  auto first = [&](auto&& accept) -> std::optional<InterfaceAddress> {
    for (const InterfaceAddress& item : interfaces) {
      if (accept(item)) return item;
    }
    return std::nullopt;
  };
  auto routable = [](const InterfaceAddress& item, int family) {
    return item.up && !item.loopback && !item.address.isLoopback() && !skippedBridge(item.name) &&
           item.address.family() == family && !isLinkLocalV6(item.address);
  };
  if (auto v4 = first([&](const InterfaceAddress& item) { return routable(item, AF_INET); })) return v4;
  if (auto v6 = first([&](const InterfaceAddress& item) { return routable(item, AF_INET6); })) return v6;
  if (auto lo = first(
          [](const InterfaceAddress& item) { return item.address.isLoopback() && item.address.family() == AF_INET; })) {
    return lo;
  }
  return first([](const InterfaceAddress& item) { return item.address.isLoopback(); });
}

FileDescriptor listenTcp(const SocketAddress& address, int backlog, SocketAddress* bound) {
  FileDescriptor socket(::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket) throwSystemError(fmt::format("socket() for {}", formatAddress(address)), errno);
  const int one = 1;
  // A fixed port (PEERLINK_BOOTSTRAP_ADDR, MASTER_PORT) must be usable again at once after a previous run,
  // while the old connections sit in TIME_WAIT.
  ::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(socket.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0) {
    const int error = errno;
    std::string advice;
    if (error == EADDRINUSE) advice = " (another process listens there: choose another port)";
    if (error == EADDRNOTAVAIL) advice = " (no interface of this machine has that address)";
    throw Error(ErrorCode::SystemError,
                fmt::format("bind({}) failed: {}{}", formatAddress(address), std::strerror(error), advice));
  }
  if (::listen(socket.get(), backlog) != 0) {
    throwSystemError(fmt::format("listen({})", formatAddress(address)), errno);
  }
  if (bound != nullptr) *bound = localAddress(socket.get());
  return socket;
}

std::optional<FileDescriptor> connectTcp(const SocketAddress& to, DeadlineClock::time_point deadline,
                                         std::string* lastError) {
  for (;;) {
    FileDescriptor socket(::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket) throwSystemError(fmt::format("socket() for {}", formatAddress(to)), errno);
    int error = 0;
    if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&to.storage), to.length) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        if (waitForFd(socket.get(), POLLOUT, deadline)) {
          socklen_t length = sizeof(error);
          ::getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &length);
        } else {
          error = ETIMEDOUT;
        }
      }
    }
    if (error == 0) {
      setNoDelay(socket.get());
      return socket;
    }
    if (lastError != nullptr) *lastError = std::strerror(error);
    if (!retryable(error)) {
      throw Error(ErrorCode::SystemError,
                  fmt::format("connect({}) failed: {}", formatAddress(to), std::strerror(error)));
    }
    const auto left = deadline - DeadlineClock::now();
    if (left <= DeadlineClock::duration::zero()) return std::nullopt;
    std::this_thread::sleep_for(std::min<DeadlineClock::duration>(left, kConnectRetryInterval));
  }
}

FileDescriptor acceptTcp(int listener) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      setNoDelay(fd);
      return FileDescriptor(fd);
    }
    const int error = errno;
    if (error == EINTR || error == ECONNABORTED) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) return FileDescriptor();
    throwSystemError("accept4 on a bootstrap listener", error);
  }
}

SocketAddress localAddress(int fd) {
  SocketAddress address;
  address.length = sizeof(address.storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) {
    throwSystemError("getsockname", errno);
  }
  return address;
}

SocketAddress remoteAddress(int fd) {
  SocketAddress address;
  address.length = sizeof(address.storage);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) return SocketAddress();
  return address;
}

}  // namespace peerlink::bootstrap
