// Shared by the communicator's gpu tests: a communicator over every GPU of the machine (skipping with the
// reason when there are fewer than 2 or a pair lacks peer access), rank-dependent random inputs, one
// collective run on all ranks and checked against the closed-form host reference (src/coll/host_reduce.hpp),
// with poisoned guard bytes after every output.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coll/host_reduce.hpp"
#include "core/cuda_check.hpp"
#include "gpu_test_buffers.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::testing {

constexpr std::size_t kGuardBytes = 256;
constexpr unsigned char kPoison = 0xA5;
constexpr double kStreamSeconds = 60;

/// Every GPU of the process, up to 8; "" or why they cannot form a communicator.
inline std::string communicatorUnavailable(std::vector<int>* devices) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return "no CUDA GPU";
  }
  if (count < 2) return "needs 2 GPUs, found " + std::to_string(count);
  count = std::min(count, 8);
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      int can = 0;
      if (a != b && (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can)) {
        return "GPU " + std::to_string(a) + " cannot access GPU " + std::to_string(b) + " as a peer";
      }
    }
  }
  devices->clear();
  for (int d = 0; d < count; ++d) devices->push_back(d);
  return "";
}

/// Params from the environment with some values overridden (PEERLINK_ALGO, PEERLINK_TIMEOUT_MS).
inline Params paramsWith(const std::vector<std::pair<std::string, std::string>>& overrides) {
  Params params = Params::fromEnvironment();
  for (const auto& [name, value] : overrides) params.set(name, value);
  return params;
}

/// splitmix64: a fast generator for test data (~1 ns a number where mt19937_64 through
/// uniform_real_distribution took ~11 per element).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

/// Rank-dependent random elements: floats in [-1, 1) ([0.5, 1.5) for prod, so products stay normal),
/// integers over their whole range. Cheap, as a reduce-scatter case of 1 Mi elements per rank on 4 GPUs
/// draws 16 Mi of them.
inline coll::Bytes randomElements(DataType type, ReduceOp op, std::size_t count, std::uint64_t seed) {
  const std::size_t size = dataTypeSize(type);
  coll::Bytes bytes(count * size);
  SplitMix64 rng{seed};
  if (!isFloatingPoint(type)) {
    for (std::size_t i = 0; i < bytes.size(); i += 8) {
      const std::uint64_t word = rng();
      std::memcpy(bytes.data() + i, &word, std::min<std::size_t>(8, bytes.size() - i));
    }
    return bytes;
  }
  const bool prod = op == ReduceOp::Prod;
  const double low = prod ? 0.5 : -1.0;
  const double width = prod ? 1.0 : 2.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
    coll::storeElement(type, bytes.data(), i, low + width * unit);
  }
  return bytes;
}

/// One call of a collective on every rank, as a test describes it.
struct CollCase {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  std::size_t count = 0;
  int root = 0;
  bool inPlace = false;
  bool reverseOrder = false;  ///< call the ranks from the last to the first
  std::uint64_t seed = 1;
  std::size_t misalign = 0;  ///< bytes every buffer starts past a 16-byte boundary (a multiple of the type's size)

  std::string describe() const {
    return std::string(collectiveName(collective)) + " " + dataTypeName(type) + " " + reduceOpName(op) + " count " +
           std::to_string(count) + " root " + std::to_string(root) + (inPlace ? " in place" : " out of place");
  }
};

/// The buffers of one rank for a case: one allocation holding send and recv (in place: where the API
/// says they coincide), each followed by poisoned guard bytes.
struct RankCase {
  DeviceBuffer sendMemory;
  DeviceBuffer recvMemory;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t recvBytes = 0;  ///< of the output the reference describes
  unsigned char* recvGuard = nullptr;
};

