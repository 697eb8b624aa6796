// The share protocol's messages between processes (decodeShareOffer, decodeShareReply): any bytes decode
// to a message that encodes back to what decodes the same, or fail with Error(InvalidInput).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/share_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peerlink;
  try {
    const ShareOffer offer = decodeShareOffer(data, size);
    const std::vector<std::uint8_t> again = encodeShareOffer(offer);
    const ShareOffer decoded = decodeShareOffer(again.data(), again.size());
    if (decoded.size != offer.size || decoded.ownerBusId != offer.ownerBusId) __builtin_trap();
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidInput) __builtin_trap();
  }
  try {
    const ShareReply reply = decodeShareReply(data, size);
    const std::vector<std::uint8_t> again = encodeShareReply(reply);
    const ShareReply decoded = decodeShareReply(again.data(), again.size());
    if (decoded.ok != reply.ok || (!reply.ok && decoded.code != reply.code)) __builtin_trap();
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidInput) __builtin_trap();
  }
  return 0;
}
