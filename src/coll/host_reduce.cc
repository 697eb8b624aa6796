// Host reduction and the closed-form reference (host_reduce.hpp).
#include "coll/host_reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

std::uint32_t floatBits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bitsFloat(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// `mantissa` >> shift, rounded to nearest-even on the bits shifted out.
std::uint32_t shiftRoundEven(std::uint32_t mantissa, std::uint32_t shift) {
  const std::uint32_t kept = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
}

// Storage of the types that are not their own arithmetic type.
struct Half {
  std::uint16_t bits;
};
struct BFloat {
  std::uint16_t bits;
};

// Per stored type: the accumulator and the conversions to and from it.
template <typename T, bool = std::is_floating_point_v<T>>
struct AccumulatorOf {
  using Type = T;
};
template <typename T>
struct AccumulatorOf<T, false> {
  using Type = std::make_unsigned_t<T>;
};

template <typename T>
struct Traits {
  using Acc = typename AccumulatorOf<T>::Type;
  static Acc load(T value) { return static_cast<Acc>(value); }
  static T store(Acc value) { return static_cast<T>(value); }
};
template <>
struct Traits<Half> {
  using Acc = float;
  static float load(Half value) { return halfToFloat(value.bits); }
  static Half store(float value) { return {floatToHalf(value)}; }
};
template <>
struct Traits<BFloat> {
  using Acc = float;
  static float load(BFloat value) { return bf16ToFloat(value.bits); }
  static BFloat store(float value) { return {floatToBf16(value)}; }
};

template <typename T>
T readAt(const void* data, std::size_t index) {
  T value;
  std::memcpy(&value, static_cast<const std::byte*>(data) + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void writeAt(void* data, std::size_t index, T value) {
  std::memcpy(static_cast<std::byte*>(data) + index * sizeof(T), &value, sizeof(T));
}

// Integers live in their unsigned type (Traits::Acc) so sum and prod wrap without undefined behaviour;
// min and max compare as the signed type `T`. Types narrower than int widen first, or uint8 * uint8 would
// be promoted to (signed) int.
template <typename T, typename Acc>
Acc combine(ReduceOp op, Acc a, Acc b) {
  if constexpr (std::is_floating_point_v<Acc>) {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: return a + b;
      case ReduceOp::Prod: return a * b;
      case ReduceOp::Min: return std::fmin(a, b);
      case ReduceOp::Max: return std::fmax(a, b);
    }
    return a;
  } else {
    using Wide = std::conditional_t<(sizeof(Acc) < sizeof(unsigned)), unsigned, Acc>;
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: return static_cast<Acc>(static_cast<Wide>(a) + static_cast<Wide>(b));
      case ReduceOp::Prod: return static_cast<Acc>(static_cast<Wide>(a) * static_cast<Wide>(b));
      case ReduceOp::Min: return static_cast<T>(b) < static_cast<T>(a) ? b : a;
      case ReduceOp::Max: return static_cast<T>(a) < static_cast<T>(b) ? b : a;
    }
    return a;
  }
}

// A block of elements at a time, the op fixed at compile time, so that the loops vectorize: element by element the
// same arithmetic as one loop over the elements (left to right in the accumulator, rounded once when stored). Every
// source's block is read before the block of dst is written, so dst may be one of the sources.
template <typename T, ReduceOp Op>
void reduceBlocks(void* dst, const std::vector<const void*>& srcs, std::size_t count, int nranks, bool finish) {
  using Acc = typename Traits<T>::Acc;
  constexpr std::size_t kBlock = 512;
  Acc acc[kBlock];
  for (std::size_t base = 0; base < count; base += kBlock) {
    const std::size_t n = std::min(kBlock, count - base);
    const std::byte* first = static_cast<const std::byte*>(srcs[0]) + base * sizeof(T);
    for (std::size_t i = 0; i < n; ++i) acc[i] = Traits<T>::load(readAt<T>(first, i));
    for (std::size_t k = 1; k < srcs.size(); ++k) {
      const std::byte* src = static_cast<const std::byte*>(srcs[k]) + base * sizeof(T);
      for (std::size_t i = 0; i < n; ++i) acc[i] = combine<T>(Op, acc[i], Traits<T>::load(readAt<T>(src, i)));
    }
    if constexpr (std::is_floating_point_v<Acc> && Op == ReduceOp::Avg) {
      if (finish) {
        for (std::size_t i = 0; i < n; ++i) acc[i] /= static_cast<Acc>(nranks);
      }
    }
    std::byte* out = static_cast<std::byte*>(dst) + base * sizeof(T);
    for (std::size_t i = 0; i < n; ++i) writeAt<T>(out, i, Traits<T>::store(acc[i]));
  }
}

template <typename T>
void reduceTyped(ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count, int nranks,
                 bool finish) {
  switch (op) {
    case ReduceOp::Sum: return reduceBlocks<T, ReduceOp::Sum>(dst, srcs, count, nranks, finish);
    case ReduceOp::Prod: return reduceBlocks<T, ReduceOp::Prod>(dst, srcs, count, nranks, finish);
    case ReduceOp::Min: return reduceBlocks<T, ReduceOp::Min>(dst, srcs, count, nranks, finish);
    case ReduceOp::Max: return reduceBlocks<T, ReduceOp::Max>(dst, srcs, count, nranks, finish);
    case ReduceOp::Avg: return reduceBlocks<T, ReduceOp::Avg>(dst, srcs, count, nranks, finish);
  }
}

// Calls f with a value of the stored type of `type` (its value is irrelevant; only its type is used).
template <typename F>
decltype(auto) withType(DataType type, F&& f) {
  switch (type) {
    case DataType::F64: return f(double{});
    case DataType::F32: return f(float{});
    case DataType::F16: return f(Half{});
    case DataType::BF16: return f(BFloat{});
    case DataType::I32: return f(std::int32_t{});
    case DataType::U32: return f(std::uint32_t{});
    case DataType::I64: return f(std::int64_t{});
    case DataType::U64: return f(std::uint64_t{});
    case DataType::I8: return f(std::int8_t{});
    case DataType::U8: return f(std::uint8_t{});
  }
  return f(std::uint8_t{});
}

void requireSupported(DataType type, ReduceOp op) {
  if (!reduceOpSupported(type, op)) {
    throw Error(ErrorCode::InvalidUsage, std::string(reduceOpName(op)) + " is not defined for " + dataTypeName(type) +
                                             " (avg is for floating-point types only)");
  }
}

double unitRoundoff(DataType type) {
  switch (type) {
    case DataType::F64: return std::ldexp(1.0, -53);
    case DataType::F32: return std::ldexp(1.0, -24);
    case DataType::F16: return std::ldexp(1.0, -11);
    case DataType::BF16: return std::ldexp(1.0, -8);
    default: return 0;
  }
}

// The closed form's reduction of `count` elements of every source into dst, in rank order: floating-point
// types in double (rounded once, to the stored type, at the end), integers as hostReduce combines them.
template <typename T>
void referenceTyped(ReduceOp op, std::byte* dst, const std::vector<const std::byte*>& srcs, std::size_t count,
                    int nranks) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat> || std::is_floating_point_v<T>) {
    const auto load = [](const std::byte* data, std::size_t index) {
      return static_cast<double>(Traits<T>::load(readAt<T>(data, index)));
    };
    for (std::size_t i = 0; i < count; ++i) {
      double acc = load(srcs[0], i);
      for (std::size_t q = 1; q < srcs.size(); ++q) {
        const double x = load(srcs[q], i);
        acc = op == ReduceOp::Prod  ? acc * x
              : op == ReduceOp::Min ? std::fmin(acc, x)
              : op == ReduceOp::Max ? std::fmax(acc, x)
                                    : acc + x;
      }
      if (op == ReduceOp::Avg) acc /= static_cast<double>(nranks);
      if constexpr (std::is_floating_point_v<T>) {
        writeAt<T>(dst, i, static_cast<T>(acc));
      } else {
        writeAt<T>(dst, i, Traits<T>::store(static_cast<float>(acc)));
      }
    }
  } else {
    std::vector<const void*> sources(srcs.begin(), srcs.end());
    reduceTyped<T>(op, dst, sources, count, nranks, true);
  }
}

}  // namespace