/// Sets up the case's buffers on every rank this process drives: inputs uploaded, outputs poisoned.
inline std::vector<RankCase> prepareCase(const Communicator& comm, const CollCase& c,
                                         const std::vector<coll::Bytes>& inputs) {
  const int n = comm.size();
  const std::size_t size = dataTypeSize(c.type);
  std::vector<RankCase> ranks(static_cast<std::size_t>(n));
  for (const int r : comm.localRanks()) {
    RankCase& rc = ranks[static_cast<std::size_t>(r)];
    const int device = comm.device(r);
    const std::size_t sendBytes = sendElementsOf(c.collective, n, c.count, r, c.root) * size;
    rc.recvBytes = recvElementsOf(c.collective, n, c.count, r, c.root) * size;
    DeviceGuard guard(device);
    // In place: the API's pairing of send and recv inside one buffer.
    const bool inPlace =
        c.inPlace && c.collective != Collective::AllToAll && c.collective != Collective::SendRecv &&
        !((c.collective == Collective::Broadcast || c.collective == Collective::Reduce) && r != c.root);
    if (inPlace) {
      const std::size_t total = std::max(sendBytes, rc.recvBytes);
      rc.recvMemory = DeviceBuffer(device, c.misalign + total + kGuardBytes);
      auto* base = static_cast<unsigned char*>(rc.recvMemory.data()) + c.misalign;
      PEERLINK_CUDA_CHECK(cudaMemset(base, kPoison, total + kGuardBytes));
      std::size_t sendOffset = 0;
      std::size_t recvOffset = 0;
      if (c.collective == Collective::AllGather) sendOffset = c.count * size * static_cast<std::size_t>(r);
      if (c.collective == Collective::ReduceScatter) recvOffset = c.count * size * static_cast<std::size_t>(r);
      rc.send = base + sendOffset;
      rc.recv = base + recvOffset;
      rc.recvGuard = base + total;
      if (sendBytes > 0) {
        PEERLINK_CUDA_CHECK(cudaMemcpy(base + sendOffset, inputs[static_cast<std::size_t>(r)].data(), sendBytes,
                                       cudaMemcpyHostToDevice));
      }
      continue;
    }
    rc.sendMemory = DeviceBuffer(device, c.misalign + sendBytes + kGuardBytes);
    rc.recvMemory = DeviceBuffer(device, c.misalign + rc.recvBytes + kGuardBytes);
    auto* sendStart = static_cast<unsigned char*>(rc.sendMemory.data()) + c.misalign;
    auto* recvStart = static_cast<unsigned char*>(rc.recvMemory.data()) + c.misalign;
    PEERLINK_CUDA_CHECK(cudaMemset(recvStart, kPoison, rc.recvBytes + kGuardBytes));
    if (sendBytes > 0) {
      PEERLINK_CUDA_CHECK(
          cudaMemcpy(sendStart, inputs[static_cast<std::size_t>(r)].data(), sendBytes, cudaMemcpyHostToDevice));
    }
    rc.send = sendBytes > 0 ? sendStart : nullptr;
    rc.recv = rc.recvBytes > 0 ? recvStart : nullptr;
    rc.recvGuard = recvStart + rc.recvBytes;
  }
  for (const int r : comm.localRanks()) {
    DeviceGuard guard(comm.device(r));
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return ranks;
}

/// A rank's new input into its send buffer (copyToDevice).
inline void uploadInput(const void* send, const coll::Bytes& input) {
  copyToDevice(const_cast<void*>(send), input.data(), input.size());
}

/// Calls the case's collective for `rank` (send/recv: the ring shift, one group over all ranks is the
/// caller's business: see runCase).
inline void callRank(Communicator& comm, const CollCase& c, int rank, const RankCase& rc, cudaStream_t stream) {
  const int n = comm.size();
  switch (c.collective) {
    case Collective::AllReduce: comm.allReduce(rank, rc.send, rc.recv, c.count, c.type, c.op, stream); break;
    case Collective::Broadcast: comm.broadcast(rank, rc.send, rc.recv, c.count, c.type, c.root, stream); break;
    case Collective::Reduce: comm.reduce(rank, rc.send, rc.recv, c.count, c.type, c.op, c.root, stream); break;
    case Collective::AllGather: comm.allGather(rank, rc.send, rc.recv, c.count, c.type, stream); break;
    case Collective::ReduceScatter: comm.reduceScatter(rank, rc.send, rc.recv, c.count, c.type, c.op, stream); break;
    case Collective::AllToAll: comm.allToAll(rank, rc.send, rc.recv, c.count, c.type, stream); break;
    case Collective::SendRecv:
      comm.send(rank, rc.send, c.count, c.type, (rank + 1) % n, stream);
      comm.recv(rank, rc.recv, c.count, c.type, (rank + n - 1) % n, stream);
      break;
  }
}

/// Ranks 0..ranks-1 on the process's first `mostGpus` GPUs (or as many as it has) by turns, for communicators
/// whose ranks share GPUs (PEERLINK_COLL_SHARE_GPUS).
inline std::vector<int> gpusByTurns(int ranks, int mostGpus) {
  int gpus = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  gpus = std::max(1, std::min(gpus, mostGpus));
  std::vector<int> devices;
  for (int r = 0; r < ranks; ++r) devices.push_back(r % gpus);
  return devices;
}

/// Per-rank streams for a communicator, by rank (empty for ranks of other processes).
inline std::vector<Stream> rankStreams(const Communicator& comm) {
  std::vector<Stream> streams(static_cast<std::size_t>(comm.size()));
  for (const int r : comm.localRanks()) streams[static_cast<std::size_t>(r)] = Stream(comm.device(r));
  return streams;
}

/// Waits for every local rank's stream (bounded), then checks health.
inline std::string finishAll(Communicator& comm, const std::vector<Stream>& streams) {
  for (const int r : comm.localRanks()) {
    if (!finishes(streams[static_cast<std::size_t>(r)].get(), kStreamSeconds)) {
      return "rank " + std::to_string(r) + "'s stream did not finish";
    }
  }
  comm.checkHealth();
  return "";
}

/// Compares every local rank's output (and its guard bytes) with the reference; "" or the first difference.
inline std::string checkOutputs(const Communicator& comm, const CollCase& c, const std::vector<RankCase>& ranks,
                                const std::vector<coll::Bytes>& expected) {
  const coll::Tolerance tolerance = coll::tolerance(c.type, c.op, comm.size(), 1.5);
  for (const int r : comm.localRanks()) {
    const RankCase& rc = ranks[static_cast<std::size_t>(r)];
    const coll::Bytes& want = expected[static_cast<std::size_t>(r)];
    if (want.empty()) continue;
    coll::Bytes got(want.size());
    std::vector<unsigned char> guard(kGuardBytes);
    PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), rc.recv, got.size(), cudaMemcpyDeviceToHost));
    PEERLINK_CUDA_CHECK(cudaMemcpy(guard.data(), rc.recvGuard, guard.size(), cudaMemcpyDeviceToHost));
    if (const auto mismatch = coll::findMismatch(c.type, tolerance, want, got)) {
      return c.describe() + ": rank " + std::to_string(r) + ": " + *mismatch;
    }
    for (std::size_t i = 0; i < guard.size(); ++i) {
      if (guard[i] != kPoison) {
        return c.describe() + ": rank " + std::to_string(r) + ": guard byte " + std::to_string(i) +
               " after the output was overwritten";
      }
    }
  }
  return "";
}

