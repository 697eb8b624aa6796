// The data `peerlink coll` checks collectives with (-c 1): rank-dependent inputs generated on the host, and
// the closed-form expected output of every rank, so any configuration (peerlink's or NCCL's) is checked
// against the same host reference. Pure CPU code.
//
// Inputs are small integers from a pseudo-random table of 1021 entries (a prime, so shifts by powers of
// two are caught), offset by rank: sums of up to 8 ranks stay exact in bf16, half and int8, products
// (inputs 1 or 2, mostly 1) stay exact in every floating-point type; integer results wrap as the GPU's do.
// Results must match exactly, except avg in floating point, compared with a relative tolerance (1e-6 for
// float, 5e-3 half, 3e-2 bfloat16).
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll_bench/coll_bench.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink::coll {

struct CheckSpec {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int ranks = 1;
  int root = 0;
  CollSizing sizing;
};

/// The byte every receive buffer is filled with before a checked run (NaN or -1 in every type).
constexpr unsigned char kPoisonByte = 0xFF;

/// Writes `rank`'s send data (sizing.sendCount elements of `type`) to `out`.
void fillInput(const CheckSpec& spec, int rank, void* out);

/// Elements of `rank`'s receive buffer the check reads: recvCount, or 0 off the root of reduce.
std::size_t checkedElements(const CheckSpec& spec, int rank);

/// Elements of `rank`'s output (checkedElements() of them at `output`) that differ from the reference.
std::int64_t countWrong(const CheckSpec& spec, int rank, const void* output);

/// The expected value of element `index` of `rank`'s receive buffer (tests; countWrong uses the same).
double expectedValue(const CheckSpec& spec, int rank, std::size_t index);

/// Element conversions (exposed for tests): `type`'s bytes at `bytes` to a double, and back.
double decodeElement(DataType type, const void* bytes);
void encodeElement(DataType type, double value, void* bytes);

}  // namespace peerlink::coll