float halfToFloat(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal: exact in float
    return sign != 0 ? -magnitude : magnitude;
  }
  return bitsFloat(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

std::uint16_t floatToHalf(float value) noexcept {
  const std::uint32_t bits = floatBits(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN: quiet, keeping the top payload bits
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  const std::uint32_t exponent = magnitude >> 23;
  if (magnitude >= 0x38800000u) {  // normal in half (>= 2^-14); a carry out of the mantissa bumps the exponent
    const std::uint32_t rebased = ((exponent - 127 + 15) << 23) | (magnitude & 0x7fffffu);
    return static_cast<std::uint16_t>(sign | shiftRoundEven(rebased, 13));
  }
  // Subnormal in half: the value in units of 2^-24 is the 24-bit significand shifted right by 126 - exponent.
  const std::uint32_t shift = 126 - exponent;
  if (shift > 24) return sign;  // below 2^-25: rounds to zero
  return static_cast<std::uint16_t>(sign | shiftRoundEven((magnitude & 0x7fffffu) | 0x800000u, shift));
}

float bf16ToFloat(std::uint16_t bits) noexcept {
  return bitsFloat(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t floatToBf16(float value) noexcept {
  const std::uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<std::uint16_t>(shiftRoundEven(bits, 16) & 0xffffu);
}

void hostReduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
                int nranks, bool finish) {
  requireSupported(type, op);
  if (srcs.empty()) throw Error(ErrorCode::InvalidUsage, "hostReduce needs at least one source");
  withType(type, [&](auto tag) { reduceTyped<decltype(tag)>(op, dst, srcs, count, nranks, finish); });
}

double loadElement(DataType type, const void* data, std::size_t index) noexcept {
  return withType(type, [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat>) {
      return static_cast<double>(Traits<T>::load(readAt<T>(data, index)));
    } else {
      return static_cast<double>(readAt<T>(data, index));
    }
  });
}

void storeElement(DataType type, void* data, std::size_t index, double value) noexcept {
  withType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat>) {
      writeAt<T>(data, index, Traits<T>::store(static_cast<float>(value)));
    } else if constexpr (std::is_floating_point_v<T>) {
      writeAt<T>(data, index, static_cast<T>(value));
    } else {
      // Reduced modulo 2^64 first: converting a double outside the target's range is undefined.
      constexpr double kTwo64 = 18446744073709551616.0;
      double wrapped = std::isfinite(value) ? std::fmod(std::trunc(value), kTwo64) : 0.0;
      if (wrapped < 0) wrapped += kTwo64;
      const auto wide = wrapped >= kTwo64 ? std::uint64_t{0} : static_cast<std::uint64_t>(wrapped);
      writeAt<T>(data, index, static_cast<T>(wide));
    }
  });
}

