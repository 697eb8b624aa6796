// Checks on error messages, shared by the bootstrap's cpu tests and its MPI test.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "child_process.hpp"

namespace peerlink::testing {

/// EXPECT_TRUE(contains(text, needle)) prints the whole text when the needle is missing.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << needle << "'";
}

/// The message of the Error(code) that `action` throws (a test failure when it throws none or another code).
template <typename Action>
std::string errorOf(ErrorCode code, Action action) {
  return expectError(code, action).what();
}

}  // namespace peerlink::testing
