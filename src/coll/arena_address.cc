// The arena address's codec (arena_address.hpp).
#include "coll/arena_address.hpp"

#include <fmt/format.h>

#include "core/byte_codec.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::uint32_t kAddressMagic = 0x41524150;  // "PARA" in memory
constexpr std::size_t kMaxSocketPath = 400;

}  // namespace

std::vector<std::uint8_t> encodeArenaAddress(const ArenaAddress& address) {
  if (address.socketPath.size() > kMaxSocketPath) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("socket path {} is longer than {} bytes", address.socketPath, kMaxSocketPath));
  }
  ByteWriter out;
  out.put(kAddressMagic);
  out.put(static_cast<std::uint8_t>(address.kind == ShareKind::Cumem ? 1 : 0));
  out.putString(address.socketPath);
  out.bytes().resize(kArenaAddressBytes, 0);
  return out.bytes();
}

ArenaAddress decodeArenaAddress(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size, "arena address");
  if (in.get<std::uint32_t>("magic") != kAddressMagic) in.fail("magic", "not a peerlink arena address");
  ArenaAddress address;
  address.kind = in.getInRange<std::uint8_t>("kind", 0, 1) == 1 ? ShareKind::Cumem : ShareKind::Ipc;
  address.socketPath = in.getString("socket path", kMaxSocketPath);
  if (address.socketPath.empty() || address.socketPath.front() != '/') in.fail("socket path", "not absolute");
  in.expectZeroPadding();
  return address;
}

}  // namespace peerlink::coll
