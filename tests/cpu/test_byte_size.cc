// Sizes in bytes as peerlink reads them (flags, PEERLINK_* settings) and writes them (reasons, logs):
// src/core/byte_size.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "core/byte_size.hpp"

namespace peerlink {
namespace {

TEST(ByteSize, ParsesNumbersWithSuffixesOfPowersOf1024) {
  EXPECT_EQ(parseByteSize("8"), 8u);
  EXPECT_EQ(parseByteSize("64K"), 65536u);
  EXPECT_EQ(parseByteSize("64kb"), 65536u);
  EXPECT_EQ(parseByteSize("256M"), std::uint64_t{256} << 20);
  EXPECT_EQ(parseByteSize("1G"), std::uint64_t{1} << 30);
  for (const char* bad : {"", "K", "-1", "+1", "1T", "1.5M", " 1", "18446744073709551616", "17179869184G"}) {
    EXPECT_EQ(parseByteSize(bad), std::nullopt) << bad;
  }
}

TEST(ByteSize, WritesTheLargestUnitWholeOrToATenth) {
  EXPECT_EQ(formatByteSize(0), "0 B");
  EXPECT_EQ(formatByteSize(1023), "1023 B");
  EXPECT_EQ(formatByteSize(1024), "1 KiB");
  EXPECT_EQ(formatByteSize(256 << 10), "256 KiB");
  EXPECT_EQ(formatByteSize(3 << 19), "1.5 MiB");
  EXPECT_EQ(formatByteSize(std::uint64_t{2} << 30), "2 GiB");
  EXPECT_EQ(formatByteSize(std::uint64_t{5} << 40), "5 TiB");
  EXPECT_EQ(formatByteSize(std::uint64_t{1} << 50), "1024 TiB");  // no larger unit
}

}  // namespace
}  // namespace peerlink
