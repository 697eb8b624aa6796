// Host reduction: f16/bf16 conversions (rounding, inf, NaN, subnormals), every type x op with wrapping
// integers, avg's finish, the closed-form reference of every collective, and the tolerance rules.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "coll/host_reduce.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

float bitsFloat(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

TEST(HalfConversion, RoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, 1.0 is even
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, rounds up to even
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.2f, -11)), 0x3c01);      // above the tie
  EXPECT_EQ(floatToHalf(2047.0f + 0.5f), 0x67ff + 1);                // 2047.5 -> 2048 (carry into exponent)
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // the tie above the largest half rounds to inf
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
}

TEST(HalfConversion, SubnormalsNanAndInf) {
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie, rounds to even 2
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400);  // the largest subnormal's tie rounds into the normals
  EXPECT_EQ(floatToHalf(bitsFloat(0x00000001)), 0x0000);     // float subnormal
  const std::uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_NE(floatToHalf(bitsFloat(0x7f800001)) & 0x0200, 0);  // signalling NaN comes back quiet
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x83ff), -std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
}

TEST(HalfConversion, EveryHalfRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    const float value = halfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value))));
    } else {
      ASSERT_EQ(floatToHalf(value), half) << std::hex << bits;
    }
  }
}

#ifdef __FLT16_MAX__
// Against the compiler's own _Float16 conversion, which rounds to nearest-even.
TEST(HalfConversion, MatchesTheCompilersFloat16) {
  std::mt19937 random(1);
  for (int i = 0; i < 200000; ++i) {
    // Exponents around half's range, every mantissa pattern.
    const auto bits = static_cast<std::uint32_t>((random() & 0x807fffffu) | ((100u + random() % 60u) << 23));
    const float value = bitsFloat(bits);
    const auto expected = static_cast<_Float16>(value);
    std::uint16_t expectedBits = 0;
    std::memcpy(&expectedBits, &expected, sizeof expectedBits);
    ASSERT_EQ(floatToHalf(value), expectedBits) << std::hex << bits;
  }
}
#endif

// Nearest bf16 of a finite float by comparing both neighbours in double, ties to even.
std::uint16_t referenceBf16(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const auto low = static_cast<std::uint16_t>(bits >> 16);
  const auto high = static_cast<std::uint16_t>(low + 1);
  const double distanceLow = std::fabs(static_cast<double>(value) - bf16ToFloat(low));
  // Past the largest bf16 the next step up is 2^128, which is what rounding compares against (then inf).
  const double highValue = (high & 0x7f80) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), value) : bf16ToFloat(high);
  const double distanceHigh = std::fabs(static_cast<double>(value) - highValue);
  if (distanceLow != distanceHigh) return distanceLow < distanceHigh ? low : high;
  return (low & 1) == 0 ? low : high;
}

TEST(Bf16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie to even
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie to even, up
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(floatToBf16(bitsFloat(0x00010000)), 0x0001);  // subnormals are kept
  EXPECT_EQ(floatToBf16(bitsFloat(0x00008000)), 0x0000);  // tie to even zero
  const std::uint16_t nan = floatToBf16(bitsFloat(0x7f800001));
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  EXPECT_NE(nan & 0x0040, 0);
  EXPECT_EQ(bf16ToFloat(0x4049), 3.140625f);
  std::mt19937 random(2);
  for (int i = 0; i < 200000; ++i) {
    const float value =
        bitsFloat(static_cast<std::uint32_t>(random() & 0xff7fffffu));  // finite (exponent never all ones)
    ASSERT_EQ(floatToBf16(value), referenceBf16(value)) << value;
  }
}

// Three sources of one element each, reduced with hostReduce; returns the result as a double.
template <typename T>
double reduce3(DataType type, ReduceOp op, T a, T b, T c, bool finish = true) {
  T values[3] = {a, b, c};
  T out{};
  hostReduce(type, op, &out, {&values[0], &values[1], &values[2]}, 1, 3, finish);
  return loadElement(type, &out, 0);
}

