// A section of a committed document that a test generates (docs/errors.md: its CLI half by
// cpu/test_error_catalog.cc, its library half by gpu/test_library_errors.cc).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace peerlink::testing {

/// Fails unless the document at `path` has `table` between the lines `start` and `end` (a blank line after
/// `start`). When it differs, the document as it should read is written beside the test executable under the
/// same file name, and the failure says where, so that it can be copied over.
inline void expectGeneratedSection(const std::string& path, const std::string& start, const std::string& end,
                                   const std::string& table) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const std::size_t from = doc.find(start);
  const std::size_t to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << path << " has no " << start;
  ASSERT_NE(to, std::string::npos) << path << " has no " << end;
  const std::string expected = doc.substr(0, from) + start + "\n\n" + table + "\n" + doc.substr(to);
  if (expected == doc) return;
  const std::filesystem::path written =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / std::filesystem::path(path).filename();
  std::ofstream(written, std::ios::binary) << expected;
  ADD_FAILURE() << path << " differs from what the test generates between " << start << " and " << end
                << "; the document as it should read is in " << written.string() << " (copy it over)";
}

}  // namespace peerlink::testing
