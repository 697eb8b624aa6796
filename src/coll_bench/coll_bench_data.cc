#include "coll_bench/coll_bench_data.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace peerlink::coll {
namespace {

constexpr std::size_t kPeriod = 1021;

const std::array<std::uint8_t, kPeriod>& patternTable() {
  static const std::array<std::uint8_t, kPeriod> table = [] {
    std::array<std::uint8_t, kPeriod> values{};
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (std::uint8_t& value : values) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
      value = static_cast<std::uint8_t>((state >> 33) % 15);
    }
    return values;
  }();
  return table;
}

// Rank `rank`'s input at element `index` of its send data.
double inputValue(ReduceOp op, int rank, std::size_t index) {
  const std::uint8_t entry = patternTable()[(index + 37 * static_cast<std::size_t>(rank)) % kPeriod];
  if (op == ReduceOp::Prod) return entry == 0 ? 2.0 : 1.0;
  return 1.0 + entry;  // 1..15
}

bool isInteger(DataType type) {
  return !isFloatingPoint(type);
}

// An integer result as the GPU holds it: wrapped to the type's width.
double wrapInteger(DataType type, std::int64_t value) {
  const auto bits = static_cast<std::uint64_t>(value);
  switch (type) {
    case DataType::I8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(bits));
    case DataType::U8: return static_cast<std::uint8_t>(bits);
    case DataType::I32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
    case DataType::U32: return static_cast<std::uint32_t>(bits);
    case DataType::I64: return static_cast<double>(value);
    case DataType::U64: return static_cast<double>(bits);
    default: return static_cast<double>(value);
  }
}

double reduced(const CheckSpec& spec, std::size_t index) {
  double result = inputValue(spec.op, 0, index);
  std::int64_t integer = static_cast<std::int64_t>(result);
  for (int rank = 1; rank < spec.ranks; ++rank) {
    const double value = inputValue(spec.op, rank, index);
    const auto asInteger = static_cast<std::int64_t>(value);
    switch (spec.op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg:
        result += value;
        integer += asInteger;
        break;
      case ReduceOp::Prod:
        result *= value;
        integer *= asInteger;
        break;
      case ReduceOp::Min:
        result = std::fmin(result, value);
        integer = std::min(integer, asInteger);
        break;
      case ReduceOp::Max:
        result = std::fmax(result, value);
        integer = std::max(integer, asInteger);
        break;
    }
  }
  if (spec.op == ReduceOp::Avg) return result / spec.ranks;
  return isInteger(spec.type) ? wrapInteger(spec.type, integer) : result;
}

// Relative tolerance: only avg can round (it divides, and NCCL premultiplies by 1/n); every other result
// of these inputs is a small integer, exact in every type.
double tolerance(DataType type, ReduceOp op) {
  if (op != ReduceOp::Avg) return 0;
  switch (type) {
    case DataType::F64: return 1e-12;
    case DataType::F32: return 1e-6;
    case DataType::F16: return 5e-3;
    case DataType::BF16: return 3e-2;
    default: return 0;
  }
}

