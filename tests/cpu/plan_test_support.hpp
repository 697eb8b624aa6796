// What the plan tests share (test_coll_plan.cc, test_coll_hierarchical_plan.cc, test_coll_staged_plan.cc): send
// data for a plan, and a plan run by the host executor compared with the closed form.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coll/host_executor.hpp"
#include "coll/host_reduce.hpp"
#include "coll/plan.hpp"

namespace peerlink::coll {

/// Send data whose reductions stay well inside every type's range where exactness is not the point: floats in
/// [-1, 1] for sums (magnitude 1), factors in [1 / productSpread, productSpread] with random sign for products;
/// integers any bit pattern (they wrap exactly). A product of n factors stays below productSpread^n.
inline std::vector<Bytes> makeSendData(const Plan& plan, ReduceOp op, std::uint32_t seed, double productSpread = 2.0) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> factor(1.0 / productSpread, productSpread);
  const std::size_t size = dataTypeSize(plan.type);
  std::vector<Bytes> data(static_cast<std::size_t>(plan.nranks));
  for (int r = 0; r < plan.nranks; ++r) {
    Bytes& bytes = data[static_cast<std::size_t>(r)];
    bytes.resize(sendElementsOf(plan.collective, plan.nranks, plan.count, r, plan.root) * size);
    for (std::size_t i = 0; i < bytes.size() / size; ++i) {
      if (!isFloatingPoint(plan.type)) {
        const std::uint64_t bits = random();
        std::memcpy(bytes.data() + i * size, &bits, size);
      } else if (op == ReduceOp::Prod) {
        storeElement(plan.type, bytes.data(), i, (random() & 1) != 0 ? factor(random) : -factor(random));
      } else {
        storeElement(plan.type, bytes.data(), i, unit(random));
      }
    }
  }
  return data;
}

/// Runs the plan on the host with makeSendData's data and compares every rank's recv with the closed form;
/// returns "" or "<plan> <op>: rank r: <what differs>".
inline std::string runAndCompare(const Plan& plan, ReduceOp op, std::uint32_t seed, double productSpread = 2.0) {
  const std::vector<Bytes> send = makeSendData(plan, op, seed, productSpread);
  const std::vector<Bytes> got = runPlanOnHost(plan, op, send);
  const std::vector<Bytes> want =
      hostReduceReference(plan.collective, plan.type, op, plan.nranks, plan.count, plan.root, send);
  const Tolerance tol = reduces(plan.collective)
                            ? tolerance(plan.type, op, plan.nranks, op == ReduceOp::Prod ? productSpread : 1.0)
                            : Tolerance{};
  for (std::size_t r = 0; r < want.size(); ++r) {
    if (auto mismatch = findMismatch(plan.type, tol, want[r], got[r])) {
      return planName(plan) + " " + reduceOpName(op) + ": rank " + std::to_string(r) + ": " + *mismatch;
    }
  }
  return "";
}

}  // namespace peerlink::coll
