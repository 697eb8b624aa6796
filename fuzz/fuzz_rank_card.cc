// The communicator's messages at creation (src/coll/world.cc, arena_address.cc): a rank's card, gathered from
// every rank, and where a rank's arena can be fetched. Any bytes decode to a message that encodes back to the
// same bytes (both are fixed-size slots whose padding must be zeros), or fail with Error(InvalidInput).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/arena_address.hpp"
#include "coll/world.hpp"
#include "peerlink/error.hpp"

namespace {

using namespace peerlink;

template <typename Body>
void expectValueOrInvalidInput(Body body) {
  try {
    body();
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidInput) __builtin_trap();
  }
}

// What an encoder writes into a slot of `slot` bytes, compared with the slot as it arrived (its size may be
// any; the decoders read a prefix and require zeros after it).
bool sameSlot(const std::vector<std::uint8_t>& encoded, const std::uint8_t* data, std::size_t size) {
  const std::size_t common = std::min(encoded.size(), size);
  if (common > 0 && std::memcmp(encoded.data(), data, common) != 0) return false;
  for (std::size_t i = common; i < encoded.size(); ++i) {
    if (encoded[i] != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Each message arrives in a slot of its fixed size (an all-gather of slots); longer inputs are cut to it.
  expectValueOrInvalidInput([&] {
    const coll::RankCard card = coll::decodeRankCard(data, std::min(size, coll::kRankCardBytes));
    if (card.rank < 0 || card.rank >= card.nranks || card.busId.empty()) __builtin_trap();
    if (!sameSlot(coll::encodeRankCard(card), data, std::min(size, coll::kRankCardBytes))) __builtin_trap();
  });
  expectValueOrInvalidInput([&] {
    const coll::ArenaAddress address = coll::decodeArenaAddress(data, std::min(size, coll::kArenaAddressBytes));
    if (address.socketPath.empty() || address.socketPath.front() != '/') __builtin_trap();
    if (!sameSlot(coll::encodeArenaAddress(address), data, std::min(size, coll::kArenaAddressBytes))) {
      __builtin_trap();
    }
  });
  return 0;
}
