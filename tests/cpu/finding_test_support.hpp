// Picking findings out of a doctor result in tests: their codes sorted, all of one code, exactly one; and
// whether a text holds a part.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "peerlink/doctor.hpp"

namespace peerlink {

using Codes = std::vector<std::string>;
using Gpus = std::vector<int>;

/// The findings' codes, sorted, for comparing whole sets.
inline Codes codes(const std::vector<Finding>& findings) {
  Codes result;
  for (const Finding& f : findings) result.push_back(f.code);
  std::sort(result.begin(), result.end());
  return result;
}

/// Every finding of `code`, in their order.
inline std::vector<Finding> all(const std::vector<Finding>& findings, const std::string& code) {
  std::vector<Finding> result;
  for (const Finding& f : findings) {
    if (f.code == code) result.push_back(f);
  }
  return result;
}

/// The one finding of `code` (a test failure when there is not exactly one).
inline Finding only(const std::vector<Finding>& findings, const std::string& code) {
  const auto found = all(findings, code);
  EXPECT_EQ(found.size(), 1u) << code;
  return found.empty() ? Finding{} : found[0];
}

/// Whether `part` occurs in `text`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace peerlink