TEST(HostReduce, IntegersWrapAndCompareSigned) {
  EXPECT_EQ(reduce3<std::uint8_t>(DataType::U8, ReduceOp::Sum, 200, 100, 1), 45);
  EXPECT_EQ(reduce3<std::int8_t>(DataType::I8, ReduceOp::Sum, 100, 100, 0), -56);
  EXPECT_EQ(reduce3<std::int8_t>(DataType::I8, ReduceOp::Prod, -128, -1, 1), -128);
  EXPECT_EQ(reduce3<std::uint8_t>(DataType::U8, ReduceOp::Prod, 16, 16, 3), 0);
  EXPECT_EQ(reduce3<std::int8_t>(DataType::I8, ReduceOp::Min, -5, 3, -7), -7);
  EXPECT_EQ(reduce3<std::uint8_t>(DataType::U8, ReduceOp::Max, 200, 3, 7), 200);
  const std::int32_t int32Max = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(reduce3<std::int32_t>(DataType::I32, ReduceOp::Sum, int32Max, 1, 0), -2147483648.0);
  EXPECT_EQ(reduce3<std::int32_t>(DataType::I32, ReduceOp::Prod, 65536, 65536, 3), 0);
  EXPECT_EQ(reduce3<std::uint32_t>(DataType::U32, ReduceOp::Max, 4000000000u, 1, 2), 4000000000.0);
  EXPECT_EQ(reduce3<std::uint32_t>(DataType::U32, ReduceOp::Sum, 4294967295u, 2, 0), 1);
  EXPECT_EQ(reduce3<std::int64_t>(DataType::I64, ReduceOp::Min, -3, std::numeric_limits<std::int64_t>::min(), 4),
            -9223372036854775808.0);
  EXPECT_EQ(reduce3<std::int64_t>(DataType::I64, ReduceOp::Prod, 1ll << 62, 4, 1), 0);
  std::uint64_t big[3] = {~0ull, ~0ull, 5};
  std::uint64_t out = 0;
  hostReduce(DataType::U64, ReduceOp::Prod, &out, {&big[0], &big[1], &big[2]}, 1, 3, true);
  EXPECT_EQ(out, 5u);  // (-1) * (-1) * 5 mod 2^64
  hostReduce(DataType::U64, ReduceOp::Sum, &out, {&big[0], &big[2]}, 1, 2, true);
  EXPECT_EQ(out, 4u);
}

TEST(HostReduce, FloatsEveryOp) {
  EXPECT_EQ(reduce3<double>(DataType::F64, ReduceOp::Sum, 1.5, 2.25, -1), 2.75);
  EXPECT_EQ(reduce3<double>(DataType::F64, ReduceOp::Prod, 1.5, 2, -1), -3);
  EXPECT_EQ(reduce3<float>(DataType::F32, ReduceOp::Min, 1.5f, -2, 7), -2);
  EXPECT_EQ(reduce3<float>(DataType::F32, ReduceOp::Max, 1.5f, -2, 7), 7);
  EXPECT_EQ(reduce3<float>(DataType::F32, ReduceOp::Avg, 1, 2, 6), 3);
  EXPECT_EQ(reduce3<float>(DataType::F32, ReduceOp::Avg, 1, 2, 6, false), 9);  // before the finish: a sum
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(reduce3<float>(DataType::F32, ReduceOp::Min, nan, 4, 5), 4);  // fminf ignores NaN
  EXPECT_TRUE(std::isnan(reduce3<float>(DataType::F32, ReduceOp::Sum, nan, 4, 5)));
  const auto h = [](float value) { return floatToHalf(value); };
  const auto b = [](float value) { return floatToBf16(value); };
  // Accumulated in float and rounded once: 2048 + 1 + 1 is 2050 in f16 (per-step rounding would give 2048).
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::F16, ReduceOp::Sum, h(2048), h(1), h(1)), 2050);
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::F16, ReduceOp::Avg, h(1), h(2), h(6)), 3);
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::F16, ReduceOp::Prod, h(300), h(300), h(1)), INFINITY);
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::F16, ReduceOp::Max, h(-1), h(-0.5f), h(-3)), -0.5);
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::BF16, ReduceOp::Sum, b(256), b(1), b(1)), 258);
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::BF16, ReduceOp::Min, b(-1), b(-0.5f), b(-3)), -3);
  EXPECT_EQ(reduce3<std::uint16_t>(DataType::BF16, ReduceOp::Avg, b(3), b(3), b(3)), 3);
}

