// makeUniqueId (and the NCCL API's makeForwardableUniqueId): where the root listens, its token, and the root started.
#include <utility>

#include <fmt/format.h>

#include "bootstrap/root.hpp"
#include "bootstrap/unique_id.hpp"

namespace peerlink {
namespace bootstrap {

SocketAddress rootBindAddress(const std::string& setting, const std::vector<InterfaceAddress>& interfaces) {
  if (!setting.empty()) {
    const SocketAddress address = resolveAddress(setting, 0, "PEERLINK_BOOTSTRAP_ADDR");
    if (address.isWildcard()) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("PEERLINK_BOOTSTRAP_ADDR='{}' is a wildcard address, which other ranks cannot connect "
                              "to: give an address of this host they can reach",
                              setting));
    }
    return address;
  }
  const std::optional<InterfaceAddress> chosen = chooseInterfaceAddress(interfaces);
  if (!chosen) {
    throw Error(
        ErrorCode::SystemError,
        "makeUniqueId: this machine has no IPv4 or IPv6 address, not even loopback: set PEERLINK_BOOTSTRAP_ADDR");
  }
  return chosen->address;
}

UniqueId startRootForId(const SocketAddress& bindAddress, const Token& token, std::chrono::milliseconds timeout,
                        ForwardIdSource forwardId) {
  UniqueIdContents contents;
  contents.token = token;
  contents.mayForward = forwardId != nullptr;
  contents.root = startRoot(bindAddress, token, timeout, std::move(forwardId));
  return encodeUniqueId(contents);
}

namespace {

UniqueId makeId(const Params& params, ForwardIdSource forwardId) {
  const std::string setting = params.getString("PEERLINK_BOOTSTRAP_ADDR");
  const SocketAddress address =
      rootBindAddress(setting, setting.empty() ? listInterfaceAddresses() : std::vector<InterfaceAddress>{});
  const std::chrono::milliseconds timeout(params.getInt("PEERLINK_BOOTSTRAP_TIMEOUT_MS"));
  return startRootForId(address, randomToken(), timeout, std::move(forwardId));
}

}  // namespace

UniqueId makeForwardableUniqueId(const Params& params, ForwardIdSource forwardId) {
  if (forwardId == nullptr) throw Error(ErrorCode::InvalidUsage, "makeForwardableUniqueId: no forward id source");
  return makeId(params, std::move(forwardId));
}

}  // namespace bootstrap

UniqueId makeUniqueId(const Params& params) {
  return bootstrap::makeId(params, nullptr);
}

}  // namespace peerlink
