// Element-wise reduction on the host for every DataType x ReduceOp, and the closed-form result of every
// collective, for the host executor and for the GPU tests that check kernels against it. Arithmetic is
// what the GPU kernels do: f16 and bf16 are stored as uint16_t and reduced in float, rounded back to
// nearest-even once per Reduce; f32 in float, f64 in double; integer sum and prod wrap modulo 2^bits;
// min and max of floats ignore a NaN operand unless both are NaN (CUDA's fminf/fmaxf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// IEEE binary16 <-> float. Narrowing rounds to nearest-even, overflows to inf, keeps subnormals, and
/// turns NaN into a quiet NaN of the same sign.
float halfToFloat(std::uint16_t bits) noexcept;
std::uint16_t floatToHalf(float value) noexcept;
/// bfloat16 (the upper half of a float) <-> float, with the same rounding rules.
float bf16ToFloat(std::uint16_t bits) noexcept;
std::uint16_t floatToBf16(float value) noexcept;

/// dst[i] = op(srcs[0][i], srcs[1][i], ...) for i < count, left to right. Avg reduces as Sum; with
/// `finish` it divides by `nranks` before rounding to the type (plan.hpp, Transfer::finish). dst may be
/// one of srcs (the same elements) but must not partly overlap one. Throws Error(InvalidUsage) for avg on
/// an integer type or no sources.
void hostReduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
                int nranks, bool finish);

/// Element `index` of `data` as a double (exact for every type but 64-bit integers beyond 2^53), and
/// the value rounded to the type stored there (integers: converted, wrapping modulo 2^bits).
double loadElement(DataType type, const void* data, std::size_t index) noexcept;
void storeElement(DataType type, void* data, std::size_t index, double value) noexcept;

using Bytes = std::vector<std::byte>;

/// The closed-form result of `collective` with the API's `count` (communicator.hpp) over nranks ranks:
/// sendData[r] is rank r's send buffer (collective_counts.hpp gives its size; ignored where the API
/// ignores it); returns each rank's recv buffer (empty where the API ignores it: reduce off the root).
/// Send/recv is the ring shift (rank r receives rank r - 1's buffer). Floating reductions are computed in
/// double in rank order and rounded once to the type; integers wrap exactly as hostReduce does. `op` is
/// ignored by collectives that do not reduce. Throws Error(InvalidUsage) for a send buffer of the wrong
/// size, a root out of range or an op the type does not support.
std::vector<Bytes> hostReduceReference(Collective collective, DataType type, ReduceOp op, int nranks, std::size_t count,
                                       int root, const std::vector<Bytes>& sendData);

/// How far an algorithm's result may be from hostReduceReference's: |actual - expected| <= absolute +
/// relative * |expected| per element. Algorithms reduce in different orders and round partial results
/// at different points, so floating sum, avg and prod are not bit-exact across algorithms (nor against a
/// double-precision closed form). Integers, min, max and every copy-only collective are exact (0, 0).
struct Tolerance {
  double absolute = 0;
  double relative = 0;
  bool exact() const noexcept { return absolute == 0 && relative == 0; }
};

/// The bound for reducing `nranks` values of at most `inputMagnitude` in absolute value with `op` in
/// `type`. With unit roundoff u (2^-53 f64, 2^-24 f32, 2^-11 f16, 2^-8 bf16): sum allows n(n+1) u M
/// absolute and 2u relative (n-1 roundings of partial sums of at most nM each, plus the final rounding
/// of both sides); avg the same divided by n, plus one rounding; prod (n+2) u relative and no absolute
/// term, so choose inputs that stay clear of underflow. Exact for integer types, min and max.
Tolerance tolerance(DataType type, ReduceOp op, int nranks, double inputMagnitude = 1.0);

/// The first element of `actual` that differs from `expected` beyond `tol` (NaN matches NaN, inf only
/// the same inf), described as "element 17: expected 3.5, got 3.25"; nullopt when all match. Sizes must
/// agree (a size difference is reported too).
std::optional<std::string> findMismatch(DataType type, const Tolerance& tol, const Bytes& expected,
                                        const Bytes& actual);

}  // namespace peerlink::coll