TEST(HostReduce, InPlaceManyElementsAndErrors) {
  std::vector<float> acc = {1, 2, 3, 4};
  const std::vector<float> peer = {10, 20, 30, 40};
  hostReduce(DataType::F32, ReduceOp::Sum, acc.data(), {acc.data(), peer.data()}, 4, 2, false);
  EXPECT_EQ(acc, (std::vector<float>{11, 22, 33, 44}));
  std::int32_t x = 0;
  EXPECT_THROW(hostReduce(DataType::I32, ReduceOp::Avg, &x, {&x}, 1, 1, true), Error);
  EXPECT_THROW(hostReduce(DataType::I32, ReduceOp::Sum, &x, {}, 1, 1, true), Error);
}

// Long reductions go a block at a time: every element must be what reducing it alone gives, for every type and op,
// across block edges, from unaligned addresses, and in place (dst one of the sources).
TEST(HostReduce, LongReductionsEqualElementByElement) {
  const std::size_t count = 1301;
  std::mt19937 random(7);
  for (DataType type : kEveryDataType) {
    for (ReduceOp op : kEveryReduceOp) {
      if (!reduceOpSupported(type, op)) continue;
      const std::size_t size = dataTypeSize(type);
      std::vector<Bytes> sources(3, Bytes(count * size + 1));
      for (Bytes& source : sources) {
        for (std::size_t i = 0; i < count; ++i)
          storeElement(type, source.data() + 1, i, static_cast<double>(random() % 17) - 7.75);
      }
      const std::vector<const void*> srcs = {sources[0].data() + 1, sources[1].data() + 1, sources[2].data() + 1};
      Bytes want(count * size);
      for (std::size_t i = 0; i < count; ++i) {
        hostReduce(
            type, op, want.data() + i * size,
            {sources[0].data() + 1 + i * size, sources[1].data() + 1 + i * size, sources[2].data() + 1 + i * size}, 1,
            3, true);
      }
      Bytes got(count * size + 1);
      hostReduce(type, op, got.data() + 1, srcs, count, 3, true);
      EXPECT_EQ(Bytes(got.begin() + 1, got.end()), want) << dataTypeName(type) << " " << reduceOpName(op);
      hostReduce(type, op, sources[1].data() + 1, srcs, count, 3, true);
      EXPECT_EQ(Bytes(sources[1].begin() + 1, sources[1].end()), want)
          << dataTypeName(type) << " " << reduceOpName(op) << " in place";
    }
  }
}

Bytes int32s(const std::vector<std::int32_t>& values) {
  Bytes bytes(values.size() * 4);
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());  // an empty vector's data() may be null
  return bytes;
}