/// Runs one case on every rank and checks it; "" when every output matches the host reference. `beforeCalls`,
/// if given, runs on the ranks' streams once the buffers are ready, before the calls (e.g. to hold a rank back).
inline std::string runCase(Communicator& comm, const CollCase& c,
                           const std::function<void(const std::vector<Stream>&)>& beforeCalls = nullptr) {
  const int n = comm.size();
  std::vector<coll::Bytes> inputs;
  for (int r = 0; r < n; ++r) {
    const std::size_t elements = sendElementsOf(c.collective, n, c.count, r, c.root);
    inputs.push_back(randomElements(c.type, c.op, elements, c.seed * 1000003u + static_cast<std::uint64_t>(r)));
  }
  const std::vector<coll::Bytes> expected =
      coll::hostReduceReference(c.collective, c.type, c.op, n, c.count, c.root, inputs);
  const std::vector<RankCase> ranks = prepareCase(comm, c, inputs);
  const std::vector<Stream> streams = rankStreams(comm);
  if (beforeCalls) beforeCalls(streams);
  const bool group = c.collective == Collective::SendRecv;
  if (group) comm.groupStart();
  std::vector<int> order = comm.localRanks();
  if (c.reverseOrder) std::reverse(order.begin(), order.end());
  for (const int r : order) {
    callRank(comm, c, r, ranks[static_cast<std::size_t>(r)], streams[static_cast<std::size_t>(r)].get());
  }
  if (group) comm.groupEnd();
  const std::string unfinished = finishAll(comm, streams);
  if (!unfinished.empty()) return c.describe() + ": " + unfinished;
  return checkOutputs(comm, c, ranks, expected);
}