std::vector<Bytes> hostReduceReference(Collective collective, DataType type, ReduceOp op, int nranks, std::size_t count,
                                       int root, const std::vector<Bytes>& sendData) {
  const std::string what = std::string("hostReduceReference(") + collectiveName(collective) + "): ";
  if (nranks < 1 || sendData.size() != static_cast<std::size_t>(nranks)) {
    throw Error(ErrorCode::InvalidUsage, what + "needs one send buffer per rank");
  }
  if (hasRoot(collective) && (root < 0 || root >= nranks)) throw Error(ErrorCode::InvalidUsage, what + "bad root");
  if (reduces(collective)) requireSupported(type, op);
  const std::size_t size = dataTypeSize(type);
  const auto n = static_cast<std::size_t>(nranks);
  for (int r = 0; r < nranks; ++r) {
    const std::size_t want = sendElementsOf(collective, nranks, count, r, root) * size;
    if (sendData[static_cast<std::size_t>(r)].size() < want) {
      throw Error(ErrorCode::InvalidUsage, what + "rank " + std::to_string(r) + "'s send buffer has " +
                                               std::to_string(sendData[static_cast<std::size_t>(r)].size()) +
                                               " bytes, needs " + std::to_string(want));
    }
  }
  // out[i] = op over ranks of element srcIndex + i of every send buffer, for i < elements, as the closed form
  // defines it.
  const auto reduceInto = [&](Bytes& out, std::size_t srcIndex, std::size_t elements) {
    std::vector<const std::byte*> srcs;
    for (std::size_t q = 0; q < n; ++q) srcs.push_back(sendData[q].data() + srcIndex * size);
    withType(type, [&](auto tag) { referenceTyped<decltype(tag)>(op, out.data(), srcs, elements, nranks); });
  };
  const auto copyElements = [&](Bytes& dst, std::size_t dstIndex, const Bytes& src, std::size_t srcIndex,
                                std::size_t elements) {
    if (elements > 0) std::memcpy(dst.data() + dstIndex * size, src.data() + srcIndex * size, elements * size);
  };
  std::vector<Bytes> result(n);
  for (int r = 0; r < nranks; ++r) {
    Bytes& out = result[static_cast<std::size_t>(r)];
    out.assign(recvElementsOf(collective, nranks, count, r, root) * size, std::byte{0});
    const auto rank = static_cast<std::size_t>(r);
    switch (collective) {
      case Collective::AllReduce:
        if (r > 0) {  // every rank's output is rank 0's
          out = result[0];
          break;
        }
        [[fallthrough]];
      case Collective::Reduce:
        if (!out.empty()) reduceInto(out, 0, count);
        break;
      case Collective::ReduceScatter: reduceInto(out, rank * count, count); break;
      case Collective::Broadcast: copyElements(out, 0, sendData[static_cast<std::size_t>(root)], 0, count); break;
      case Collective::AllGather:
        for (std::size_t q = 0; q < n; ++q) copyElements(out, q * count, sendData[q], 0, count);
        break;
      case Collective::AllToAll:
        for (std::size_t q = 0; q < n; ++q) copyElements(out, q * count, sendData[q], rank * count, count);
        break;
      case Collective::SendRecv: copyElements(out, 0, sendData[(rank + n - 1) % n], 0, count); break;
    }
  }
  return result;
}