TEST(HostReduceReference, EveryCollective) {
  // Three ranks; rank r's element i is 10 r + i.
  const auto sends = [](std::size_t elements) {
    std::vector<Bytes> data;
    for (std::int32_t r = 0; r < 3; ++r) {
      std::vector<std::int32_t> values;
      for (std::size_t i = 0; i < elements; ++i) values.push_back(10 * r + static_cast<std::int32_t>(i));
      data.push_back(int32s(values));
    }
    return data;
  };
  const auto ref = [&](Collective c, ReduceOp op, std::size_t count, std::size_t sendElements, int root = 0) {
    return hostReduceReference(c, DataType::I32, op, 3, count, root, sends(sendElements));
  };
  EXPECT_EQ(ref(Collective::AllReduce, ReduceOp::Sum, 2, 2)[1], int32s({30, 33}));
  EXPECT_EQ(ref(Collective::AllReduce, ReduceOp::Max, 2, 2)[2], int32s({20, 21}));
  const auto reduced = ref(Collective::Reduce, ReduceOp::Min, 2, 2, 2);
  EXPECT_TRUE(reduced[0].empty());
  EXPECT_EQ(reduced[2], int32s({0, 1}));
  EXPECT_EQ(ref(Collective::Broadcast, ReduceOp::Sum, 2, 2, 1)[0], int32s({10, 11}));
  EXPECT_EQ(ref(Collective::AllGather, ReduceOp::Sum, 2, 2)[0], int32s({0, 1, 10, 11, 20, 21}));
  EXPECT_EQ(ref(Collective::ReduceScatter, ReduceOp::Sum, 2, 6)[1], int32s({2 + 12 + 22, 3 + 13 + 23}));
  EXPECT_EQ(ref(Collective::AllToAll, ReduceOp::Sum, 2, 6)[1], int32s({2, 3, 12, 13, 22, 23}));
  EXPECT_EQ(ref(Collective::SendRecv, ReduceOp::Sum, 2, 2)[0], int32s({20, 21}));
  EXPECT_EQ(ref(Collective::AllReduce, ReduceOp::Sum, 0, 0)[0], Bytes{});
  EXPECT_THROW(ref(Collective::ReduceScatter, ReduceOp::Sum, 2, 5), Error);  // send holds 3 * 2
  EXPECT_THROW(ref(Collective::Broadcast, ReduceOp::Sum, 2, 2, 3), Error);
  EXPECT_THROW(ref(Collective::AllReduce, ReduceOp::Avg, 2, 2), Error);
  // Floats: computed in double, rounded once.
  std::vector<Bytes> halves(3, Bytes(2));
  for (auto& bytes : halves) storeElement(DataType::F16, bytes.data(), 0, 1.0 / 3.0);
  const auto avg = hostReduceReference(Collective::AllReduce, DataType::F16, ReduceOp::Avg, 3, 1, 0, halves);
  EXPECT_EQ(loadElement(DataType::F16, avg[0].data(), 0), loadElement(DataType::F16, halves[0].data(), 0));
}

