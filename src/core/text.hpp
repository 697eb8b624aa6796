// Small text helpers shared by the parsers of environment values, sysfs/proc files and cache files, and by
// every message that quotes text from outside.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>

namespace peerlink {

/// `text` without leading and trailing white space (spaces, tabs, newlines).
inline std::string trimSpace(const std::string& text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

/// True for a byte a terminal would act on rather than show: C0 controls and DEL.
inline bool isControlByte(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

/// `text` made safe to print on one line of a terminal or in a document: control characters (C0, DEL, and
/// C1 as UTF-8 writes them) and bytes that are not UTF-8 become `\xNN`, and text longer than `maxLength`
/// bytes is cut, saying how long it was.
std::string printable(const std::string& text, std::size_t maxLength = 200);

}  // namespace peerlink