Tolerance tolerance(DataType type, ReduceOp op, int nranks, double inputMagnitude) {
  if (!isFloatingPoint(type) || op == ReduceOp::Min || op == ReduceOp::Max) return {};
  const double u = unitRoundoff(type);
  const double n = nranks > 0 ? nranks : 1;
  switch (op) {
    case ReduceOp::Sum: return {n * (n + 1) * u * inputMagnitude, 2 * u};
    case ReduceOp::Avg: return {(n + 1) * u * inputMagnitude, 3 * u};
    case ReduceOp::Prod: return {0, (n + 2) * u};
    default: return {};
  }
}

std::optional<std::string> findMismatch(DataType type, const Tolerance& tol, const Bytes& expected,
                                        const Bytes& actual) {
  if (expected.size() != actual.size()) {
    return "size: expected " + std::to_string(expected.size()) + " bytes, got " + std::to_string(actual.size());
  }
  const std::size_t size = dataTypeSize(type);
  for (std::size_t i = 0; i < expected.size() / size; ++i) {
    bool same = std::memcmp(expected.data() + i * size, actual.data() + i * size, size) == 0;
    double want = 0;
    double got = 0;
    if (!same) {
      want = loadElement(type, expected.data(), i);
      got = loadElement(type, actual.data(), i);
      if (isFloatingPoint(type)) {
        if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got)) {
          same = (std::isnan(want) && std::isnan(got)) || want == got;
        } else {
          same = std::fabs(got - want) <= tol.absolute + tol.relative * std::fabs(want);
        }
      }
    }
    if (!same) {
      std::ostringstream out;
      out.precision(std::numeric_limits<double>::max_digits10);
      out << "element " << i << ": expected " << want << ", got " << got;
      return out.str();
    }
  }
  return std::nullopt;
}

}  // namespace peerlink::coll