/// A runCase hook: holds rank `late`'s stream (-1: none) with a 50 ms host sleep before the calls.
inline std::function<void(const std::vector<Stream>&)> lateRank(int late) {
  return [late](const std::vector<Stream>& streams) {
    if (late < 0) return;
    PEERLINK_CUDA_CHECK(cudaLaunchHostFunc(
        streams[static_cast<std::size_t>(late)].get(),
        [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, nullptr));
  };
}

/// Captures `body` (which calls the collective for every local rank on streams[r]) into one graph over the
/// local ranks: the first local rank's stream forks to the others through events and joins them back.
template <typename Fn>
cudaGraphExec_t captureAll(const Communicator& comm, const std::vector<Stream>& streams, const Fn& body) {
  const std::vector<int> local = comm.localRanks();
  const auto lead = static_cast<std::size_t>(local.front());
  Event fork(comm.device(local.front()), cudaEventDisableTiming);
  std::vector<Event> joins;
  for (const int r : local) joins.emplace_back(comm.device(r), cudaEventDisableTiming);
  PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(streams[lead].get(), cudaStreamCaptureModeGlobal));
  PEERLINK_CUDA_CHECK(cudaEventRecord(fork.get(), streams[lead].get()));
  for (std::size_t i = 1; i < local.size(); ++i) {
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[static_cast<std::size_t>(local[i])].get(), fork.get(), 0));
  }
  body();
  for (std::size_t i = 1; i < local.size(); ++i) {
    const auto r = static_cast<std::size_t>(local[i]);
    PEERLINK_CUDA_CHECK(cudaEventRecord(joins[i].get(), streams[r].get()));
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(streams[lead].get(), joins[i].get(), 0));
  }
  cudaGraph_t graph = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamEndCapture(streams[lead].get(), &graph));
  cudaGraphExec_t exec = nullptr;
  PEERLINK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PEERLINK_CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// Replays a graph of one collective several times with new inputs, with an eager call of another size
// between replays; every replay's output matches the reference.
inline void replayCase(const std::vector<int>& devices, const Params& params, CollCase c) {
  Communicator comm(devices, params);
  const int n = comm.size();
  std::vector<coll::Bytes> inputs(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    inputs[static_cast<std::size_t>(r)] =
        randomElements(c.type, c.op, sendElementsOf(c.collective, n, c.count, r, c.root), c.seed + r);
  }
  const std::vector<RankCase> ranks = prepareCase(comm, c, inputs);
  const std::vector<Stream> streams = rankStreams(comm);
  cudaGraphExec_t exec = captureAll(comm, streams, [&] {
    for (int r = n - 1; r >= 0; --r) {
      callRank(comm, c, r, ranks[static_cast<std::size_t>(r)], streams[static_cast<std::size_t>(r)].get());
    }
  });
  for (int replay = 0; replay < 6; ++replay) {
    for (int r = 0; r < n; ++r) {  // new inputs (outside the graph)
      auto& input = inputs[static_cast<std::size_t>(r)];
      input = randomElements(c.type, c.op, input.size() / dataTypeSize(c.type), c.seed + 100 * (replay + 1) + r);
      if (!input.empty()) {
        uploadInput(ranks[static_cast<std::size_t>(r)].send, input);
      }
    }
    PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[0].get()));
    ASSERT_EQ(finishAll(comm, streams), "") << "replay " << replay;
    const auto expected = coll::hostReduceReference(c.collective, c.type, c.op, n, c.count, c.root, inputs);
    ASSERT_EQ(checkOutputs(comm, c, ranks, expected), "") << "replay " << replay << " of " << c.describe();
    if (replay % 2 == 1) {  // an eager call between replays moves the counters on too
      CollCase eager = c;
      eager.count = c.count / 3 + 1;
      eager.inPlace = false;
      eager.seed = c.seed + 7 * replay;
      ASSERT_EQ(runCase(comm, eager), "") << "eager call after replay " << replay;
    }
  }
  PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
}

}  // namespace peerlink::testing

/// Skips unless the machine's GPUs can form a communicator; fills `devices`.
#define PEERLINK_REQUIRE_COMMUNICATOR(devices)                                                  \
  do {                                                                                          \
    PEERLINK_REQUIRE_GPUS(2);                                                                   \
    const std::string peerlink_why_ = ::peerlink::testing::communicatorUnavailable(&(devices)); \
    if (!peerlink_why_.empty()) GTEST_SKIP() << peerlink_why_;                                  \
  } while (0)