// The reference reduces whole ranges typed; the closed form it implements, element by element through
// loadElement / storeElement (floating point in double, rounded once) and hostReduce (integers), must give
// the same bytes for every reducing collective, type, op, rank count and size.
TEST(HostReduceReference, MatchesTheClosedFormElementByElement) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (const Collective collective : {Collective::AllReduce, Collective::Reduce, Collective::ReduceScatter}) {
    for (const DataType type : kEveryDataType) {
      for (const ReduceOp op : kEveryReduceOp) {
        if (!reduceOpSupported(type, op)) continue;
        for (const int n : {1, 2, 3, 4, 8}) {
          for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{37}}) {
            const int root = n - 1;
            const std::size_t size = dataTypeSize(type);
            std::vector<Bytes> sends;
            for (int r = 0; r < n; ++r) {
              Bytes bytes(sendElementsOf(collective, n, count, r, root) * size);
              for (std::size_t i = 0; i < bytes.size() / size; ++i) {
                if (isFloatingPoint(type)) {
                  storeElement(type, bytes.data(), i, std::ldexp(static_cast<double>(rng() % 4001) - 2000.0, -10));
                } else {
                  const std::uint64_t word = rng();
                  std::memcpy(bytes.data() + i * size, &word, size);
                }
              }
              sends.push_back(bytes);
            }
            const std::vector<Bytes> got = hostReduceReference(collective, type, op, n, count, root, sends);
            for (int r = 0; r < n; ++r) {
              const std::size_t elements = recvElementsOf(collective, n, count, r, root);
              const std::size_t offset =
                  collective == Collective::ReduceScatter ? static_cast<std::size_t>(r) * count : 0;
              Bytes want(elements * size);
              for (std::size_t i = 0; i < elements; ++i) {
                if (isFloatingPoint(type)) {
                  double acc = loadElement(type, sends[0].data(), offset + i);
                  for (int q = 1; q < n; ++q) {
                    const double x = loadElement(type, sends[static_cast<std::size_t>(q)].data(), offset + i);
                    acc = op == ReduceOp::Prod  ? acc * x
                          : op == ReduceOp::Min ? std::fmin(acc, x)
                          : op == ReduceOp::Max ? std::fmax(acc, x)
                                                : acc + x;
                  }
                  if (op == ReduceOp::Avg) acc /= n;
                  storeElement(type, want.data(), i, acc);
                } else {
                  std::vector<const void*> srcs;
                  for (const Bytes& send : sends) srcs.push_back(send.data() + (offset + i) * size);
                  hostReduce(type, op, want.data() + i * size, srcs, 1, n, true);
                }
              }
              ASSERT_EQ(got[static_cast<std::size_t>(r)], want)
                  << collectiveName(collective) << " " << dataTypeName(type) << " " << reduceOpName(op) << " ranks "
                  << n << " count " << count << " rank " << r;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(Tolerance, ExactWhereOrderCannotMatter) {
  for (DataType type : {DataType::I32, DataType::U8, DataType::I64}) {
    EXPECT_TRUE(tolerance(type, ReduceOp::Sum, 8).exact());
    EXPECT_TRUE(tolerance(type, ReduceOp::Prod, 8).exact());
  }
  for (DataType type : {DataType::F16, DataType::F32}) {
    EXPECT_TRUE(tolerance(type, ReduceOp::Min, 8).exact());
    EXPECT_TRUE(tolerance(type, ReduceOp::Max, 8).exact());
  }
  EXPECT_FALSE(tolerance(DataType::F32, ReduceOp::Sum, 2).exact());
  EXPECT_GT(tolerance(DataType::F16, ReduceOp::Sum, 8).absolute, tolerance(DataType::F16, ReduceOp::Sum, 2).absolute);
  EXPECT_GT(tolerance(DataType::BF16, ReduceOp::Sum, 4).absolute, tolerance(DataType::F16, ReduceOp::Sum, 4).absolute);
  EXPECT_GT(tolerance(DataType::F32, ReduceOp::Sum, 4, 100).absolute,
            tolerance(DataType::F32, ReduceOp::Sum, 4).absolute);
  EXPECT_EQ(tolerance(DataType::F64, ReduceOp::Prod, 4).absolute, 0);
}

TEST(Tolerance, FindMismatch) {
  const auto floats = [](std::vector<float> values) {
    Bytes bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tolerance tol{0.01, 0};
  EXPECT_EQ(findMismatch(DataType::F32, tol, floats({1, 2, inf, nan}), floats({1.005f, 2, inf, nan})), std::nullopt);
  EXPECT_EQ(*findMismatch(DataType::F32, tol, floats({1, 2}), floats({1, 2.5f})), "element 1: expected 2, got 2.5");
  EXPECT_TRUE(findMismatch(DataType::F32, tol, floats({inf}), floats({-inf})));
  EXPECT_TRUE(findMismatch(DataType::F32, tol, floats({1e30f}), floats({inf})));
  EXPECT_TRUE(findMismatch(DataType::F32, tol, floats({1}), floats({nan})));
  EXPECT_TRUE(findMismatch(DataType::F32, tol, floats({1}), floats({1, 2})));
  EXPECT_TRUE(findMismatch(DataType::I32, tolerance(DataType::I32, ReduceOp::Sum, 2), int32s({5}), int32s({6})));
}

}  // namespace
}  // namespace peerlink::coll
