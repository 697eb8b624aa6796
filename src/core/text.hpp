// Small text helpers shared by the parsers of environment values, sysfs/proc files and cache files.
#pragma once

#include <cctype>
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

}  // namespace peerlink
