// makeUniqueId (and the NCCL API's makeUniqueIdWithNccl): where the root listens, its token, and the root started.
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
                        const std::optional<NcclIdBytes>& ncclId) {
  UniqueIdContents contents;
  contents.token = token;
  contents.ncclId = ncclId;
  encodeUniqueId(contents);  // a real NCCL id that does not fit is refused before a root starts
  contents.root = startRoot(bindAddress, token, timeout, ncclId ? RootMode::DecidesServer : RootMode::Connect);
  return encodeUniqueId(contents);
}

namespace {

UniqueId makeId(const Params& params, const std::optional<NcclIdBytes>& ncclId) {
  const std::string setting = params.getString("PEERLINK_BOOTSTRAP_ADDR");
  const SocketAddress address =
      rootBindAddress(setting, setting.empty() ? listInterfaceAddresses() : std::vector<InterfaceAddress>{});
  const std::chrono::milliseconds timeout(params.getInt("PEERLINK_BOOTSTRAP_TIMEOUT_MS"));
  return startRootForId(address, randomToken(), timeout, ncclId);
}

}  // namespace

UniqueId makeUniqueIdWithNccl(const Params& params, const NcclIdBytes& ncclId) {
  return makeId(params, ncclId);
}

}  // namespace bootstrap

UniqueId makeUniqueId(const Params& params) {
  return bootstrap::makeId(params, std::nullopt);
}

}  // namespace peerlink