std::uint16_t floatToHalf(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  if ((bits & 0x7fffffffu) == 0) return sign;
  if ((bits & 0x7f800000u) == 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN/inf
  const int exponent = static_cast<int>((bits >> 23) & 0xffu) - 127 + 15;
  if (exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) return sign;  // below half's normal range: never generated here
  std::uint32_t mantissa = (bits & 0x7fffffu) >> 13;
  const std::uint32_t rest = bits & 0x1fffu;
  std::uint32_t result = (static_cast<std::uint32_t>(exponent) << 10) | mantissa;
  if (rest > 0x1000u || (rest == 0x1000u && (mantissa & 1u) != 0)) ++result;  // round to nearest even
  return static_cast<std::uint16_t>(sign | result);
}

float halfToFloat(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  const std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  std::uint32_t bits = sign | (mantissa << 13);
  bits |= exponent == 31 ? 0x7f800000u : (exponent - 15 + 127) << 23;
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

template <typename T>
T load(const void* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

template <typename T>
void store(void* bytes, T value) {
  std::memcpy(bytes, &value, sizeof value);
}

}  // namespace

double decodeElement(DataType type, const void* bytes) {
  switch (type) {
    case DataType::F64: return load<double>(bytes);
    case DataType::F32: return load<float>(bytes);
    case DataType::F16: return halfToFloat(load<std::uint16_t>(bytes));
    case DataType::BF16: {
      const std::uint32_t bits = static_cast<std::uint32_t>(load<std::uint16_t>(bytes)) << 16;
      return load<float>(&bits);
    }
    case DataType::I32: return load<std::int32_t>(bytes);
    case DataType::U32: return load<std::uint32_t>(bytes);
    case DataType::I64: return static_cast<double>(load<std::int64_t>(bytes));
    case DataType::U64: return static_cast<double>(load<std::uint64_t>(bytes));
    case DataType::I8: return load<std::int8_t>(bytes);
    case DataType::U8: return load<std::uint8_t>(bytes);
  }
  return 0;
}

void encodeElement(DataType type, double value, void* bytes) {
  switch (type) {
    case DataType::F64: store(bytes, value); break;
    case DataType::F32: store(bytes, static_cast<float>(value)); break;
    case DataType::F16: store(bytes, floatToHalf(static_cast<float>(value))); break;
    case DataType::BF16: {
      const auto asFloat = static_cast<float>(value);  // small integers: exact, the low half is zero
      store(bytes, static_cast<std::uint16_t>(load<std::uint32_t>(&asFloat) >> 16));
      break;
    }
    case DataType::I32: store(bytes, static_cast<std::int32_t>(value)); break;
    case DataType::U32: store(bytes, static_cast<std::uint32_t>(value)); break;
    case DataType::I64: store(bytes, static_cast<std::int64_t>(value)); break;
    case DataType::U64: store(bytes, static_cast<std::uint64_t>(value)); break;
    case DataType::I8: store(bytes, static_cast<std::int8_t>(value)); break;
    case DataType::U8: store(bytes, static_cast<std::uint8_t>(value)); break;
  }
}

void fillInput(const CheckSpec& spec, int rank, void* out) {
  // Inputs repeat every kPeriod elements: encode one period, then copy it.
  const std::size_t size = dataTypeSize(spec.type);
  auto* bytes = static_cast<unsigned char*>(out);
  const std::size_t count = spec.sizing.sendCount;
  const std::size_t first = std::min(count, kPeriod);
  for (std::size_t i = 0; i < first; ++i) encodeElement(spec.type, inputValue(spec.op, rank, i), bytes + i * size);
  for (std::size_t done = first; done < count;) {
    const std::size_t chunk = std::min(done, count - done);
    std::memcpy(bytes + done * size, bytes, chunk * size);
    done += chunk;
  }
}

std::size_t checkedElements(const CheckSpec& spec, int rank) {
  if (spec.collective == Collective::Reduce && rank != spec.root) return 0;
  return spec.sizing.recvCount;
}

double expectedValue(const CheckSpec& spec, int rank, std::size_t index) {
  const std::size_t count = spec.sizing.count;
  switch (spec.collective) {
    case Collective::AllReduce:
    case Collective::Reduce: return reduced(spec, index);
    case Collective::Broadcast: return inputValue(spec.op, spec.root, index);
    case Collective::AllGather: return inputValue(spec.op, static_cast<int>(index / count), index % count);
    case Collective::ReduceScatter: return reduced(spec, static_cast<std::size_t>(rank) * count + index);
    case Collective::AllToAll:
      return inputValue(spec.op, static_cast<int>(index / count),
                        static_cast<std::size_t>(rank) * count + index % count);
    case Collective::SendRecv: return inputValue(spec.op, (rank + spec.ranks - 1) % spec.ranks, index);
  }
  return 0;
}

std::int64_t countWrong(const CheckSpec& spec, int rank, const void* output) {
  // The expected values repeat every kPeriod elements within a segment (one per source rank for
  // all-gather and all-to-all, else the whole buffer): compare against one period per segment.
  const std::size_t size = dataTypeSize(spec.type);
  const bool reducing = spec.collective == Collective::AllReduce || spec.collective == Collective::Reduce ||
                        spec.collective == Collective::ReduceScatter;
  const double tol = reducing ? tolerance(spec.type, spec.op) : 0;
  const auto* bytes = static_cast<const unsigned char*>(output);
  const std::size_t elements = checkedElements(spec, rank);
  const bool segmented = spec.collective == Collective::AllGather || spec.collective == Collective::AllToAll;
  const std::size_t segmentLength = segmented ? spec.sizing.count : elements;
  std::int64_t wrong = 0;
  std::vector<double> period(kPeriod);
  for (std::size_t begin = 0; begin < elements && segmentLength > 0; begin += segmentLength) {
    const std::size_t length = std::min(segmentLength, elements - begin);
    for (std::size_t k = 0; k < std::min(length, kPeriod); ++k) period[k] = expectedValue(spec, rank, begin + k);
    std::size_t k = 0;
    for (std::size_t i = 0; i < length; ++i) {
      const double got = decodeElement(spec.type, bytes + (begin + i) * size);
      const double want = period[k];
      if (++k == kPeriod) k = 0;
      const bool good = tol == 0 ? got == want : std::fabs(got - want) <= tol * std::fmax(1.0, std::fabs(want));
      if (!good) ++wrong;
    }
  }
  return wrong;
}

}  // namespace peerlink::coll
