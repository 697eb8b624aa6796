// Where a rank's arena can be fetched, as every rank of a world of processes learns it at creation
// (arena_sharing.hpp): a fixed-size slot of an all-gather, so its codec is kept apart from the sharing itself and
// fuzzed alone (fuzz/fuzz_rank_card.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "peerlink/shared_memory.hpp"

namespace peerlink::coll {

struct ArenaAddress {
  ShareKind kind = ShareKind::Cumem;
  std::string socketPath;
};
constexpr std::size_t kArenaAddressBytes = 512;
/// The address padded with zeros to kArenaAddressBytes; Error(InvalidUsage) for a socket path too long for it.
std::vector<std::uint8_t> encodeArenaAddress(const ArenaAddress& address);
/// Strict: magic, a kind of 0 or 1, an absolute printable path, zeros after it; Error(InvalidInput) naming the field.
ArenaAddress decodeArenaAddress(const std::uint8_t* data, std::size_t size);

}  // namespace peerlink::coll
