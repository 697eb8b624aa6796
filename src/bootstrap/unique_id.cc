#include "bootstrap/unique_id.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include <fmt/format.h>

#include "bootstrap/wire.hpp"
#include "core/deadline.hpp"
#include "core/text.hpp"

namespace peerlink::bootstrap {
namespace {

constexpr const char* kHexDigits = "0123456789abcdef";

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
  return -1;
}

}  // namespace

UniqueId encodeUniqueId(const UniqueIdContents& contents) {
  WireWriter out;
  out.put(kUniqueIdMagic);
  out.put(contents.mayForward ? kUniqueIdFormatMayForward : kUniqueIdFormat);
  putWireAddress(out, contents.root);
  out.putBytes(contents.token.data(), contents.token.size());
  UniqueId id;
  std::copy(out.bytes().begin(), out.bytes().end(), id.bytes);
  return id;
}

UniqueIdContents decodeUniqueId(const UniqueId& id) {
  try {
    WireReader in(id.bytes, kUniqueIdBytes, "unique id");
    const auto magic = in.get<std::uint32_t>("magic");
    if (magic != kUniqueIdMagic) {
      in.fail(fmt::format("magic 0x{:08x}, expected 0x{:08x}: not a peerlink unique id (an NCCL id, or zeros?)", magic,
                          kUniqueIdMagic));
    }
    const auto format = in.get<std::uint16_t>("format");
    if (format != kUniqueIdFormat && format != kUniqueIdFormatMayForward) {
      in.fail(fmt::format("format {}, this peerlink reads formats {} and {} (made by another peerlink version?)",
                          format, kUniqueIdFormat, kUniqueIdFormatMayForward));
    }
    UniqueIdContents contents;
    contents.mayForward = format == kUniqueIdFormatMayForward;
    contents.root = getWireAddress(in);
    in.getBytes(contents.token.data(), contents.token.size(), "token");
    if (std::any_of(id.bytes + in.offset(), id.bytes + kUniqueIdBytes, [](auto b) { return b != 0; })) {
      in.fail("bytes after the token are not 0");
    }
    return contents;
  } catch (const Error& error) {
    throw Error(ErrorCode::InvalidUsage, error.what());
  }
}

Token randomToken() {
  Token token{};
  std::size_t filled = 0;
  while (filled < token.size()) {
    const ssize_t n = ::getrandom(token.data() + filled, token.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throwSystemError("getrandom (the bootstrap token)", errno);
    }
    filled += static_cast<std::size_t>(n);
  }
  return token;
}

}  // namespace peerlink::bootstrap

namespace peerlink {

std::string uniqueIdToString(const UniqueId& id) {
  std::string text;
  text.reserve(2 * kUniqueIdBytes);
  for (const unsigned char byte : id.bytes) {
    text.push_back(bootstrap::kHexDigits[byte >> 4]);
    text.push_back(bootstrap::kHexDigits[byte & 15]);
  }
  return text;
}

UniqueId uniqueIdFromString(const std::string& raw) {
  const std::string text = trimSpace(raw);
  if (text.size() != 2 * kUniqueIdBytes) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("a peerlink unique id is {} hex digits; this text has {} characters{}", 2 * kUniqueIdBytes,
                            text.size(), text.empty() ? " (is the variable or key set?)" : ""));
  }
  UniqueId id;
  for (std::size_t i = 0; i < kUniqueIdBytes; ++i) {
    const int high = bootstrap::hexValue(text[2 * i]);
    const int low = bootstrap::hexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      const std::size_t at = high < 0 ? 2 * i : 2 * i + 1;
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("a peerlink unique id is hex digits; character {} is '{}'", at + 1,
                              std::isprint(static_cast<unsigned char>(text[at])) ? std::string(1, text[at]) : "?"));
    }
    id.bytes[i] = static_cast<unsigned char>(high * 16 + low);
  }
  bootstrap::decodeUniqueId(id);  // the bytes must be an id too
  return id;
}

std::string uniqueIdAddress(const UniqueId& id) {
  return bootstrap::formatWireAddress(bootstrap::decodeUniqueId(id).root);
}

}  // namespace peerlink
