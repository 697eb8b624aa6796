// What the transport's tests share (tests/cpu/test_net_transport.cc, tests/mpi/net_e2e.cc): every rank's send data
// made the same way on every rank, and one rank's part of a hierarchical collective run over a NetWorld.
#pragma once

#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "coll/host_reduce.hpp"
#include "net/hierarchical_run.hpp"

namespace peerlink::testing {

/// Rank `rank`'s send buffer for the call: values in [-8, 8], from a seed of the rank and count.
inline coll::Bytes sendDataOf(Collective collective, DataType type, int n, std::size_t count, int rank, int root) {
  std::mt19937_64 random(static_cast<std::uint64_t>(rank) * 7919 + count);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::size_t size = dataTypeSize(type);
  coll::Bytes bytes(sendElementsOf(collective, n, count, rank, root) * size);
  for (std::size_t i = 0; i < bytes.size() / size; ++i) coll::storeElement(type, bytes.data(), i, unit(random) * 8);
  return bytes;
}

/// Every rank's send buffer.
inline std::vector<coll::Bytes> everySend(Collective collective, DataType type, int n, std::size_t count, int root) {
  std::vector<coll::Bytes> all;
  for (int r = 0; r < n; ++r) all.push_back(sendDataOf(collective, type, n, count, r, root));
  return all;
}

/// A rank's buffers in host memory, at the sizes its RankLayout declares.
struct RankBytes {
  coll::Bytes input, output, scratch;
};

/// Runs the plan on a rank's buffers: on them as they are (host memory), or on copies elsewhere (GPU memory).
using RunOnBuffers = std::function<void(RankBytes&)>;

/// Rank `rank`'s part of `plan`: its buffers, its send data placed where the plan says, `run`, and its recv range
/// returned.
inline coll::Bytes runRankOfPlan(const coll::HierarchicalPlan& plan, int rank, const std::vector<coll::Bytes>& sends,
                                 const RunOnBuffers& run) {
  const std::size_t size = dataTypeSize(plan.plan.type);
  const coll::RankLayout& layout = plan.plan.ranks[static_cast<std::size_t>(rank)];
  RankBytes buffers{coll::Bytes(layout.inputElements * size), coll::Bytes(layout.outputElements * size),
                    coll::Bytes(layout.scratchElements * size)};
  coll::Bytes& sendBuffer = layout.send.buffer == coll::BufferKind::Input ? buffers.input : buffers.output;
  const coll::Bytes& mine = sends[static_cast<std::size_t>(rank)];
  if (!mine.empty()) std::memcpy(sendBuffer.data() + layout.send.offset * size, mine.data(), mine.size());
  run(buffers);
  const coll::Bytes& recvBuffer = layout.recv.buffer == coll::BufferKind::Input ? buffers.input : buffers.output;
  const auto begin = recvBuffer.begin() + static_cast<std::ptrdiff_t>(layout.recv.offset * size);
  return coll::Bytes(begin, begin + static_cast<std::ptrdiff_t>(layout.recvElements * size));
}

/// This rank's part of `plan` over `world` on host memory.
inline coll::Bytes runRankOfPlan(net::NetWorld& world, const coll::HierarchicalPlan& plan, ReduceOp op,
                                 const std::vector<coll::Bytes>& sends) {
  return runRankOfPlan(plan, world.rank(), sends, [&](RankBytes& b) {
    net::runHierarchical(world, plan, op, {b.input.data(), b.output.data(), b.scratch.data()});
  });
}

}  // namespace peerlink::testing
