#include "core/text.hpp"

#include <fmt/format.h>

namespace peerlink {
namespace {

// The length of the well-formed UTF-8 sequence at `text[i]` (1 to 4), or 0 when the bytes there are not one.
std::size_t utf8Length(const std::string& text, std::size_t i, std::size_t end) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // no overlong forms
    if (lead == 0xed) high = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + length > end) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

std::string printable(const std::string& text, std::size_t maxLength) {
  std::string out;
  const std::size_t shown = text.size() > maxLength ? maxLength : text.size();
  out.reserve(shown + 16);
  std::size_t i = 0;
  while (i < shown) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8Length(text, i, shown);
    // C1 controls (U+0080..U+009F, 0xC2 0x80..0x9F in UTF-8) act on some terminals as C0 ones do.
    const bool c1 = length == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (length == 0 || isControlByte(c) || c1) {
      for (std::size_t k = 0; k < (c1 ? 2 : 1); ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
      }
      i += c1 ? 2 : 1;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  if (shown < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

}  // namespace peerlink
