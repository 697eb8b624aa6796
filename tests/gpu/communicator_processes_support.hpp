// What the tests of a communicator across processes share (test_communicator_processes.cc,
// test_communicator_windows.cc): the GPU probe, worlds of forked processes each creating its rank(s) of one
// communicator from the first process's unique id, and the checks every world runs -- every collective against the
// host reference, eager and captured in a graph.
//
// Fork safety: the test process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coll_lists.hpp"
#include "coll_test_support.hpp"
#include "forked_roles.hpp"
#include "peerlink/bootstrap.hpp"

namespace peerlink::testing {

struct Probe {
  int count = 0;     // GPUs
  std::string skip;  // empty when a world of processes can run
};

inline const Probe& probe() {
  static const Probe result = [] {
    Pipe pipe;
    Child child("gpu probe", [&] {
      std::string why;
      int count = cudaDevices(&why);
      count = std::min(count, 8);
      for (int a = 0; a < count && why.empty(); ++a) {
        for (int b = 0; b < count && why.empty(); ++b) {
          int can = 0;
          if (a != b && (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || can == 0)) {
            why = "GPU " + std::to_string(a) + " cannot access GPU " + std::to_string(b) + " as a peer";
          }
        }
      }
      pipe.send(std::to_string(count));
      pipe.send(why);
      return kOk;
    });
    pipe.closeWrite();
    Probe found;
    try {
      found.count = std::stoi(pipe.receive(kChildLimit));
      found.skip = pipe.receive();
    } catch (const std::exception& error) {
      found.skip = std::string("the GPU probe process failed: ") + error.what();
    }
    waitAll({&child}, 30s);
    return found;
  }();
  return result;
}

// Ranks take the GPUs round-robin; with fewer GPUs than ranks they share them (PEERLINK_COLL_SHARE_GPUS: for
// correctness only -- kernels of several processes on one GPU take turns).
#define PEERLINK_REQUIRE_PROCESS_WORLD()                     \
  do {                                                       \
    if (!probe().skip.empty()) GTEST_SKIP() << probe().skip; \
  } while (0)

inline int deviceOf(int rank) {
  return rank % probe().count;
}

inline bool sharing(int n) {
  return probe().count < n;
}

inline int fail(int rank, const std::string& what) {
  std::fprintf(stderr, "[rank %d] %s\n", rank, what.c_str());
  return kWrong;
}

// kOk when `action` throws Error(code) whose message contains `needle`.
template <typename Action>
inline int expectsError(int rank, ErrorCode code, const std::string& needle, Action action) {
  try {
    action();
  } catch (const Error& error) {
    if (error.code() == code && std::string(error.what()).find(needle) != std::string::npos) return kOk;
    return fail(rank, std::string("wrong error (") + errorCodeName(error.code()) + "): " + error.what());
  }
  return fail(rank, "no error where one was due: " + needle);
}

// A world of `processes` processes of `perProcess` ranks each: process q drives ranks q * perProcess onwards, rank r
// on GPU deviceOf(r) (sharing GPUs when the world has more ranks than the machine GPUs), with `settings` (per
// process, by its first rank: name, value) over the environment's; the first process makes the id. Each runs
// body(communicator, its first rank) and exits with its result.
using WorldBody = std::function<int(Communicator&, int rank)>;
using RankSettings = std::function<std::vector<std::pair<std::string, std::string>>(int rank)>;

inline std::vector<int> runProcesses(int processes, int perProcess, const WorldBody& body,
                                     const RankSettings& settings = nullptr, milliseconds limit = kChildLimit) {
  const int n = processes * perProcess;
  std::vector<std::unique_ptr<Pipe>> ids;
  for (int q = 0; q < processes; ++q) ids.push_back(std::make_unique<Pipe>());
  std::vector<std::unique_ptr<Child>> children;
  for (int q = 0; q < processes; ++q) {
    const int first = q * perProcess;
    const std::string role = perProcess == 1 ? "rank " + std::to_string(first)
                                             : "process " + std::to_string(q) + " (ranks " + std::to_string(first) +
                                                   "-" + std::to_string(first + perProcess - 1) + ")";
    children.push_back(std::make_unique<Child>(role, [&, q, first] {
      UniqueId id;
      if (q == 0) {
        id = makeUniqueId();
        for (int other = 1; other < processes; ++other)
          ids[static_cast<std::size_t>(other)]->send(uniqueIdToString(id));
      } else {
        id = uniqueIdFromString(ids[static_cast<std::size_t>(q)]->receive());
      }
      Params params = Params::fromEnvironment();
      params.set("PEERLINK_TIMEOUT_MS", "20000");
      params.set("PEERLINK_BOOTSTRAP_TIMEOUT_MS", "30000");
      if (sharing(n)) params.set("PEERLINK_COLL_SHARE_GPUS", "1");
      if (settings) {
        for (const auto& [name, value] : settings(first)) params.set(name, value);
      }
      std::vector<int> ranks;
      std::vector<int> devices;
      for (int r = first; r < first + perProcess; ++r) {
        ranks.push_back(r);
        devices.push_back(deviceOf(r));
      }
      Communicator comm(id, n, ranks, devices, params);
      return body(comm, first);
    }));
  }
  std::vector<Child*> raw;
  for (auto& child : children) raw.push_back(child.get());
  return waitAll(raw, limit);
}

// A world of `n` processes of one rank each (runProcesses).
inline std::vector<int> runWorld(int n, const WorldBody& body, const RankSettings& settings = nullptr,
                                 milliseconds limit = kChildLimit) {
  return runProcesses(n, 1, body, settings, limit);
}

inline void expectWorldOk(const std::vector<int>& codes) {
  for (std::size_t r = 0; r < codes.size(); ++r) {
    EXPECT_EQ(codes[r], kOk) << "rank " << r << " (exit codes: 1 wrong result, 99 exception, 100 + ErrorCode, -1 "
                             << "killed)";
  }
}

// Every collective over sizes that take every path: nothing, one element, LL lines, the windows in one chunk,
// and several chunks of the windows; each in place and out of place, rank 0 or the last rank as the root.
inline int everyCollective(Communicator& comm, int rank) {
  const int n = comm.size();
  struct TypeOp {
    DataType type;
    ReduceOp op;
  };
  const TypeOp typeOps[] = {{DataType::F32, ReduceOp::Sum},
                            {DataType::BF16, ReduceOp::Avg},
                            {DataType::I32, ReduceOp::Max},
                            {DataType::U8, ReduceOp::Min}};
  // Elements per rank: 0, 1, an odd count in LL lines, past LL, past one 64 MiB window (all-reduce: 32 MiB
  // each way).
  const std::size_t counts[] = {0, 1, 1001, 400 * 1024 + 3, std::size_t{9} << 20};
  std::uint64_t seed = 17;
  for (const Collective collective : kEveryCollective) {
    for (const TypeOp typeOp : typeOps) {
      if (!reduces(collective) && typeOp.op != ReduceOp::Sum && typeOp.type != DataType::U8) continue;
      for (std::size_t count : counts) {
        // Several window chunks for the first type only; all-gather and all-to-all carry n blocks of the count.
        if (count > (std::size_t{1} << 20) && typeOp.type != typeOps[0].type) continue;
        if (collective == Collective::AllToAll || collective == Collective::AllGather) count = count / n + count % 7;
        for (const bool inPlace : {false, true}) {
          CollCase c;
          c.collective = collective;
          c.type = typeOp.type;
          c.op = reduces(collective) ? typeOp.op : ReduceOp::Sum;
          c.count = count;
          c.root = static_cast<int>(seed % static_cast<std::uint64_t>(n));
          c.inPlace = inPlace;
          c.seed = ++seed;
          const std::string problem = runCase(comm, c);
          if (!problem.empty()) return fail(rank, problem);
        }
      }
    }
  }
  return kOk;
}

// One call captured into a graph on every rank (each process captures its own stream), replayed with new
// inputs; the communicator's counters advance inside the graph.
inline int capturedReplays(Communicator& comm, int rank) {
  const int n = comm.size();
  for (const std::size_t count : {std::size_t{1000}, std::size_t{3} << 20}) {
    CollCase c;
    c.collective = Collective::AllReduce;
    c.count = count;
    c.seed = 99 + count;
    std::vector<coll::Bytes> inputs(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      inputs[static_cast<std::size_t>(r)] = randomElements(c.type, c.op, count, c.seed + static_cast<std::uint64_t>(r));
    }
    const std::vector<RankCase> ranks = prepareCase(comm, c, inputs);
    const std::vector<Stream> streams = rankStreams(comm);
    cudaGraphExec_t exec = captureAll(comm, streams, [&] {
      callRank(comm, c, rank, ranks[static_cast<std::size_t>(rank)], streams[static_cast<std::size_t>(rank)].get());
    });
    for (int replay = 0; replay < 3; ++replay) {
      for (int r = 0; r < n; ++r) {
        inputs[static_cast<std::size_t>(r)] =
            randomElements(c.type, c.op, count, c.seed + 1000 * (replay + 1) + static_cast<std::uint64_t>(r));
      }
      uploadInput(ranks[static_cast<std::size_t>(rank)].send, inputs[static_cast<std::size_t>(rank)]);
      PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[static_cast<std::size_t>(rank)].get()));
      const std::string unfinished = finishAll(comm, streams);
      if (!unfinished.empty()) return fail(rank, unfinished);
      const auto expected = coll::hostReduceReference(c.collective, c.type, c.op, n, c.count, c.root, inputs);
      const std::string problem = checkOutputs(comm, c, ranks, expected);
      if (!problem.empty()) return fail(rank, "replay " + std::to_string(replay) + ": " + problem);
    }
    PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
  }
  return kOk;
}

}  // namespace peerlink::testing
